export * from './schema.js';
export * from './facts.js';
export { imageJsonSchema } from './json-schema.js';

/** Canonical JSON of the IR: what `imgc ir` prints and golden tests compare. */
export const irToJson = (ir: unknown): string => `${JSON.stringify(ir, null, 2)}\n`;
