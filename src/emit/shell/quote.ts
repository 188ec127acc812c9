// The shell backend's only quoting module. Every value from the IR that lands
// in an emitted script goes through one of these functions; nothing else in
// the backend builds a quoted string.
//
// POSIX single quotes carry every byte literally except the single quote
// itself, which is written as '\'' (close, escaped quote, reopen). So a value
// (any string without NUL: quotes, $, backticks, ${}, newlines, backslashes,
// unicode) is always one word that the shell reads back byte for byte. Values
// are never put in double quotes, heredocs or `echo`; file bodies are written
// with `printf '%s' WORD`, which adds nothing (no trailing newline).

import { allowedValues, displayMarkers, envName, hasMarker, splitMarkers, valueText, type IRVariable } from '../../core/variables.js';
import { conditionText, type Condition } from '../../core/conditions.js';

/** Characters that mean nothing to the shell anywhere in a word (no glob, tilde, `=`, space, quote). */
const bare = /^[A-Za-z0-9_@%+:,./-]+$/;

/** One POSIX shell word for `value` taken as it is (no variable reference in it): bare when safe, else single-quoted. */
export const literalWord = (value: string): string => (bare.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

/**
 * One POSIX shell word the shell reads back as exactly `value`: bare when that
 * is safe, else single-quoted. Variable references in `value` (see
 * src/core/variables.ts) become `"${IMGC_VAR_NAME}"` between the quoted literal
 * parts: the word reads back as the text with each variable's value in place.
 */
export const word = (value: string): string =>
  hasMarker(value) ? splitMarkers(value).map((p) => (typeof p === 'string' ? literalWord(p) : `"\${${envName(p.variable)}}"`)).join('') : literalWord(value);

/** A test that holds when every condition does: the variable's value compared as text (`[ "${IMGC_VAR_GPU}" = true ]`). */
export const conditionTest = (cs: readonly Condition[]): string =>
  cs.map((c) => `[ ${word(c.variable)} ${c.negate ? '!=' : '='} ${literalWord(conditionText(c.equals))} ]`).join(' && ');

/**
 * The lines after `set -eu` of a script that uses variables: a non-sensitive
 * variable defaults to its value at compile time; a sensitive one must be in
 * the environment (its value is never written here). A list's value is its
 * items separated by spaces (`extra_debs="a b"`, as image-builder takes it).
 */
export const variablePrologue = (vars: readonly IRVariable[]): string[] =>
  vars.length
    ? [
        '# Variables: the environment overrides the values given at compile time; a sensitive',
        '# variable has none here and must be set.',
        ...vars.map((v) =>
          v.sensitive
            ? `: "\${${envName(v.name)}:?set ${envName(v.name)} (sensitive variable ${v.name})}"`
            : v.type === 'list'
              ? // Set but empty is an empty list: `-`, not `:-`.
                `${envName(v.name)}=\${${envName(v.name)}-${literalWord(valueText(v.value ?? []))}}`
              : `${envName(v.name)}=\${${envName(v.name)}:-${literalWord(String(v.value))}}`,
        ),
        ...vars.flatMap(oneOfCheck),
      ]
    : [];

/**
 * A boolean's or a z.enum's value from the environment checked before any
 * step: a condition compares it as text, so `yes` or a misspelt value would
 * otherwise silently take the other branch.
 */
const oneOfCheck = (v: IRVariable): string[] => {
  const values = allowedValues(v);
  if (!values) return [];
  const name = envName(v.name);
  const allowed = values.join(', ');
  return [
    `case \${${name}} in`,
    `  ${values.map(literalWord).join(' | ')}) ;;`,
    `  *) printf '%s\\n' ${literalWord(`imgc: ${name} is none of: ${allowed} (variable ${v.name})`)} >&2; exit 2 ;;`,
    'esac',
  ];
};

/** Several words, separated by spaces. */
export const words = (values: readonly string[]): string => values.map(word).join(' ');

/**
 * A `# ...` comment line. Comments end at a newline, so line breaks in `text`
 * (a description, a file name) become spaces: text never escapes into code.
 */
export const comment = (text: string): string => `# ${displayMarkers(text).replace(/[\r\n]+/g, ' ')}`.trimEnd();

/** JSON text of a value (a JSON string is always valid JSON, whatever it holds); wrap it in `word` to emit it. */
export const json = (value: unknown): string => JSON.stringify(value);

/**
 * shellcheck flags `$` and backticks inside single quotes (SC2016) as a likely
 * mistake; in values every backend quotes they are meant literally. The line
 * goes before the command that holds them.
 */
export const LITERAL_NOTE = '# shellcheck disable=SC2016 # $ and ` in these values are literal';

/** Whether any string in `value` (a step, say) holds `$` or a backtick, which single quotes keep literal. */
export const hasExpansionChars = (value: unknown): boolean =>
  typeof value === 'string'
    ? /[$`]/.test(value)
    : Array.isArray(value)
      ? value.some(hasExpansionChars)
      : typeof value === 'object' && value !== null && Object.entries(value).some(([k, v]) => k !== 'loc' && hasExpansionChars(v));
