// The IR against its zod schema, each problem an IMGC1004 diagnostic at the
// step that holds the value. The loader runs it on what a definition produced;
// every compiler runs it on the IR it is given (a library caller's hand-made
// IR too), so nothing downstream meets a value the schema refuses.
import { Image, type SourceLocation, type Step } from '../ir/schema.js';
import { areOwnFacts } from '../core/facts.js';
import { diagnostic, type Diagnostic } from './diagnostic.js';
import { hasMarker } from '../core/variables.js';
import { isAllowed } from './variables.js';

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

/**
 * Whether the value at `at` is a string holding a variable reference in a
 * field that needs a literal: the checker reports it as IMGC0011 (naming the
 * variable), which says more than the field's pattern would.
 */
const misplacedReference = (root: unknown, at: readonly PropertyKey[]): boolean => {
  let node: unknown = root;
  let step: { kind: Step['kind']; rest: PropertyKey[] } | undefined;
  for (const [i, key] of at.entries()) {
    if (typeof node !== 'object' || node === null) return false;
    const kind = (node as { kind?: unknown }).kind;
    if (typeof kind === 'string' && 'id' in node) step = { kind: kind as Step['kind'], rest: at.slice(i) };
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  if (typeof node !== 'string' || !hasMarker(node)) return false;
  const field = (step?.rest ?? []).map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('');
  return !step || !isAllowed(step.kind, field, node);
};

/** The base's facts when imgc made them (src/core/facts.ts): taken as they are, not parsed again. */
const ownBaseFacts = (raw: unknown): Pick<Image['base'], 'provides' | 'details'> | undefined => {
  const base = typeof raw === 'object' && raw !== null ? (raw as { base?: unknown }).base : undefined;
  if (typeof base !== 'object' || base === null) return undefined;
  const { provides, details } = base as Partial<Image['base']>;
  return areOwnFacts(provides) && (details === undefined || areOwnFacts(details)) ? { provides: provides!, ...(details ? { details } : {}) } : undefined;
};

/** The parsed IR, or one IMGC1004 diagnostic per invalid step (or field outside a step). */
export const validateImage = (raw: unknown): Validated => {
  const own = ownBaseFacts(raw);
  // Empty in their places, so that the parsed base keeps its keys' order.
  const parsed = Image.safeParse(own ? { ...(raw as Image), base: { ...(raw as Image).base, provides: [], ...(own.details ? { details: {} } : {}) } } : raw);
  if (parsed.success) return { ir: own ? { ...parsed.data, base: { ...parsed.data.base, ...own } } : parsed.data, diagnostics: [] };
  const real = parsed.error.issues.filter((i) => !misplacedReference(raw, i.path));
  // Only references where literals are needed: the IR is whole (the schema
  // neither defaults nor transforms), and checkImage reports each (IMGC0011).
  if (!real.length) return { ir: raw as Image, diagnostics: [] };
  // One diagnostic per step: the derived facts repeat the field's problem.
  const issues = [...real].sort((a, b) => Number(a.path.some(isFactList)) - Number(b.path.some(isFactList)));
  const seen = new Set<string>();
  const diagnostics = issues.flatMap((i) => {
    const loc = nearestLoc(raw, i.path);
    const at = loc ? `${loc.file}:${loc.line}:${loc.column}` : i.path.join('.');
    if (seen.has(at)) return [];
    seen.add(at);
    // A field's own code when its check names one (paths not written as they resolve, values past the filesystem's limits: src/core/fields.ts).
    const own = (i as { params?: { imgc?: unknown } }).params?.imgc;
    const code = own === 'IMGC2003' ? own : 'IMGC1004';
    return [diagnostic(code, `invalid ${i.path.join('.')}: ${i.message}`, { loc })];
  });
  return { diagnostics };
};
