// imgc.toml: project settings, so `imgc check` / `imgc compile` need no
// arguments in a project. Parsed with @iarna/toml, validated with zod; every
// error names the file and line.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { z } from '../util/zod.js';
import { targets } from '../compilers/targets.js';
import { lineOf } from './toml-lines.js';

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


