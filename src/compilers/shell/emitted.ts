// Moved to src/emit/shell/emitted.ts (what renderings are written with); kept so code written before the move still compiles.
export * from '../../emit/shell/emitted.js';
