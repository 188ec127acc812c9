// Moved to src/emit/yaml-text.ts; kept so code written before the move still compiles.
export * from '../emit/yaml-text.js';
