// Where variable references may stand. A marker (src/core/variables.ts) is
// rendered by each backend as a run-time reference, which only makes sense in
// a value the target reads as text: a file's content, a command, a script
// hook, an apt repository's or webhook's URL, a cloud image setting. Anywhere
// else (names, paths, fact keys) the image's shape would depend on the value:
// IMGC0011. A marker that names no declared variable is refused (IMGC2001).
import type { Image, SourceLocation, Step } from '../ir/schema.js';
import { hasMarker, MARK_CLOSE, MARK_OPEN, referencedIn, splitMarkers } from '../core/variables.js';
import { diagnostic, type Diagnostic } from './diagnostic.js';
import { allKinds } from '../steps/index.js';

/** Fields (dotted paths from the step; `*` any key, `[*]` any item) that may hold references: each kind says (src/steps, `variables`). */
const allowed = (kind: Step['kind']): readonly string[] => allKinds().get(kind)?.variables ?? [];

const fields = (value: unknown, at: string, out: [string, string][]): void => {
  if (typeof value === 'string') out.push([at, value]);
  else if (Array.isArray(value)) value.forEach((v, i) => fields(v, `${at}[${i}]`, out));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      // A step's id derives from its phase's name, where a reference is reported.
      if (k === 'loc' || (k === 'id' && at === '')) continue;
      const key = at ? `${at}.${k}` : k;
      out.push([`${key} (key)`, k]);
      fields(v, key, out);
    }
};

/** Whether field `at` (dotted, `[i]` for items) of a step of `kind` may hold variable references (where in `value` the kind says). */
export const isAllowed = (kind: Step['kind'], at: string, value: string): boolean =>
  /^conditions\[\d+\]\.variable$/.test(at) ||
  ((allKinds().get(kind)?.variablesIn?.(value) ?? true) &&
  allowed(kind).some((f) =>
    f.endsWith('[*]')
      ? at.startsWith(f.slice(0, -2)) && /^\d+\]$/.test(at.slice(f.length - 2))
      : f.endsWith('.*')
        ? at.startsWith(f.slice(0, -1)) && !at.slice(f.length - 1).includes('.') && !at.endsWith('(key)')
        : at === f,
  ));

/** IMGC0011 for references where a literal is needed, IMGC2001 for markers of no declared variable. */
export const variableDiagnostics = (ir: Image): Diagnostic[] => {
  const declared = new Set((ir.variables ?? []).map((v) => v.name));
  const types = new Map((ir.variables ?? []).map((v) => [v.name, v.type]));
  const out: Diagnostic[] = [];
  const visit = (value: unknown, kind: Step['kind'] | undefined, id: string, loc: SourceLocation | undefined) => {
    // Most steps hold no reference: one native scan of their text (which keeps the marker characters) says so.
    if (!hasMarker(JSON.stringify(value))) return;
    const found: [string, string][] = [];
    fields(value, '', found);
    // The derived facts repeat the step's own fields: report the field, once.
    const ownFields = found.filter(([at]) => !/^(provides|requires|removes)\b/.test(at));
    const reported = ownFields.some(([at, v]) => hasMarker(v) && !(kind !== undefined && isAllowed(kind, at, v)));
    for (const [at, s] of reported ? ownFields : found) {
      if (!hasMarker(s)) continue;
      const where = `${id}${id && at ? '.' : ''}${at}`;
      const names = referencedIn(s);
      const rest = splitMarkers(s).filter((p): p is string => typeof p === 'string').join('');
      const takesLists = kind !== undefined && allKinds().get(kind)?.takesLists === true;
      if (kind === undefined || !isAllowed(kind, at, s)) {
        out.push(
          diagnostic('IMGC0011', `${where} uses ${names.length ? `variable ${names.map((n) => `'${n}'`).join(', ')}` : 'a variable marker'} where a literal is needed`, {
            loc,
            ...(kind ? { stepId: id } : {}),
            hint: 'variables may stand in file contents, commands, script hooks, apt repository and webhook URLs, package versions and cloud image settings',
          }),
        );
      } else if (names.some((n) => types.has(n)) && names.some((n) => (types.get(n) === 'list') !== takesLists)) {
        // A list is no text, and a package list takes nothing but a list.
        out.push(
          diagnostic('IMGC0011', `${where} uses ${takesLists ? `variable ${names.map((n) => `'${n}'`).join(', ')}, which is not a list,` : `list variable ${names.filter((n) => types.get(n) === 'list').map((n) => `'${n}'`).join(', ')}`} where ${takesLists ? 'a list' : 'text'} is needed`, {
            loc,
            stepId: id,
            hint: 'a list variable (z.array(z.string())) stands only as a package list: p.packages(list)',
          }),
        );
      } else if (rest.includes(MARK_OPEN) || rest.includes(MARK_CLOSE) || names.some((n) => !declared.has(n))) {
        const unknown = names.filter((n) => !declared.has(n));
        out.push(
          diagnostic('IMGC2001', `${where} ${unknown.length ? `references undeclared variable ${unknown.map((n) => `'${n}'`).join(', ')}` : 'contains a private-use character U+E000/U+E001 that is not a variable reference'}`, {
            loc,
            stepId: id,
            hint: 'declare the variable with variable(...) and use it as `${v}`; U+E000 and U+E001 are reserved for variable references',
          }),
        );
      }
    }
  };
  visit({ name: ir.name, source: ir.source, base: { ...ir.base, loc: undefined } }, undefined, '', ir.base.loc);
  for (const p of ir.phases) {
    visit({ name: p.name }, undefined, `phase ${p.name}`, p.loc);
    for (const s of [...p.pre, ...p.steps, ...p.post]) visit(s, s.kind, s.id, s.loc);
  }
  return out;
};
