// The packer backend's only quoting module. Every string that reaches the
// template, in HCL native syntax (.pkr.hcl) or HCL JSON syntax (.pkr.json),
// goes through here.
//
// HCL strings are templates in both syntaxes: `${` starts an interpolation and
// `%{` a directive; `$${` and `%%{` are the escapes for the literal text. In
// native syntax the usual backslash escapes apply on top (`\\`, `\"`, `\n`,
// `\r`, `\t`, `\uNNNN`, `\UNNNNNNNN`); in JSON syntax JSON's own escapes do.
// Heredocs are not used: a quoted string can carry every value a heredoc can,
// with fewer rules.
//
// Two limits are HCL's, not ours, so they are refused rather than mangled:
// - every string HCL (and cty, Packer's value model) produces is normalized to
//   Unicode NFC, so a value that is not in NFC cannot come out as written;
// - a lone UTF-16 surrogate has no UTF-8 encoding.
import { displayMarkers, hasMarker, splitMarkers } from '../../core/variables.js';

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `s` cannot be carried by an HCL string exactly, or undefined if it can. */
export const hclUnrepresentable = (s: string): string | undefined => {
  // eslint-disable-next-line no-control-regex
  const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.exec(s);
  if (control) return `the control character U+${hex(control[0].codePointAt(0) ?? 0)}`;
  if (loneSurrogate.test(s)) return 'a lone UTF-16 surrogate, which has no UTF-8 encoding';
  if (s.normalize('NFC') !== s) return 'text that is not in Unicode NFC form (HCL normalizes every string to NFC, so it would change)';
  if (goComposes(s)) return 'a character followed by a combining mark that Go\'s NFC (which HCL uses) wrongly merges with it';
  return undefined;
};

/**
 * Go's golang.org/x/text/unicode/norm looks compositions up by the low 16 bits
 * of both code points, so an astral character followed by a mark composes as
 * if it were its BMP namesake: U+E0041 U+0323 comes back from Packer (and from
 * hcl2json) as U+1EA0 "Ạ". Such a pair, whichever side is astral, is refused.
 */
const goComposes = (s: string): boolean => {
  const cps = [...s].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < cps.length; i++) {
    const starter = cps[i] ?? 0;
    for (let j = i + 1; j < cps.length && combining.test(String.fromCodePoint(cps[j] ?? 0)); j++) {
      const mark = cps[j] ?? 0;
      if (starter <= 0xffff && mark <= 0xffff) continue;
      if ((String.fromCharCode(starter & 0xffff) + String.fromCharCode(mark & 0xffff)).normalize('NFC').length === 1) return true;
    }
  }
  return false;
};

/** Thrown when a caller skipped the hclUnrepresentable check. */
export class UnrepresentableString extends Error {
  constructor(readonly value: string, readonly reason: string) {
    super(`cannot write ${JSON.stringify(value)} as an HCL string: it contains ${reason}`);
    this.name = 'UnrepresentableString';
  }
}

const check = (s: string): void => {
  const reason = hclUnrepresentable(s);
  if (reason) throw new UnrepresentableString(s, reason);
};

const hex = (n: number, width = 4): string => n.toString(16).toUpperCase().padStart(width, '0');

// Characters a reviewer cannot see or that reorder the text around them
// (other controls, format characters such as bidi overrides and zero-width
// joiners, line/paragraph separators, non-ASCII spaces, private use,
// unassigned): written as escapes so the template shows what it holds.
const invisible = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]|[^\P{Zs} ]/u;

