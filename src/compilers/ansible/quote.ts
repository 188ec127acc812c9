// Moved to src/emit/ansible/quote.ts (what renderings are written with); kept so code written before the move still compiles.
export * from '../../emit/ansible/quote.js';
