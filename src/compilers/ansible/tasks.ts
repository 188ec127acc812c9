// Moved to src/emit/ansible/tasks.ts (what renderings are written with); kept so code written before the move still compiles.
export * from '../../emit/ansible/tasks.js';
