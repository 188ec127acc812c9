// imgc.toml: project settings, so `imgc check` / `imgc compile` need no
// arguments in a project. Parsed with @iarna/toml, validated with zod; every
// error names the file and line.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { z } from '../util/zod.js';
import { targets } from '../compilers/targets.js';

// Loaded only when there is an imgc.toml to read: most runs have none.
const require = createRequire(import.meta.url);
const toml = (): typeof import('@iarna/toml') => require('@iarna/toml') as typeof import('@iarna/toml');

const VarValues = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()], { error: "a variable's value is a string, number or boolean" }));

export const ProjectConfig = z
  .object({
    /** The definition file, relative to imgc.toml. */
    definition: z.string().min(1).default('node-image.ts'),
    compile: z
      .object({
        target: z.enum(targets).optional(),
        out: z.string().min(1).optional(),
      })
      .strict()
      .default({}),
    /** Values of the definition's variables (below --var and IMGC_VAR_<NAME>). */
    vars: VarValues.default({}),
  })
  .strict();
export type ProjectConfig = z.infer<typeof ProjectConfig>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The line (1-based) where `key` is set or its table starts, for messages. */
const lineOf = (text: string, keyPath: readonly PropertyKey[]): number | undefined => {
  const lines = text.split('\n');
  const last = String(keyPath[keyPath.length - 1] ?? '');
  const table = keyPath.length > 1 ? String(keyPath[0]) : undefined;
  let inTable = table === undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    const header = /^\[([^\]]+)\]$/.exec(l);
    if (header) {
      inTable = header[1]!.trim() === table;
      if (inTable && keyPath.length === 1 && header[1]!.trim() === last) return i + 1;
      continue;
    }
    if (inTable && new RegExp(`^"?${last.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\s*=`).test(l)) return i + 1;
  }
  return undefined;
};

/** Reads DIR/imgc.toml; undefined when there is none. */
export const readProjectConfig = (dir: string): { file: string; config: ProjectConfig; lineOf?: (keyPath: readonly string[]) => number | undefined } | undefined => {
  const file = path.join(dir, 'imgc.toml');
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  let raw: unknown;
  try {
    raw = toml().parse(text);
  } catch (e) {
    const err = e as { line?: number; col?: number; message: string };
    throw new ConfigError(`${file}:${(err.line ?? 0) + 1}:${(err.col ?? 0) + 1}: ${err.message.split('\n')[0]}`);
  }
  const parsed = ProjectConfig.safeParse(raw);
  if (!parsed.success) {
    const msgs = parsed.error.issues.map((i) => {
      const line = lineOf(text, i.path);
      const keys = i.path.map(String).join('.');
      return `${file}${line ? `:${line}` : ''}: ${keys ? `${keys}: ` : ''}${i.message}`;
    });
    throw new ConfigError(msgs.join('\n'));
  }
  return { file, config: parsed.data, lineOf: (keyPath) => lineOf(text, keyPath) };
};


/**
 * A --var-file: NAME = VALUE pairs as TOML, or a JSON object (by its `.json`
 * name), like Packer's -var-file. Each value comes with its line for messages.
 */
export const readVarFile = (file: string): { name: string; value: string | number | boolean; line?: number }[] => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`--var-file ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  let raw: unknown;
  const json = file.endsWith('.json');
  try {
    raw = json ? JSON.parse(text) : toml().parse(text);
  } catch (e) {
    const err = e as { line?: number; col?: number; message: string };
    const at = json ? '' : `:${(err.line ?? 0) + 1}:${(err.col ?? 0) + 1}`;
    throw new ConfigError(`${file}${at}: ${err.message.split('\n')[0]}`);
  }
  const parsed = VarValues.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    const line = json ? undefined : lineOf(text, i.path);
    throw new ConfigError(`${file}${line ? `:${line}` : ''}: ${i.path.map(String).join('.') || 'the file'}: ${i.message}`);
  }
  return Object.entries(parsed.data).map(([name, value]) => ({ name, value, ...(json ? {} : { line: lineOf(text, [name]) }) }));
};