/** `$` or `%` directly before `{` doubles, so the text stays literal. */
const escapeTemplateMarkers = (s: string): string => s.replace(/([$%])(?=\{)/g, '$1$1');

// A combining mark right after an escape would fuse with the escape's last
// letter on screen (`\n` + U+0301 shows as `\ń`), and any tool that
// normalizes the file to NFC would turn it into an invalid escape: a mark
// there is written as an escape itself. (HCL itself reads it correctly.)
const combining = /\p{M}/u;

const nativeLiteral = (s: string): string => {
  let out = '';
  let afterEscape = false;
  for (const ch of escapeTemplateMarkers(s)) {
    const cp = ch.codePointAt(0) ?? 0;
    let esc: string | undefined;
    if (ch === '\\') esc = '\\\\';
    else if (ch === '"') esc = '\\"';
    else if (ch === '\n') esc = '\\n';
    else if (ch === '\r') esc = '\\r';
    else if (ch === '\t') esc = '\\t';
    else if (invisible.test(ch) || (afterEscape && combining.test(ch))) esc = cp > 0xffff ? `\\U${hex(cp, 8)}` : `\\u${hex(cp)}`;
    out += esc ?? ch;
    afterEscape = esc !== undefined;
  }
  return out;
};

/** A quoted HCL native-syntax string whose value is exactly `s`. */
export const hclString = (s: string): string => {
  if (hasMarker(s)) return hclTemplate(variableParts(s));
  check(s);
  return `"${nativeLiteral(s)}"`;
};

/**
 * A string with variable references (src/core/variables.ts) as template parts:
 * each reference is `${var.NAME}`, the variable block of the same name.
 */
export const variableParts = (s: string): TemplatePart[] => splitMarkers(s).map((p) => (typeof p === 'string' ? p : { expr: `var.${p.variable}` }));

/** A part of a template: literal text, or an expression interpolated with `${…}`. */
export type TemplatePart = string | { readonly expr: string };

// Interpolated expressions are written by this backend, never taken from the
// definition: references such as `var.qemu_iso_url` or `path.root`.
const safeExpr = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$/;

// …and the function calls it writes: the variables as one JSON object (see
// jsonencodeVariables), and a variable (a list as its items joined by spaces),
// path.root or that object in base64 (see base64Of); a list variable's
// validation (see allMatch) and a string variable's values (see oneOf).
const assignment = '[a-z][a-z0-9_]* = var\\.[a-z][a-z0-9_]*';
const json = `jsonencode\\(\\{ ${assignment}(, ${assignment})* \\}\\)`;
// A string literal without quote, backslash, control character or template sequence (`${`, `%{`).
const plain = '(?:[^"\\\\$%\\x00-\\x1f]|[$%](?!\\{))*';
/** The build's start, UTC, as YYYYMMDDhhmmss: the suffix of names that must be unique per build (an AMI's). */
export const BUILD_TIME = 'formatdate("YYYYMMDDhhmmss", timestamp())';
const safeCall = new RegExp(
  `^${BUILD_TIME.replace(/[()]/g, '\\$&')}$|^${json}$|^base64encode\\((var\\.[a-z][a-z0-9_]*|join\\(" ", var\\.[a-z][a-z0-9_]*\\)|path\\.root|${json})\\)$` +
    `|^length\\(\\[for p in var\\.(?<list>[a-z][a-z0-9_]*) : p if can\\(regex\\("${plain}", p\\)\\)\\]\\) == length\\(var\\.\\k<list>\\)$` +
    `|^contains\\(\\["${plain}"(, "${plain}")*\\], var\\.[a-z][a-z0-9_]*\\)$`,
);
const plainLiteral = new RegExp(`^${plain}$`);

/**
 * The condition of a list variable's validation block: every item matches
 * `pattern` (`alltrue` and `regexall` are newer than some Packer releases that
 * have `can` and `regex`; no unary `!`, which packer fmt spaces differently
 * from release to release).
 */
export const allMatch = (name: string, pattern: RegExp): string =>
  checkExpr(`length([for p in var.${name} : p if can(regex(${JSON.stringify(pattern.source)}, p))]) == length(var.${name})`);

/**
 * The condition of a string variable's validation block: its value is one of
 * `values`; undefined when a value cannot be written as a plain HCL string
 * (a quote, a backslash, a control character, `${` or `%{`), which the scripts
 * and plays then check alone.
 */
export const oneOf = (name: string, values: readonly string[]): string | undefined =>
  values.every((v) => plainLiteral.test(v)) ? checkExpr(`contains([${values.map((v) => `"${v}"`).join(', ')}], var.${name})`) : undefined;

/**
 * `base64encode(REF)` for `var.NAME`, `path.root` or jsonencodeVariables' object: a value Packer's own
 * `{{ }}` template engine, which renders provisioner strings (more than once),
 * cannot change: base64 text holds no `{{`.
 */
export const base64Of = (ref: string): string => checkExpr(`base64encode(${ref})`);

/** `jsonencode({ name = var.name, … })` for variable names (src/core/variables.ts `variableName`). */
export const jsonencodeVariables = (names: readonly string[]): string => checkExpr(`jsonencode({ ${names.map((n) => `${n} = var.${n}`).join(', ')} })`);

const checkExpr = (expr: string): string => {
  if (!safeExpr.test(expr) && !safeCall.test(expr)) throw new Error(`internal: '${expr}' is not a reference this backend interpolates`);
  return expr;
};

/** Literal text before an interpolation must not end in `$`/`%`, which would turn `${` into an escape: the run of them is interpolated too. */
const templateBody = (parts: readonly TemplatePart[], literal: (s: string, atStart: boolean) => string, marker: (c: string) => string, exprText = (e: string) => e): string =>
  parts
    .map((p, i) => {
      if (typeof p !== 'string') return `\${${exprText(checkExpr(p.expr))}}`;
      check(p);
      const next = parts[i + 1];
      const m = /[$%]+$/.exec(p);
      if (next !== undefined && typeof next !== 'string' && m) return literal(p.slice(0, -m[0].length), i === 0) + marker(m[0]);
      return literal(p, i === 0);
    })
    .join('');

/** A quoted HCL native-syntax template, e.g. `"${path.root}/shell/build.sh"`. */
export const hclTemplate = (parts: readonly TemplatePart[]): string =>
  `"${templateBody(parts, nativeLiteral, (c) => `\${"${c}"}`)}"`;

/** The HCL JSON-syntax form of an interpolated reference, e.g. `"${var.x}"`. */
export const jsonReference = (expr: string): string => JSON.stringify(`\${${checkExpr(expr)}}`);

/**
 * JSON string text (no quotes); the same escaping rules as nativeLiteral, in
 * JSON's escapes. Packer 1.6.6 reads a JSON string as a template of its own,
 * but drops a byte order mark at its very start, and leaves every `$${`/`%%{`
 * after a carriage return (one not followed by a line feed) undone. Such a
 * byte order mark, and every carriage return, is written as the interpolation
 * of a native-syntax string holding it: `${"\r"}`.
 */
const jsonLiteralText = (s: string, atStart = true): string => {
  let out = '';
  let afterEscape = false;
  let first = atStart;
  for (const ch of escapeTemplateMarkers(s)) {
    let esc: string | undefined;
    if (first && ch === '\ufeff') esc = '${\\"\\\\uFEFF\\"}';
    else if (ch === '\r') {
      // A literal `$` or `%` right before `${` would make it the escape `$${`.
      const m = /[$%]+$/.exec(out);
      if (m) out = `${out.slice(0, -m[0].length)}\${\\"${m[0]}\\"}`;
      esc = '${\\"\\\\r\\"}';
    } else if (ch === '\\') esc = '\\\\';
    else if (ch === '"') esc = '\\"';
    else if (ch === '\n') esc = '\\n';
    else if (ch === '\t') esc = '\\t';
    else if (invisible.test(ch) || (afterEscape && combining.test(ch))) esc = utf16Escapes(ch);
    out += esc ?? ch;
    afterEscape = esc !== undefined;
    first = false;
  }
  return out;
};

const utf16Escapes = (ch: string): string => {
  let out = '';
  for (let i = 0; i < ch.length; i++) out += `\\u${hex(ch.charCodeAt(i)).toLowerCase()}`;
  return out;
};

/** A JSON string (with quotes) whose value, read by HCL JSON syntax, is exactly `s`. */
export const jsonString = (s: string): string => {
  if (hasMarker(s)) return jsonTemplate(variableParts(s));
  check(s);
  return `"${jsonLiteralText(s)}"`;
};

/** The HCL JSON-syntax template for `parts`, as a JSON string with quotes. */
export const jsonTemplate = (parts: readonly TemplatePart[]): string =>
  // An expression's own quotes (`join(" ", var.x)`) JSON-escaped: the JSON string is read before the template.
  `"${templateBody(parts, jsonLiteralText, (c) => `\${\\"${c}\\"}`, (e) => JSON.stringify(e).slice(1, -1))}"`;

/**
 * How a template-literal value reads in HCL JSON syntax (the string before
 * JSON encoding): `${` and `%{` doubled. `@cdktf/hcl2json` reports literal
 * strings in this form, so the tests compare its output with this.
 */
export const jsonTemplateText = (s: string): string => escapeTemplateMarkers(s);

/**
 * Text for a `#` comment: one line, nothing invisible. Comments are not values;
 * they only have to stay comments (no line break may end them early).
 */
export const hclCommentText = (s: string): string => {
  let out = '';
  for (const ch of displayMarkers(s)) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '\n' || ch === '\r' || ch === '\t') out += ' ';
    else if (invisible.test(ch) || (cp >= 0xd800 && cp <= 0xdfff)) out += `\\u{${hex(cp)}}`;
    else out += ch;
  }
  return out;
};

/** A `"//"` comment value in HCL JSON syntax: a JSON string HCL ignores. */
export const jsonComment = (s: string): string => JSON.stringify(hclCommentText(s).trimEnd());

/** An HCL identifier: attribute names, map keys written bare, variable names. */
export const isHclIdentifier = (s: string): boolean => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s);
