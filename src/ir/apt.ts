// Moved to src/core/apt.ts (step kinds and verify use it); re-exported for existing importers.
export * from '../core/apt.js';
