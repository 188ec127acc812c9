// Moved to src/core (every step kind and quoting module uses them); re-exported for existing importers.
export * from '../core/variables.js';
