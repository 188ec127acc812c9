export * from './schema.js';
export { fact, factId, describeFact, parentDir, uniqueFacts } from '../core/facts.js';
export { imageJsonSchema } from './json-schema.js';

/** Canonical JSON of the IR: what `imgc ir` prints and golden tests compare. */
export const irToJson = (ir: unknown): string => `${JSON.stringify(ir, null, 2)}\n`;
