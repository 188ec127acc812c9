// The contract checker: walks the steps in the order they will run, from the
// base's facts, and reports every requirement the walk cannot meet at that
// point, with why (never provided, provided later, removed earlier) and what
// was probably meant.
import type { Fact, Image, SourceLocation, Step } from '../ir/schema.js';
import { describeFact, factId, parentDir } from '../core/facts.js';
import { diagnostic, sortDiagnostics, type Diagnostic } from './diagnostic.js';
import { didYouMean } from '../core/suggest.js';
import { unrepresentable } from './representable.js';
import { hasMarker } from '../core/variables.js';
import { packageName, parsePackageSpec, type PackageManager } from '../core/packages.js';
import { describeStep, kindOf } from '../steps/index.js';
import { isBelow, runOrder, walkFacts, type Placed } from '../ir/flow.js';
import { originText, type BaseOrigin } from '../ir/origin.js';
import { conditionVariable, describeAssignment, runsUnder, variants, type Assignment } from '../core/conditions.js';
import type { PathKind } from '../steps/kind.js';

const verb: Record<Fact['kind'], string> = {
  user: 'created',
  group: 'created',
  path: 'created',
  package: 'installed',
  service: 'provided',
  kernelModule: 'configured',
  sysctl: 'set',
  command: 'provided',
  repo: 'added',
  artifact: 'produced',
};

interface Provider {
  placed: Placed;
}

const related = (message: string, loc: SourceLocation | undefined) => ({ message, ...(loc ? { loc } : {}) });

/**
 * Every diagnostic of the image. Steps under conditions (`when`) are checked
 * once per combination of the values the conditions tell apart
 * (src/core/conditions.ts): a diagnostic found on some of them only says when.
 */
export const checkImage = (ir: Image): Diagnostic[] => {
  const steps = runOrder(ir);
  const conditioned = steps.filter((p) => p.step.conditions).map((p) => p.step);
  if (!conditioned.length) return sortDiagnostics([...checkSteps(ir, steps).map((f) => f.d), ...unrepresentable(ir), ...unknownPackages(steps)]);
  const all = variants(conditioned, ir.variables);
  if (all.length > MAX_VARIANTS) {
    const names = [...new Set(conditioned.flatMap((s) => s.conditions!.map(conditionVariable)))];
    return sortDiagnostics([
      ...unrepresentable(ir),
      diagnostic('IMGC0014', `the conditions on ${names.map((n) => `'${n}'`).join(', ')} tell apart ${all.length} combinations of values; the checker walks at most ${MAX_VARIANTS}`, {
        loc: conditioned[0]!.loc,
        hint: 'decide some of them in the definition itself (a TypeScript if on a constant), or test fewer values',
      }),
    ]);
  }
  // Per problem (a step's requirement, or one diagnostic's text), each wording of it with the combinations it was found on.
  const found = new Map<string, Map<string, { d: Diagnostic; on: Assignment[] }>>();
  for (const a of all) {
    for (const { d, problem } of checkSteps(ir, steps.filter((p) => runsUnder(p.step.conditions, a)))) {
      const wordings = found.get(problem) ?? new Map<string, { d: Diagnostic; on: Assignment[] }>();
      const wording = JSON.stringify([d.code, d.message, d.loc]);
      const w = wordings.get(wording) ?? { d, on: [] };
      w.on.push(a);
      wordings.set(wording, w);
      found.set(problem, wordings);
    }
  }
  const byId = new Map(steps.map((p) => [p.step.id, p.step]));
  const out = [...found.values()].flatMap((wordings) => {
    const list = [...wordings.values()];
    const { d } = list[0]!;
    // Where the step is taken at all: a problem on each of those is the step's own, whatever the values.
    const taken = all.filter((a) => runsUnder(d.stepId === undefined ? undefined : byId.get(d.stepId)?.conditions, a));
    const failing = new Set(list.flatMap((w) => w.on));
    const met = taken.find((a) => !failing.has(a));
    return list.map(({ d, on }) => {
      const when = describeAssignment(on[0]!, conditioned);
      if (met === undefined) return list.length === 1 ? d : { ...d, message: `${d.message} (when ${when})` };
      if (!unmetCodes.has(d.code)) return { ...d, message: `${d.message} (when ${when})` };
      return diagnostic('IMGC0013', `${d.message}, when ${when}`, {
        loc: d.loc,
        related: d.related,
        ...(d.stepId ? { stepId: d.stepId } : {}),
        hint: `it is met when ${describeAssignment(met, conditioned)}: put this step in the same when(...) block as the step that provides it, or provide it on every branch`,
      });
    });
  });
  return sortDiagnostics([...out, ...unrepresentable(ir), ...unknownPackages(steps)]);
};

