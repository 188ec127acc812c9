// The IR against its zod schema, each problem an IMGC1004 diagnostic at the
// step that holds the value. The loader runs it on what a definition produced;
// every compiler runs it on the IR it is given (a library caller's hand-made
// IR too), so nothing downstream meets a value the schema refuses.
import { Image, type SourceLocation } from '../ir/schema.js';
import { diagnostic, type Diagnostic } from './diagnostic.js';

export type Validated = { ir: Image; diagnostics: [] } | { ir?: undefined; diagnostics: Diagnostic[] };

/** The location of the innermost IR object on `at` that has one (the step). */
const nearestLoc = (root: unknown, at: readonly PropertyKey[]): SourceLocation | undefined => {
  let node: unknown = root;
  let found: SourceLocation | undefined;
  for (const key of at) {
    if (typeof node !== 'object' || node === null) break;
    const loc = (node as { loc?: SourceLocation }).loc;
    if (loc) found = loc;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  const own = typeof node === 'object' && node !== null ? (node as { loc?: SourceLocation }).loc : undefined;
  return own ?? found;
};

const isFactList = (k: PropertyKey) => k === 'provides' || k === 'requires' || k === 'removes';

/** The parsed IR, or one IMGC1004 diagnostic per invalid step (or field outside a step). */
export const validateImage = (raw: unknown): Validated => {
  const parsed = Image.safeParse(raw);
  if (parsed.success) return { ir: parsed.data, diagnostics: [] };
  // One diagnostic per step: the derived facts repeat the field's problem.
  const issues = [...parsed.error.issues].sort((a, b) => Number(a.path.some(isFactList)) - Number(b.path.some(isFactList)));
  const seen = new Set<string>();
  const diagnostics = issues.flatMap((i) => {
    const loc = nearestLoc(raw, i.path);
    const at = loc ? `${loc.file}:${loc.line}:${loc.column}` : i.path.join('.');
    if (seen.has(at)) return [];
    seen.add(at);
    return [diagnostic('IMGC1004', `invalid ${i.path.join('.')}: ${i.message}`, { loc })];
  });
  return { diagnostics };
};
