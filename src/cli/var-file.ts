// --var-file FILE: variable values as TOML NAME = VALUE pairs, or a JSON
// object (by its `.json` name), like Packer's -var-file. Read without zod,
// which a check without imgc.toml never loads.
import { readFileSync } from 'node:fs';
import { UsageError } from './exit.js';
import { lineOf, parseToml } from './toml.js';

export const readVarFile = (file: string): { name: string; value: string | number | boolean; line?: number }[] => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--var-file ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  const json = file.endsWith('.json');
  let raw: unknown;
  if (!json) raw = parseToml(text, file, (message) => new UsageError(message));
  else {
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`${file}: ${(e as Error).message}`);
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new UsageError(`${file}: a var file holds NAME = VALUE pairs (a JSON object)`);
  return Object.entries(raw).map(([name, value]) => {
    const line = json ? undefined : lineOf(text, [name]);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new UsageError(`${file}${line ? `:${line}` : ''}: ${name}: a variable's value is a string, number or boolean`);
    }
    return { name, value, ...(line ? { line } : {}) };
  });
};