/**
 * Packages the base's archive does not have (IMGC0017), as the packages
 * kind's `make` found them. Once an apt repository is added, a name the
 * archive lacks may come from it, so an install after one is not judged.
 */
const unknownPackages = (steps: Placed[]): Diagnostic[] => {
  const out: Diagnostic[] = [];
  let repoAdded = false;
  for (const { step } of steps) {
    if ('unknown' in step && step.unknown && !repoAdded)
      for (const u of step.unknown)
        out.push(
          diagnostic('IMGC0017', `package '${u.name}' is not in ${step.archive ?? "the base's archive"}`, {
            loc: step.loc,
            stepId: step.id,
            hint: u.didYouMean
              ? `did you mean '${u.didYouMean}'?`
              : `add the apt repository that has it (aptRepository) before this step, or declare what it brings: packages(['${u.name}'], { provides: { ... } })`,
          }),
        );
    repoAdded ||= step.provides.some((f) => f.kind === 'repo');
  }
  return out;
};

/** The most combinations of condition values the checker walks. */
const MAX_VARIANTS = 256;

/** The diagnostics of a requirement the walk cannot meet. */
const unmetCodes = new Set<Diagnostic['code']>(['IMGC0001', 'IMGC0002', 'IMGC0003', 'IMGC0004', 'IMGC0005']);

/**
 * The diagnostics of the steps, in run order, as one run takes them, each with
 * the problem it is about: a step's requirement (worded as never provided,
 * provided later or removed, depending on the run), or the diagnostic itself.
 */
const checkSteps = (ir: Image, steps: Placed[]): { d: Diagnostic; problem: string }[] => {
  const providers = new Map<string, Provider[]>();
  const keysByKind = new Map<Fact['kind'], Set<string>>();
  const note = (f: Fact) => {
    const set = keysByKind.get(f.kind) ?? new Set<string>();
    set.add(f.key);
    keysByKind.set(f.kind, set);
  };
  ir.base.provides.forEach(note);
  for (const placed of steps) {
    for (const f of placed.step.provides) {
      note(f);
      const list = providers.get(factId(f)) ?? [];
      list.push({ placed });
      providers.set(factId(f), list);
    }
  }
  // A key holding a variable reference is reported once, as IMGC0011 (./variables.ts).
  const out = walkFacts(ir, steps).unmet.filter(({ req }) => !hasMarker(req.key)).map(({ placed, req, removal }) => ({
    d: unmet(placed, req, removal, providers.get(factId(req)) ?? [], [...(keysByKind.get(req.kind) ?? [])], ir.base.origin),
    problem: `requires ${placed.step.id} ${factId(req)}`,
  }));
  for (const d of [...duplicates(steps, ir.base.packageManager), ...pathConflicts(steps)]) out.push({ d, problem: JSON.stringify([d.code, d.stepId, d.message, d.loc]) });
  return out;
};

