// The IR's JSON Schema as a consumer compiles it: ajv for draft 2020-12, with
// the one string format the schema uses ('uri', from zod's .url()), checked as
// zod checks it, by the WHATWG URL parser; without it, ajv skips the format.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Ajv2020 from 'ajv/dist/2020.js';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
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

/**
 * SARIF 2.1.0's published schema (draft-04) as a validator. Its `language`
 * pattern is invalid under the `u` flag, so patterns compile as plain regexps.
 */
export const sarifValidator = (): ValidateFunction => {
  const schema = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8')) as object;
  const ajv = new AjvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats.default(ajv);
  return ajv.compile(schema);
};
