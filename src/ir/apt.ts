// Moved to src/core/apt.ts (the aptRepository kind and verify use it); re-exported for existing importers.
export * from '../core/apt.js';
