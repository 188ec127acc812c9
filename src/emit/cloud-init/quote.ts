// The one quoting module of the cloud-init backend: every scalar, key and
// comment written into user-data or meta-data is made here.
//
// cloud-init reads user data with PyYAML's safe loader (YAML 1.1) and never
// templates it unless its first line is `## template: jinja` (ours is always
// `#cloud-config`), so `{{ }}`, `{% %}`, `$` and backticks need no defusing:
// only YAML's own rules matter. A string is written
//   - plain, only when it is a short word no YAML 1.1 or 1.2 resolver reads as
//     anything but that string (no `:`, `#`, quotes, no yes/no/on/off/null…),
//   - in single quotes when it is one printable line,
//   - as a literal block (`|`, `|-`, `|2`…) when it is multi-line text that
//     reads back exactly (file bodies look like the file),
//   - otherwise double-quoted with escapes, folded after each `\n` so that
//     a long text keeps one source line per line of text.
// Characters YAML cannot carry raw (C0/C1 controls but tab and newline, CR,
// NEL, U+2028/9 which YAML 1.1 reads as line breaks, U+FEFF, U+FFFE/F) and the
// invisible or bidirectional controls a reviewer would not see are escaped.
//
// One more rule is cloud-init's, not YAML's: user data whose first 4096 bytes
// contain `mime-version:` (any case) goes through Python's email parser before
// anything else (user_data.convert_string), and only what that parser makes of
// it reaches the YAML loader. That text is therefore never written raw
// anywhere, so the user data always takes the plain path: in a scalar its
// colon is escaped (`\x3A`, so that string goes double-quoted), in a comment a
// space goes before the colon.
//
// The Ansible backend's quote.ts has no generic scalar function this backend
// could reuse: its user-data scalar carries Ansible's `!unsafe` tag (which
// PyYAML's safe loader refuses) and its constant scalars refuse template
// delimiters, which are ordinary text here. What both share, the tag-free
// escapes and single quoting, is ../yaml-text.ts.

import { escapeChar, mustEscape, notAStringWhenPlain, singleQuoted } from '../yaml-text.js';

/** Where a scalar goes: `indent` is the column of continuation lines and block content. */
export interface ScalarContext {
  readonly indent: number;
  /** Inside `[ ]`: one line, no block scalars, no `,[]{}` unquoted. */
  readonly flow: boolean;
}

export interface Scalar {
  readonly kind: 'scalar';
  render(at: ScalarContext): string;
}

/** cloud-init's MIME sniffing (user_data.convert_string), matched as it does: ASCII case-insensitively. */
const mimeHeader = /(mime-version):/gi;
const hasMimeHeader = (s: string): boolean => /mime-version:/i.test(s);

/** Every code point printable as is; tabs only where `tabs` (block scalars keep them exactly). */
const printable = (s: string, tabs: boolean): boolean => {
  for (const ch of s) if (!(tabs && ch === '\t') && mustEscape(ch.codePointAt(0)!)) return false;
  return true;
};


/** Plain text that every resolver reads back as this very string, in block and flow context. */
const plainSafe = (s: string): boolean => /^[A-Za-z_/][A-Za-z0-9_./+=@-]*$/.test(s) && !notAStringWhenPlain.test(s);

/** Double-quoted with escapes; in block context folded after each escaped line break. */
const doubleQuoted = (s: string, at: ScalarContext): string => {
  const chars = [...s];
  let out = '"';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    out += escapeChar(ch);
    if (ch === '\n' && !at.flow && i < chars.length - 1) {
      // An escaped line break: the break and the next line's leading blanks are
      // not part of the value, so a space that starts the next line is escaped.
      out += `\\\n${' '.repeat(at.indent)}`;
      if (chars[i + 1] === ' ') {
        out += '\\x20';
        i++;
      }
    }
  }
  return `${out}"`.replace(mimeHeader, '$1\\x3A');
};

/**
 * A literal block scalar that reads back as exactly `s`, or undefined. Clip
 * (`|`) for text ending in one newline, strip (`|-`) for text without one;
 * text ending in blank lines would need keep (`|+`), which would also keep any
 * blank line the document puts after it, so it goes double-quoted, as does
 * text whose last line is white space only (parsers disagree on it). An
 * indentation indicator (content two columns right of its parent) when the
 * first line starts with white space or is empty.
 */
const literalBlock = (s: string, at: ScalarContext): string | undefined => {
  if (at.flow || !s.includes('\n') || !printable(s.replaceAll('\n', ''), true) || hasMimeHeader(s)) return undefined;
  const body = s.endsWith('\n') ? s.slice(0, -1) : s;
  // A last line of white space only, or blank lines only, read back differently
  // in different parsers (the yaml package takes them for trailing blank lines).
  if (!/[^ \t\n]/.test(body) || /(^|\n)[ \t]*$/.test(body)) return undefined;
  const lines = body.split('\n');
  const indicator = /^[^ \t]/.test(lines[0]!) ? '' : '2';
  const pad = ' '.repeat(at.indent);
  return [`|${indicator}${s.endsWith('\n') ? '' : '-'}`, ...lines.map((l) => (l === '' ? '' : pad + l))].join('\n');
};

/** Any string (user data or the backend's own), in the style that suits it. */
export const str = (s: string): Scalar => ({
  kind: 'scalar',
  render: (at) => {
    if (plainSafe(s)) return s;
    if (!at.flow) {
      const block = literalBlock(s, at);
      if (block !== undefined) return block;
    }
    if (printable(s, false) && !hasMimeHeader(s)) return singleQuoted(s);
    return doubleQuoted(s, at);
  },
});

/** Always quoted, even where plain would do: file modes, so no reader takes them for numbers. */
export const quoted = (s: string): Scalar => ({
  kind: 'scalar',
  render: (at) => (printable(s, false) && !hasMimeHeader(s) ? singleQuoted(s) : doubleQuoted(s, { ...at, flow: true })),
});

/** A file mode, validated octal, as cloud-init's write_files reads it: a quoted string of 4 digits. */
export const mode = (m: string): Scalar => {
  if (!/^0?[0-7]{3,4}$/.test(m)) throw new Error(`internal: mode ${JSON.stringify(m)} is not octal`);
  return quoted(normalMode(m));
};

/** "644", "0644" and "00644" all become "0644"; "4755" stays. */
export const normalMode = (m: string): string => parseInt(m, 8).toString(8).padStart(4, '0');

export const int = (n: number): Scalar => {
  if (!Number.isSafeInteger(n)) throw new Error(`internal: ${n} is not an integer`);
  return { kind: 'scalar', render: () => String(n) };
};

export const bool = (b: boolean): Scalar => ({ kind: 'scalar', render: () => (b ? 'true' : 'false') });

/** A mapping key: the backend's own names (cloud-config module keys), always plain. */
export const key = (k: string): string => {
  if (!/^[a-z_][a-z0-9_-]*$/.test(k) || notAStringWhenPlain.test(k)) throw new Error(`internal: ${JSON.stringify(k)} is not a plain key`);
  return k;
};

/**
 * The text of a `#` comment line: one line (breaks and controls become
 * spaces), no trailing blanks, and no `mime-version:` (see the header).
 */
export const comment = (text: string): string => {
  const flat = [...text]
    .map((ch) => (ch === '\t' || mustEscape(ch.codePointAt(0)!) ? ' ' : ch))
    .join('')
    .replace(mimeHeader, '$1 :')
    .replace(/ +$/, '');
  return flat === '' ? '#' : `# ${flat}`;
};

/** JSON text of a value: the bodies of webhooks and events. */
export const json = (value: unknown): string => JSON.stringify(value);