const unmet = (placed: Placed, req: Fact, removal: Placed | undefined, providers: Provider[], known: string[], origin?: BaseOrigin): Diagnostic => {
  const { step } = placed;
  const what = describeFact(req);
  const base = { loc: step.loc, stepId: step.id };
  if (removal) {
    return diagnostic('IMGC0005', `${describeStep(step)} requires ${what}, but ${what} is removed earlier, in phase '${removal.phase}' (${describeStep(removal.step)})`, {
      ...base,
      related: [related(`${what} is removed here`, removal.step.loc)],
      hint: `drop the removal, or move it after this step`,
    });
  }
  const later = providers.find((p) => p.placed.order > placed.order);
  if (later) {
    const onHostsOnly = later.placed.hostOnly && !placed.hostOnly;
    const where = onHostsOnly
      ? `in phase '${later.placed.phase}', which runs on existing hosts only, after every phase of the image`
      : later.placed.phaseIndex > placed.phaseIndex
        ? `in phase '${later.placed.phase}', which runs after '${placed.phase}'`
        : `by a later step of phase '${placed.phase}' (${describeStep(later.placed.step)})`;
    return diagnostic('IMGC0002', `${describeStep(step)} requires ${what}, but ${what} is ${verb[req.kind]} ${where}`, {
      ...base,
      related: [related(`${what} is ${verb[req.kind]} here`, later.placed.step.loc)],
      hint: onHostsOnly
        ? `the image never has it: move that step into phase '${placed.phase}' or earlier, or this step into phase '${later.placed.phase}'`
        : later.placed.phaseIndex > placed.phaseIndex
          ? `move that step into phase '${placed.phase}' or earlier, or this step into phase '${later.placed.phase}'`
          : 'move that step before this one',
    });
  }
  const guess = didYouMean(req.key, known);
  // A base made of another team's facts: say which, and what to ask of that team (src/ir/origin.ts).
  const hint = guess ? `did you mean '${guess}'?` : origin ? askOrigin(origin, what, req) : undefined;
  const lacking = origin ? `; the base is ${originText(origin)}, which does not have it` : '';
  const owners = kindOf(step).owners?.(step);
  const isOwnership = owners !== undefined && ((req.kind === 'user' && owners.owner === req.key) || (req.kind === 'group' && owners.group === req.key));
  if (isOwnership) {
    return diagnostic('IMGC0003', `${describeStep(step)} is owned by ${what}, which does not exist${lacking}`, {
      ...base,
      hint: hint ?? `create ${what} in an earlier step (p.${req.kind}('${req.key}'))`,
    });
  }
  const unitKind = kindOf(step);
  if (unitKind.unitPackage && req.kind === 'service') {
    const unitPackage = unitKind.unitPackage(step);
    const message = unitPackage
      ? `${describeStep(step)}: the unit comes from package '${unitPackage}', which is never installed`
      : `${describeStep(step)}: no installed package provides service '${req.key}'`;
    return diagnostic('IMGC0004', message, {
      ...base,
      hint: hint ?? (unitPackage ? `add p.packages(['${unitPackage}']) before enabling it` : `install the package that ships ${req.key}.service, or declare the service in a raw step's provides`),
    });
  }
  return diagnostic('IMGC0001', `${describeStep(step)} requires ${what}, which no step or the base provides${lacking}`, {
    ...base,
    hint:
      hint ??
      (req.kind === 'package'
        ? `install it in an earlier step: p.packages(['${req.key}'])`
        : req.kind === 'kernelModule'
          ? `list it to be loaded at boot in an earlier step: p.kernelModule('${req.key}')`
          : `add a step that provides ${what}, or declare it with command(..., { provides: { ${req.kind}: ['${req.key}'] } })`),
  });
};

/** What to ask of the team whose facts the base is, or to do here instead. */
const askOrigin = (o: BaseOrigin, what: string, req: Fact): string => {
  const call = req.kind === 'package' ? `p.packages(['${req.key}'])` : req.kind === 'user' || req.kind === 'group' ? `p.${req.kind}('${req.key}')` : undefined;
  const here = `or provide it in an earlier step of this definition${call ? ` (${call})` : ''}`;
  return o.kind === 'contract'
    ? `ask the team of image ${o.image} for a contract after phase ${o.phase} that has ${what} (and write ${o.file} again), ${here}`
    : `provide ${what} in ${o.file} by its phase ${o.phase}, ${here}`;
};

/** The paths a step makes, with the kind of thing each is. */
const madePaths = (step: Step): [string, PathKind][] => kindOf(step).paths?.(step) ?? [];

/** A path a step writes: what it makes it (undefined: a raw step's declared path, not known), and whether it edits a part of it only. */
interface Written {
  readonly path: string;
  readonly kind: PathKind | undefined;
  readonly edit: boolean;
}

/**
 * Every path a step writes, whatever its kind, for the two-writers
 * (IMGC0006/0007) and kind (IMGC0012) checks: the paths it makes, the files
 * it edits, and the paths it provides (declared by a raw step or a role,
 * unpacked from an archive). What a package brings is not a write: its
 * configuration files are there to be replaced. Not what it removes.
 */
const writtenPaths = (step: Step): Written[] => {
  const k = kindOf(step);
  const edits = new Set(k.edits?.(step) ?? []);
  const out = new Map<string, PathKind | undefined>(madePaths(step));
  for (const p of edits) if (!out.has(p)) out.set(p, 'file');
  if (!k.touches?.(step).packageManager) for (const f of step.provides) if (f.kind === 'path' && !out.has(f.key)) out.set(f.key, undefined);
  const removed = new Set(step.removes.filter((f) => f.kind === 'path').map((f) => f.key));
  return [...out].filter(([path]) => !removed.has(path)).map(([path, kind]) => ({ path, kind, edit: edits.has(path) }));
};

