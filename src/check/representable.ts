// Values no backend can carry (NUL, other C0 control characters except tab,
// newline and carriage return) are refused with a diagnostic at the step that
// holds them, instead of being mangled. `imgc check` reports them; every
// compiler refuses to run on them.
import { diagnostic, type Diagnostic } from './diagnostic.js';
import type { Image, SourceLocation } from '../ir/schema.js';

// eslint-disable-next-line no-control-regex
const forbidden = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

const walk = (value: unknown, at: string, loc: SourceLocation | undefined, out: Diagnostic[]): void => {
  if (typeof value === 'string') {
    const m = forbidden.exec(value);
    if (m) {
      const code = m[0].charCodeAt(0).toString(16).padStart(4, '0');
      out.push(diagnostic('IMGC2001', `${at} contains the control character U+${code.toUpperCase()}, which no backend can carry safely`, { loc, hint: 'remove it from the value' }));
    }
    return;
  }
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${at}[${i}]`, loc, out));
  else if (typeof value === 'object' && value !== null) {
    const own = (value as { loc?: SourceLocation }).loc ?? loc;
    for (const [k, v] of Object.entries(value)) if (k !== 'loc') walk(v, at ? `${at}.${k}` : k, own, out);
  }
};

/** A diagnostic for every unrepresentable string in the IR. */
export const unrepresentable = (ir: Image): Diagnostic[] => {
  const out: Diagnostic[] = [];
  walk(ir, '', undefined, out);
  return out;
};
