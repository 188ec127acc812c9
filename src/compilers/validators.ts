// Moved to src/emit/validators.ts; kept so code written before the move still compiles.
export * from '../emit/validators.js';
