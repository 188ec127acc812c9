// The one quoting module of the ansible backend: every scalar the backend
// writes into YAML is made here, so nothing else builds quoted text by hand.
//
// User data (paths, contents, commands, names, URLs…) goes through `unsafe()`:
// a YAML scalar tagged `!unsafe`, which Ansible's loader turns into an
// AnsibleUnsafeText that its templar never evaluates, so `{{ }}`, `{% %}` and
// `{# #}` reach the target verbatim. The scalar style is chosen per value:
//   - a literal block (`|`, `|-`) for multi-line text that is safe in one
//     (file contents read like the file),
//   - single quotes for short printable one-liners,
//   - otherwise double quotes with escapes, folded with escaped line breaks
//     so that no line exceeds WIDTH (yamllint's limit is 160).
// Characters YAML cannot carry raw (C1 controls, U+FEFF, U+FFFE/F, NEL and the
// Unicode line/paragraph separators YAML 1.1 treats as line breaks) and the
// invisible/bidi controls a reviewer would not see are always escaped.
//
// Compiler constants use `word()` / `str()` (checked: they never contain
// template delimiters); the one deliberate Jinja expression kind is
// `template()`.

import { conditionText, conditionVariable, type Condition } from '../../core/conditions.js';
import { displayMarkers, hasMarker, referencedIn, splitMarkers } from '../../core/variables.js';
import { escapeChar, mustEscape, notAStringWhenPlain, singleQuoted } from '../yaml-text.js';

/** A rendered YAML scalar; `render` gets where it starts and the indentation for continuation lines. */
export interface Scalar {
  readonly kind: 'scalar';
  /** The string value, for user data (the renderer scans it, e.g. for tabs). */
  readonly value?: string;
  /** The variables a user-data scalar references (see `unsafe`). */
  readonly variables?: readonly string[];
  render(at: ScalarPosition): string;
}

export interface ScalarPosition {
  /** Column (0-based) where the scalar's first character goes. */
  column: number;
  /** Indentation of continuation lines and block-scalar content. */
  indent: number;
  /** True when the scalar is a mapping value (block scalars are only used there). */
  mappingValue: boolean;
}

/** Longest line the emitter aims for; yamllint (as ansible-lint runs it) allows 160. */
export const WIDTH = 120;
const HARD_WIDTH = 160;

const TAG = '!unsafe';

const codePoints = (s: string): string[] => [...s];
const width = (s: string): number => codePoints(s).length;

/** Printable without escapes, and not a tab (tabs always go escaped). */
const rawPrintable = (s: string): boolean => codePoints(s).every((ch) => ch !== '\t' && !mustEscape(ch.codePointAt(0)!));

/** A double-quoted scalar, folded at escaped line breaks to stay within WIDTH. */
const doubleQuoted = (s: string, column: number, indent: number, oneLine = false): string => {
  const units = codePoints(s).map(escapeChar);
  const lines: string[] = [];
  let line = '"';
  let col = column + 1;
  for (let unit of units) {
    // Break before this unit if it would pass WIDTH (leaving room for `\` or `"`),
    // but never leave a line holding only the opening quote or nothing.
    if (!oneLine && col + unit.length + 1 > WIDTH && line !== '"' && line !== '') {
      lines.push(`${line}\\`);
      line = '';
      col = indent;
      // Leading white space of a continuation line is folded away: escape it.
      if (unit === ' ') unit = '\\x20';
    }
    line += unit;
    col += unit.length;
  }
  lines.push(`${line}"`);
  return lines.join(`\n${' '.repeat(indent)}`);
};

/**
 * A literal block scalar for `s`, or undefined when `s` cannot be one that
 * every consumer (libyaml, the `yaml` package, yamllint) reads back unchanged.
 */
const literalBlock = (s: string, indent: number): string | undefined => {
  if (!s.includes('\n') || !rawPrintable(s.replace(/\n/g, ''))) return undefined;
  let chomp: '' | '-';
  let body: string;
  if (s.endsWith('\n')) {
    if (s.endsWith('\n\n')) return undefined; // would need `|+`, which swallows the blank lines that follow
    chomp = '';
    body = s.slice(0, -1);
  } else {
    chomp = '-';
    body = s;
  }
  const lines = body.split('\n');
  if (lines.every((l) => l === '')) return undefined;
  let blankRun = 0;
  for (const l of lines) {
    if (/[ ]$/.test(l)) return undefined; // trailing spaces: yamllint refuses them
    if (indent + width(l) > HARD_WIDTH) return undefined;
    blankRun = l === '' ? blankRun + 1 : 0;
    if (blankRun > 2) return undefined; // yamllint's empty-lines limit
  }
  const first = lines.find((l) => l !== '')!;
  // Content starting with a space needs an explicit indentation indicator
  // (relative to the parent mapping, whose keys sit two columns left of `indent`).
  const indicator = first.startsWith(' ') ? '2' : '';
  const pad = ' '.repeat(indent);
  return [`|${indicator}${chomp}`, ...lines.map((l) => (l === '' ? '' : pad + l))].join('\n');
};