const article = (k: PathKind) => (k === 'directory' ? 'a directory' : k === 'file' ? 'a file' : 'a symlink');

/**
 * A step that edits a file an earlier `file` step writes whole (a line, a
 * block, a key, a sysctl): each run writes the whole file back, then edits it
 * again, so no run after the first is ever unchanged.
 */
const editsOfWritten = (placed: Placed, made: ReadonlyMap<string, Made>): Diagnostic[] => {
  const { step } = placed;
  if (kindOf(step).writes) return [];
  const makes = new Map(madePaths(step));
  // The files it edits a part of: a whole write (a download, a unit, an archive's path) is IMGC0006's.
  return (kindOf(step).edits?.(step) ?? [])
    .filter((key) => !step.removes.some((r) => r.kind === 'path' && r.key === key))
    .flatMap((key) => {
      const first = made.get(key);
      // A path this step makes another kind of thing is IMGC0012's.
      if (!first || kindOf(first.placed.step).writes !== 'content' || (makes.get(key) ?? 'file') !== 'file') return [];
      return [
        diagnostic('IMGC0015', `${describeStep(step)} edits a file an earlier step writes whole (phase '${first.placed.phase}'): every run writes it back and edits it again, so a second run is never unchanged`, {
          loc: step.loc,
          stepId: step.id,
          related: [related(`'${key}' is written whole here`, first.placed.step.loc)],
          hint: `write the edited text in the file step's content, or leave '${key}' to its package and keep the edit`,
        }),
      ];
    });
};

/** What a path is after the steps so far: its kind (undefined: declared by a raw step), who made it, whether whole or by an edit. */
interface Made {
  kind: PathKind | undefined;
  placed: Placed;
  writes: boolean;
  edit: boolean;
}

/** A whole file written where an earlier step edited a part of one: the edit is lost. */
const editLost = (placed: Placed, path: string, first: Placed): Diagnostic =>
  diagnostic('IMGC0006', `${describeStep(placed.step)} writes '${path}' whole, replacing the edit of ${describeStep(first.step)} (phase '${first.phase}'): that edit is lost`, {
    loc: placed.step.loc,
    stepId: placed.step.id,
    related: [related(`'${path}' is edited here`, first.step.loc)],
    hint: 'write the edited text in this step\'s content and drop the edit, or write the file before editing it',
  });

/**
 * What each path is, step by step: a path made a different kind of thing than
 * an earlier step made it (a directory where a file is, a file below a file),
 * and file/symlink writers of one path.
 */
const pathConflicts = (steps: Placed[]): Diagnostic[] => {
  const out: Diagnostic[] = [];
  const made = new Map<string, Made>();
  const kindClash = (placed: Placed, path: string, kind: PathKind, first: { kind: PathKind; placed: Placed }, below: boolean) =>
    diagnostic(
      'IMGC0012',
      below
        ? `${describeStep(placed.step)} needs '${path}' to be a directory, but it is ${article(first.kind)}, made in phase '${first.placed.phase}' (${describeStep(first.placed.step)})`
        : `${describeStep(placed.step)} makes '${path}' ${article(kind)}, but it is already ${article(first.kind)}, made in phase '${first.placed.phase}' (${describeStep(first.placed.step)})`,
      {
        loc: placed.step.loc,
        stepId: placed.step.id,
        related: [related(`'${path}' is made ${article(first.kind)} here`, first.placed.step.loc)],
        hint: below ? `make '${path}' a directory, or put this path elsewhere` : `remove '${path}' first (command(..., { removes: { path: ['${path}'] } })), or use another path`,
      },
    );
  for (const placed of steps) {
    const { step } = placed;
    out.push(...editsOfWritten(placed, made));
    for (const f of step.removes) {
      if (f.kind !== 'path') continue;
      made.delete(f.key);
      if (!kindOf(step).removesListedOnly) for (const p of [...made.keys()]) if (isBelow(p, f.key)) made.delete(p);
    }
    for (const { path, kind, edit } of writtenPaths(step)) {
      // Below a file: the parent a step writes into is not a directory.
      for (let dir = parentDir(path); dir !== '/'; dir = parentDir(dir)) {
        const up = made.get(dir);
        if (up && up.kind === 'file') {
          out.push(kindClash(placed, dir, kind ?? 'file', { kind: up.kind, placed: up.placed }, true));
          break;
        }
      }
      const first = made.get(path);
      // A whole file or link (or a declared path of unknown kind) replaces what was there.
      const writes = !edit && kind !== 'directory';
      if (!first) {
        made.set(path, { kind, placed, writes, edit });
        continue;
      }
      if (first.kind === 'directory' && kind === 'directory') continue;
      if (first.edit && writes) {
        out.push(editLost(placed, path, first.placed));
        made.set(path, { kind, placed, writes, edit });
        continue;
      }
      if (first.writes && writes) {
        const rel = [related(`first ${describeStep(first.placed.step)} here (phase '${first.placed.phase}')`, first.placed.step.loc)];
        const base = { loc: step.loc, stepId: step.id, related: rel };
        const same = first.placed.step.kind === step.kind && JSON.stringify({ ...first.placed.step, id: 0, loc: 0 }) === JSON.stringify({ ...step, id: 0, loc: 0 });
        out.push(
          same
            ? diagnostic('IMGC0007', `${describeStep(step)} is written again with the same content`, { ...base, hint: 'drop the second step' })
            : diagnostic('IMGC0006', `${describeStep(step)} is written twice with different content`, { ...base, hint: 'keep one writer per path, or merge the two contents into one step' }),
        );
        continue;
      }
      if (first.kind !== undefined && kind !== undefined && first.kind !== kind) {
        out.push(kindClash(placed, path, kind, { kind: first.kind, placed: first.placed }, false));
        made.set(path, { kind, placed, writes, edit });
      }
    }
  }
  return out;
};

