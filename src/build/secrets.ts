// Variable values during `imgc build`. The compiled scripts hold a
// non-sensitive variable's compile-time value as a default and none for a
// sensitive one; the build gives every variable a phase uses in the
// environment of the phase's commands (IMGC_VAR_<NAME>, never on a command
// line), and the ansible target's sensitive ones as a mode-0600 extra-vars
// file outside the root. Sensitive values are masked in everything the build
// writes or prints (logs, the terminal, build.json); docs/build-faults.md says
// what else keeps them out of the cache.
import type { Image } from '../ir/schema.js';
import { runWith } from '../core/conditions.js';
import { envName, valueText, variablesIn } from '../core/variables.js';

/** The values of the image's sensitive variables, by name (the IR never holds them). */
export type SensitiveValues = ReadonlyMap<string, string | number | boolean>;

export const MASK = '********';

const hidden = new Set<string>();

/** From now on, `redact` masks these values (this process builds one image). */
export const hideValues = (values: SensitiveValues): void => {
  for (const v of values.values()) if (String(v) !== '') hidden.add(String(v));
};

/** `text` with every sensitive value masked. Longest first, so a value containing another is masked whole. */
export const redact = (text: string): string => {
  if (!hidden.size) return text;
  let out = text;
  for (const v of [...hidden].sort((a, b) => b.length - a.length)) if (out.includes(v)) out = out.split(v).join(MASK);
  return out;
};

/** The variables `value` (a phase, its hooks) references that are sensitive. */
export const sensitiveIn = (ir: Image, value: unknown): string[] => variablesIn(ir, value).filter((v) => v.sensitive).map((v) => v.name);

/**
 * IMGC_VAR_<NAME> for every variable `value` references: the resolved value
 * of a non-sensitive one (so the command line's --var wins over a stray
 * IMGC_VAR_ in the caller's environment), the given value of a sensitive one.
 */
export const variableEnv = (ir: Image, value: unknown, sensitive: SensitiveValues): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const v of variablesIn(ir, value)) {
    const given = v.sensitive ? sensitive.get(v.name) : v.value;
    if (given !== undefined) env[envName(v.name)] = String(given);
  }
  return env;
};

/** Names of the sensitive variables the image uses that have no value: the build cannot start without them. */
export const missingSensitive = (ir: Image, sensitive: SensitiveValues): string[] =>
  (ir.variables ?? []).filter((v) => v.sensitive && !sensitive.has(v.name)).map((v) => v.name);

/** What to tell a user who gave no value for the sensitive variables `unset`: every way to give one. */
export const missingSensitiveMessage = (unset: readonly string[]): string =>
  `sensitive variable${unset.length > 1 ? 's' : ''} ${unset.join(', ')} ha${unset.length > 1 ? 've' : 's'} no value: pass ${unset.map((n) => `--var ${n}=VALUE`).join(' ')}, set ${unset.map((n) => `IMGC_VAR_${n.toUpperCase()}`).join(', ')} or add ${unset.length > 1 ? 'them' : 'it'} to imgc.toml's [vars]`;

/**
 * The image with every variable reference replaced by its value, sensitive
 * ones included: what the built root must hold, for verifying it (in memory
 * only; verify's messages give sizes, never contents).
 */
export const withValues = (ir: Image, sensitive: SensitiveValues): Image => runWith(ir, variableValues(ir, sensitive));

/** Every variable's value: the IR's for the plain ones, `sensitive`'s for the others. */
export const variableValues = (ir: Image, sensitive: SensitiveValues): Map<string, string | number | boolean> => {
  const values = new Map<string, string | number | boolean>(sensitive);
  for (const v of ir.variables ?? []) if (!v.sensitive && v.value !== undefined) values.set(v.name, valueText(v.value));
  return values;
};
