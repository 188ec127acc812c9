// Moved to src/emit/ansible/packages.ts; kept so code written before the move still compiles.
export * from '../../emit/ansible/packages.js';
