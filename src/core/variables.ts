// Variable references inside IR strings. A definition's `variable()` stands
// in a string as an opaque marker, U+E000 "var:NAME" U+E001 (Unicode
// private-use characters, which no real value holds); each backend renders a
// string with markers as its own concatenation of quoted literal parts and
// native references. The IR never holds a sensitive value: only the marker.
import { z } from '../util/zod.js';

export const MARK_OPEN = '\uE000';
export const MARK_CLOSE = '\uE001';
export const variableName = /^[a-z][a-z0-9_]*$/;

/** The marker of variable `name`. */
export const marker = (name: string): string => `${MARK_OPEN}var:${name}${MARK_CLOSE}`;

const markerRe = /\uE000var:([a-z][a-z0-9_]*)\uE001/g;

/** A string that is one reference and nothing else (a condition's variable, a package list); its name is group 1. */
export const wholeReference = /^\uE000var:([a-z][a-z0-9_]*)\uE001$/;

/** A string split into literal text and variable references, in order (empty literals dropped). */
export type Part = string | { readonly variable: string };

export const splitMarkers = (s: string): Part[] => {
  const out: Part[] = [];
  let last = 0;
  for (const m of s.matchAll(markerRe)) {
    if (m.index > last) out.push(s.slice(last, m.index));
    out.push({ variable: m[1]! });
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
};

/** Whether `s` holds a private-use marker character (a reference, or a broken one). */
export const hasMarker = (s: string): boolean => s.includes(MARK_OPEN) || s.includes(MARK_CLOSE);

/** The names of the variables `s` references. */
export const referencedIn = (s: string): string[] => [...s.matchAll(markerRe)].map((m) => m[1]!);

/** Text for people (comments, task names): each marker as `${name}`. */
export const displayMarkers = (s: string): string => s.replace(markerRe, (_, n: string) => `\${${n}}`);

/**
 * Names of the variables the image's phases reference, in first-use order.
 * One scan of the JSON text: JSON.stringify leaves the private-use marker
 * characters as they are, and `loc` (file names, not user data) is left out.
 */
export const usedVariables = (phases: unknown): string[] =>
  [...new Set(referencedIn(JSON.stringify(phases, (k, v: unknown) => (k === 'loc' ? undefined : v)) ?? ''))];

/**
 * A variable of the definition. Strings reference it by marker (above);
 * `value` is its resolved value, absent when sensitive: the IR never holds a
 * secret.
 */
export const Variable = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]*$/, 'variable names are lower-case letters, digits and "_", starting with a letter'),
    /** `list`: a list of strings (`z.array(z.string())`), which may stand only as a package list (docs/variables.md). */
    type: z.enum(['string', 'number', 'boolean', 'list']),
    description: z.string().optional(),
    sensitive: z.boolean(),
    value: z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]).optional(),
    /** A string variable's only values (a z.enum schema): the checker's variants of a condition on it are these. */
    oneOf: z.array(z.string()).min(1).optional(),
  })
  .strict()
  .refine((v) => !(v.sensitive && v.value !== undefined), { message: 'a sensitive variable has no value in the IR', path: ['value'] })
  .refine((v) => v.value === undefined || (v.type === 'list') === Array.isArray(v.value), { message: "a list variable's value is a list of strings, and only a list variable's is", path: ['value'] })
  .refine((v) => !(v.type === 'list' && v.sensitive), { message: 'a list variable is not sensitive', path: ['sensitive'] });
export type IRVariable = z.infer<typeof Variable>;

/** The IR's variables that `value` (a step, a phase, a script's steps) references. */
export const variablesIn = (ir: { readonly variables?: readonly IRVariable[] | undefined }, value: unknown): IRVariable[] => {
  const used = new Set(usedVariables(value));
  return (ir.variables ?? []).filter((v) => used.has(v.name));
};

export type VariableValue = string | number | boolean | readonly string[];

/**
 * A value as text, as a shell script reads it from IMGC_VAR_<NAME> and as it
 * replaces a marker: a list's items separated by single spaces (image-builder's
 * `extra_debs="a b"`; an item never holds white space, see src/steps/package-list.ts).
 */
export const valueText = (v: VariableValue): string => (typeof v === 'object' ? v.join(' ') : String(v));

/** A list variable's text (`valueText`) read back: its items, split at white space. */
export const listItems = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '');

/** Replaces every marker with the variable's resolved value (non-sensitive variables only). */
export const substitute = (s: string, values: ReadonlyMap<string, string | number | boolean>): string =>
  s.replace(markerRe, (m, n: string) => (values.has(n) ? String(values.get(n)) : m));

/** `value` (plain JSON) with `substitute` applied to every string but the locations (`loc`: file names, never references, as in usedVariables). */
export const substituteAll = <T>(value: T, values: ReadonlyMap<string, string | number | boolean>): T => {
  const walk = (v: unknown): unknown =>
    typeof v === 'string'
      ? substitute(v, values)
      : Array.isArray(v)
        ? v.map(walk)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'loc' ? x : walk(x)]))
          : v;
  return walk(value) as T;
};

/** The only values a variable takes, as text: a boolean's true and false, a z.enum's values; undefined for any other. */
export const allowedValues = (v: IRVariable): readonly string[] | undefined => (v.type === 'boolean' ? ['true', 'false'] : v.oneOf);

/** The environment variable a shell script reads a variable from. */
export const envName = (name: string): string => `IMGC_VAR_${name.toUpperCase()}`;
