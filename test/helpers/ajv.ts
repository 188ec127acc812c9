// The IR's JSON Schema as a consumer compiles it: ajv for draft 2020-12, with
// the one string format the schema uses ('uri', from zod's .url()), checked as
// zod checks it, by the WHATWG URL parser; without it, ajv skips the format.
import Ajv2020 from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

const isUrl = (s: string): boolean => {
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
};

export const compileImageSchema = (schema: object): ValidateFunction => {
  const ajv = new Ajv2020.default({ allErrors: true, strict: false });
  ajv.addFormat('uri', isUrl);
  return ajv.compile(schema);
};
