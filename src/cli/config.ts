// imgc.toml: project settings, so `imgc check` / `imgc compile` need no
// arguments in a project. Parsed with @iarna/toml, validated with zod; every
// error names the file and line.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from '../util/zod.js';
import { packerVersions, targets } from '../compilers/targets.js';
import { lineOf, parseToml } from './toml.js';

const VarValues = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())], { error: "a variable's value is a string, number, boolean or list of strings" }));

export const ProjectConfig = z
  .object({
    /** The definition file, relative to imgc.toml. */
    definition: z.string().min(1).default('node-image.ts'),
    compile: z
      .object({
        target: z.enum(targets).optional(),
        /** The root of the outputs: each target writes OUT/<image>/<target>/, so targets never overwrite each other. */
        out: z.string().min(1).optional(),
        packer: z.object({ version: z.enum(packerVersions).optional() }).strict().optional(),
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
  const raw = parseToml(text, file, (message) => new ConfigError(message));
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


