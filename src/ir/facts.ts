// Moved to src/core (every step kind uses them); re-exported for existing importers.
export { fact, factId, describeFact, parentDir, uniqueFacts } from '../core/facts.js';