/** Creators of one user or group, installs of one package, outputs, each while it is there. */
const duplicates = (steps: Placed[], family: PackageManager): Diagnostic[] => {
  const out: Diagnostic[] = [];
  const seen = new Map<string, Placed>();
  for (const placed of steps) {
    const { step } = placed;
    const keys = kindOf(step).creates?.(step, family) ?? [];
    // What a step removes may be made again: a user deleted, a package purged.
    for (const f of step.removes) seen.delete(factId(f));
    for (const key of keys) {
      const first = seen.get(key);
      seen.set(key, first ?? placed);
      if (!first) continue;
      const rel = [related(`first ${describeStep(first.step)} here (phase '${first.phase}')`, first.step.loc)];
      const base = { loc: step.loc, stepId: step.id, related: rel };
      if (key.startsWith('package:')) {
        out.push(pinClash(first, placed, key.slice(8), family) ?? diagnostic('IMGC0009', `package '${key.slice(8)}' is installed again`, { ...base, hint: 'drop the second install' }));
      } else if (key.startsWith('artifact:')) {
        out.push(diagnostic('IMGC0010', `artifact output '${key.slice(9)}' is named twice`, { ...base, hint: 'give each artifact its own output name' }));
      } else {
        out.push(diagnostic('IMGC0008', `${describeStep(step)} is created twice`, { ...base, hint: 'drop the second step' }));
      }
    }
  }
  return out;
};

/** The version a step's install of package `name` pins, if it pins one. */
const pinOf = (step: Step, name: string, family: PackageManager): string | undefined => {
  // What a step installs is what it names (package lists name none until the output runs).
  if (!kindOf(step).installs?.(step) || !('names' in step)) return undefined;
  const spec = step.names.map((n) => parsePackageSpec(n, family)).find((p) => p.name === name);
  return spec?.version;
};

/** Whether two pins can name one version: equal, or one a glob (`1.31.*`) the other matches. A variable's value is not known: it may. */
const samePin = (a: string, b: string): boolean =>
  a === b || hasMarker(a) || hasMarker(b) || (a.endsWith('*') && b.startsWith(a.slice(0, -1))) || (b.endsWith('*') && a.startsWith(b.slice(0, -1)));

/**
 * A package installed again pinned to another version than before (IMGC0016):
 * one of the two pins cannot hold, and apt refuses the downgrade, so the
 * build fails where the checker could have said it.
 */
const pinClash = (first: Placed, placed: Placed, name: string, family: PackageManager): Diagnostic | undefined => {
  const was = pinOf(first.step, name, family);
  const now = pinOf(placed.step, name, family);
  if (was === undefined || now === undefined || samePin(was, now)) return undefined;
  return diagnostic('IMGC0016', `package '${name}' is pinned to version '${now}' by ${describeStep(placed.step)}, but to '${was}' by ${describeStep(first.step)} in phase '${first.phase}'`, {
    loc: placed.step.loc,
    stepId: placed.step.id,
    related: [related(`'${name}' pinned to '${was}' here`, first.step.loc)],
    hint: `pin one version of '${name}', once (a variable can hold it for every step that names it), or remove the package before installing the other version`,
  });
};
