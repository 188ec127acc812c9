// Values no backend can carry are refused with a diagnostic at the step that
// holds them, instead of being mangled: NUL and the other C0 control
// characters except tab, newline and carriage return, DEL, and lone UTF-16
// surrogates (a JavaScript string may hold one; UTF-8, and so every file a
// backend writes, cannot). `imgc check` reports them; every compiler refuses
// to run on them.
import { diagnostic, type Diagnostic } from './diagnostic.js';
import type { Image, SourceLocation } from '../ir/schema.js';
import { hasMarker, MARK_CLOSE, MARK_OPEN } from '../core/variables.js';
import { variableDiagnostics } from './variables.js';

// eslint-disable-next-line no-control-regex
const forbidden = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// The three in one pattern: every string of the IR is tested.
const notPlain = new RegExp(`${forbidden.source}|${loneSurrogate.source}|[${MARK_OPEN}${MARK_CLOSE}]`);

/**
 * Whether every backend carries `s` as a literal: no refused control
 * character, no lone surrogate, no variable-marker character (U+E000/U+E001
 * stand only in references, see src/core/variables.ts).
 */
export const isPlainText = (s: string): boolean => !notPlain.test(s);

const hex = (c: string) => c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');

const walk = (value: unknown, at: string, loc: SourceLocation | undefined, out: Diagnostic[]): void => {
  if (typeof value === 'string') {
    if (isPlainText(value)) return;
    const m = forbidden.exec(value);
    if (m) out.push(diagnostic('IMGC2001', `${at} contains the control character U+${hex(m[0])}, which no backend can carry safely`, { loc, hint: 'remove it from the value' }));
    const s = loneSurrogate.exec(value);
    if (s) out.push(diagnostic('IMGC2001', `${at} contains a lone UTF-16 surrogate (U+${hex(s[0])}), which has no UTF-8 encoding`, { loc, hint: 'remove it from the value, or complete the surrogate pair' }));
    return;
  }
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${at}[${i}]`, loc, out));
  else if (typeof value === 'object' && value !== null) {
    const own = (value as { loc?: SourceLocation }).loc ?? loc;
    for (const [k, v] of Object.entries(value)) if (k !== 'loc') walk(v, at ? `${at}.${k}` : k, own, out);
  }
};

// What a scan of the IR's strings found: a character no backend carries, a variable marker.
const UNREPRESENTABLE = 1;
const MARKER = 2;
const found = (s: string): number => (isPlainText(s) ? 0 : forbidden.test(s) || loneSurrogate.test(s) ? UNREPRESENTABLE | (hasMarker(s) ? MARKER : 0) : MARKER);

/**
 * What every string in `value`, keys included, holds, in one pass that names no field: the walk
 * below (which names them) runs only for an unrepresentable string, the variable references' check
 * only for a marker. A definition with variables but no bad string is walked once.
 */
const scan = (value: unknown): number => {
  if (typeof value === 'string') return found(value);
  if (typeof value !== 'object' || value === null) return 0;
  let seen = 0;
  if (Array.isArray(value)) for (const v of value) seen |= scan(v);
  else for (const k of Object.keys(value)) seen |= found(k) | scan((value as Record<string, unknown>)[k]);
  return seen;
};

/** A diagnostic for every unrepresentable string in the IR, and every misplaced or undeclared variable reference. */
export const unrepresentable = (ir: Image): Diagnostic[] => {
  const seen = scan(ir);
  const out: Diagnostic[] = [];
  if (seen & UNREPRESENTABLE) walk(ir, '', undefined, out);
  if (seen & MARKER) out.push(...variableDiagnostics(ir));
  return out;
};