const scalarText = (s: string, at: ScalarPosition): string => {
  if (at.mappingValue) {
    const block = literalBlock(s, at.indent);
    if (block !== undefined) return block;
  }
  const oneLiner = !/[\n\r]/.test(s) && rawPrintable(s);
  if (oneLiner && at.column + width(s) + 2 + (s.match(/'/g)?.length ?? 0) <= HARD_WIDTH) return singleQuoted(s);
  return doubleQuoted(s, at.column, at.indent);
};

/**
 * User data: a `!unsafe` scalar that Ansible never templates and every YAML
 * parser reads back exactly. Text with variable references (see
 * src/core/variables.ts) is instead the one Jinja expression of user data:
 * `"{{ 'literal' ~ name ~ 'literal' }}"`, its literal parts Jinja string
 * literals (see `jinjaString`), so nothing of the user's text is evaluated.
 */
export const unsafe = (s: string): Scalar =>
  hasMarker(s)
    ? {
        kind: 'scalar',
        value: displayMarkers(s),
        variables: referencedIn(s),
        render: (at) => {
          const text = variableExpression(s);
          const oneLine = !/[\n\r]/.test(text) && rawPrintable(text) && at.column + width(text) + 2 + (text.match(/'/g)?.length ?? 0) <= HARD_WIDTH;
          return oneLine ? singleQuoted(text) : foldedExpression(s, at);
        },
      }
    : {
        kind: 'scalar',
        value: s,
        render: (at) => `${TAG} ${scalarText(s, { ...at, column: at.column + TAG.length + 1 })}`,
      };

/**
 * A Jinja expression whose value is `s`, written without a backslash: Ansible
 * doubles every backslash inside `{{ }}` before Jinja reads it (its
 * `_escape_backslashes`), so an escape such as `\\u00e9` in a Jinja string
 * literal would reach the target as six characters. Jinja also turns a raw CR
 * in its source into LF. So runs of characters that are safe raw (LF and tab
 * included) go in single-quoted literals, and every other character (quote,
 * backslash, CR and other controls, Unicode line separators, invisible
 * characters) is made by `'%c' | format(N)`.
 */
export const jinjaString = (s: string): string => jinjaParts(s).join(' ~ ');

/** In a folded expression, literal runs wider than this (as written, escapes included) are cut into concatenated literals, so that a fold never falls inside one. */
const LITERAL_PIECE = 64;

/**
 * `s` in pieces at most LITERAL_PIECE wide once escaped for a double-quoted
 * scalar (a line break is written `\n`, two columns), cut after a line break,
 * else after a `/` or space, where one is in the second half.
 */
const pieces = (s: string): string[] => {
  const chars = [...s];
  const widths = chars.map((c) => width(escapeChar(c)));
  const out: string[] = [];
  let start = 0;
  let left = widths.reduce((a, b) => a + b, 0);
  while (left > LITERAL_PIECE) {
    let end = start;
    for (let w = widths[end]!; w <= LITERAL_PIECE; w += widths[end]!) end++;
    const head = chars.slice(start, end);
    const after = (cs: string) => Math.max(...[...cs].map((c) => head.lastIndexOf(c)));
    const cut = [after('\n'), after('/ ')].find((i) => i >= head.length / 2);
    const next = cut === undefined ? end : start + cut + 1;
    out.push(chars.slice(start, next).join(''));
    for (let i = start; i < next; i++) left -= widths[i]!;
    start = next;
  }
  if (start < chars.length || !out.length) out.push(chars.slice(start).join(''));
  return out;
};

/** What may stand raw in a Jinja literal of user data: LF and tab, and anything but a quote, a backslash and what must be escaped (see jinjaString). */
const rawInLiteral = (ch: string): boolean => ch === '\n' || ch === '\t' || (ch !== "'" && ch !== '\\' && !mustEscape(ch.codePointAt(0)!));

/** The Jinja terms whose concatenation (`~`) is `s`: literals of the characters `raw` keeps, `format` for the others (see jinjaString). */
const jinjaParts = (s: string, cut = false, raw: (ch: string) => boolean = rawInLiteral): string[] => {
  const parts: string[] = [];
  let run = '';
  const flush = () => {
    for (const p of cut ? pieces(run) : [run]) parts.push(`'${p}'`);
    run = '';
  };
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (raw(ch)) {
      run += ch;
      continue;
    }
    if (run) flush();
    parts.push(`('%c' | format(${cp}))`);
  }
  if (run || !parts.length) flush();
  return parts;
};

/**
 * The Jinja expression (with its `{{ }}`) that concatenates a string's literal
 * parts and variables. Ending in `| string` keeps it a string: Ansible passes
 * a template's result that starts with `[` or `{` (or is True/False) through
 * `ast.literal_eval`, so `[] # x` would arrive as an empty list and a JSON
 * body as a dict, except for the result of one of its STRING_TYPE_FILTERS,
 * `string` among them by default.
 */
const variableTerms = (s: string, cut = false): string[] => splitMarkers(s).flatMap((p) => (typeof p === 'string' ? jinjaParts(p, cut) : [p.variable]));

/** A Jinja expression (without its `{{ }}`) whose value is `s` with its variables' values. */
export const jinjaValue = (s: string): string => `(${variableTerms(s).join(' ~ ')}) | string`;

const variableExpression = (s: string): string => `{{ ${jinjaValue(s)} }}`;

/**
 * A variable expression too long for one line, double-quoted and folded only
 * between its terms: YAML reads a line break there as the space it replaced,
 * and Jinja does not mind it, so no literal (a path, a URL) is cut in two.
 */
const foldedExpression = (s: string, at: ScalarPosition): string => {
  const terms = variableTerms(s, true).map((t) => [...t].map(escapeChar).join(''));
  const lines: string[] = [];
  let line = `"{{ (${terms[0]}`;
  let col = at.column + line.length;
  for (const term of terms.slice(1)) {
    if (col + 3 + term.length + 1 > WIDTH) {
      lines.push(`${line} ~`);
      line = term;
      col = at.indent + term.length;
    } else {
      line += ` ~ ${term}`;
      col += 3 + term.length;
    }
  }
  lines.push(`${line}) | string }}"`);
  return lines.join(`\n${' '.repeat(at.indent)}`);
};

/**
 * A label (task or play name). Ansible templates names when it prints them, and
 * ansible-lint matches `# noqa` comments to tasks by comparing names as plain
 * strings, so a name is not tagged: instead it is defused — white space runs
 * become one space and a space goes after any `{` that starts `{{`, `{%` or
 * `{#`, so no template delimiter is left. Always one line (never folded), so a
 * `# noqa` comment can follow it.
 */
export const label = (s: string): Scalar => {
  const text = defuse(displayMarkers(s));
  assertConstant(text);
  const quoted = plainSafe(text) ? text : rawPrintable(text) ? singleQuoted(text) : doubleQuoted(text, 0, 0, true);
  return { kind: 'scalar', value: text, render: () => quoted };
};

/** Text that reads back as the same string when written plain in block context (deliberately narrow). */
const plainSafe = (s: string): boolean =>
  /^[A-Za-z][A-Za-z0-9 ._/()+,=~;<>:-]*[A-Za-z0-9._/()+=~;<>-]$/.test(s) && !/: /.test(s) && !notAStringWhenPlain.test(s);

/** One line of text with no template delimiter left in it (see `label`). */
export const defuse = (s: string): string =>
  s
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/\{(?=[{%#])/g, '{ ');

const templateDelimiters = /\{\{|\{%|\{#/;

const assertConstant = (s: string): void => {
  if (templateDelimiters.test(s)) throw new Error(`internal: constant ${JSON.stringify(s)} contains a template delimiter`);
};

/** A compiler constant written plain: module choices, absolute tool paths, host names. */
export const word = (s: string): Scalar => {
  assertConstant(s);
  if (!/^[A-Za-z_/][A-Za-z0-9_./-]*$/.test(s) || notAStringWhenPlain.test(s)) throw new Error(`internal: ${JSON.stringify(s)} is not a plain word`);
  return { kind: 'scalar', render: () => s };
};

/** A validated identifier (phase and role names): plain when YAML reads it as a string, else single-quoted. */
export const ident = (s: string): Scalar => {
  assertConstant(s);
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) && !notAStringWhenPlain.test(s) ? { kind: 'scalar', render: () => s } : str(s);
};

/** A compiler constant (or a value the IR schema has validated, such as a mode) in single quotes. */
export const str = (s: string): Scalar => {
  assertConstant(s);
  if (!rawPrintable(s) || /[\n\r]/.test(s)) throw new Error(`internal: constant ${JSON.stringify(s)} is not printable`);
  return { kind: 'scalar', render: () => singleQuoted(s) };
};

/** A file mode, validated as octal digits, quoted so YAML never reads it as a number. */
export const mode = (m: string): Scalar => {
  if (!/^0?[0-7]{3,4}$/.test(m)) throw new Error(`internal: mode ${JSON.stringify(m)} is not octal`);
  return str(m.length === 3 ? `0${m}` : m);
};

/** A deliberate Jinja expression (the backend's own, never user data): `"{{ expr }}"`, folded when its line would pass yamllint's limit. */
export const template = (expr: string): Scalar => {
  if (/["\\\n]|\{\{|\}\}/.test(expr)) throw new Error(`internal: template expression ${JSON.stringify(expr)} needs no quoting`);
  const text = `{{ ${expr} }}`;
  return { kind: 'scalar', render: (at) => (at.column + width(text) + 2 <= HARD_WIDTH ? `"${text}"` : doubleQuoted(text, at.column, at.indent)) };
};

export const bool = (b: boolean): Scalar => ({ kind: 'scalar', render: () => (b ? 'true' : 'false') });

export const int = (n: number): Scalar => {
  if (!Number.isSafeInteger(n)) throw new Error(`internal: ${n} is not an integer`);
  return { kind: 'scalar', render: () => String(n) };
};

/**
 * A number as both YAML readers take it: an integer plain, anything else with
 * a decimal point and a signed exponent, since YAML 1.1 (PyYAML, as Ansible
 * reads group_vars) takes `1e+21` or `1e-7` without a point for a string.
 */
export const num = (n: number): Scalar => {
  if (Number.isSafeInteger(n)) return int(n);
  if (!Number.isFinite(n)) throw new Error(`internal: ${n} is not a finite number`);
  const text = String(n).replace(/^(-?\d+)(e)/, '$1.0$2');
  return { kind: 'scalar', render: () => text };
};

/** A YAML comment line's text: one line, no control characters, no trailing blanks. */
export const comment = (text: string): string => {
  const flat = codePoints(displayMarkers(text))
    .map((ch) => (/[\r\n\t]/.test(ch) || mustEscape(ch.codePointAt(0)!) ? ' ' : ch))
    .join('')
    .replace(/ +$/, '');
  return flat === '' ? '#' : `# ${flat}`;
};

/** A mapping key: the backend's own identifiers (and module FQCNs) only, always plain. */
export const key = (k: string): string => {
  if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(k) || notAStringWhenPlain.test(k)) throw new Error(`internal: ${JSON.stringify(k)} is not a plain key`);
  return k;
};

/** Escapes `s` for a Python regular expression (Ansible's lineinfile/replace) so it matches literally. */
export const pythonRegexLiteral = (s: string): string => s.replace(/[^A-Za-z0-9_\u0080-\u{10FFFF}]/gu, (c) => `\\${c}`);

/**
 * A Jinja string expression of constant text for a test written as a plain
 * scalar (`when:`, `that:`): every character outside a narrow safe set made by
 * `format`, so no quote, brace or delimiter reaches the template.
 */
const plainLiteral = (text: string): string => {
  const parts = jinjaParts(text, false, (ch) => /^[A-Za-z0-9 _.,:/@+=-]$/.test(ch));
  return parts.length > 1 ? `(${parts.join(' ~ ')})` : parts[0]!;
};

/**
 * A `when:` test of one condition (src/core/conditions.ts): a boolean through
 * `bool` (an extra var from `-e` is the text "true"), anything else compared
 * as text, as the shell target compares it.
 */
export const conditionExpression = (c: Condition): Scalar => {
  const name = conditionVariable(c);
  if (typeof c.equals === 'boolean') return str(c.equals !== c.negate ? `${name} | bool` : `not (${name} | bool)`);
  return str(`(${name} | string) ${c.negate ? '!=' : '=='} ${plainLiteral(conditionText(c.equals))}`);
};

/** An `assert` test that a variable's value is one of `values`: a boolean's as text in either case (`-e gpu=true`, group_vars' `true`), anything else as text. */
export const oneOfExpression = (name: string, boolean: boolean, values: readonly string[]): Scalar =>
  str(`(${name} | string${boolean ? ' | lower' : ''}) in [${values.map(plainLiteral).join(', ')}]`);
