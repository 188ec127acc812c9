// Moved to src/emit/cloud-init/quote.ts (what renderings are written with); kept so code written before the move still compiles.
export * from '../../emit/cloud-init/quote.js';
