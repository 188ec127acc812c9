// Moved to src/emit/shell/quote.ts (what renderings are written with); kept so code written before the move still compiles.
export * from '../../emit/shell/quote.js';
