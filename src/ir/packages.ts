// Moved to src/core/packages.ts (step kinds use it); re-exported for existing importers.
export * from '../core/packages.js';
