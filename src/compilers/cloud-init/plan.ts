// Where each step runs: which cloud-config module, or runcmd. cloud-init runs
// its modules in a fixed order (Debian's /etc/cloud/cloud.cfg, 22.4):
//   init:   bootcmd → write_files → users-groups (groups, then users)
//   config: … runcmd (only writes its script)
//   final:  packages → write_files with defer → scripts-user (runs runcmd)
// Every step has the stages that can express it, best first, runcmd last. A
// step takes the first of them that keeps it after every earlier step it
// depends on; runcmd, last and in order, always does. Two steps depend on each
// other when
//   - their facts meet: one requires, provides or removes what the other
//     provides or removes (paths also meet a path above or below them);
//   - one is a package operation and the other writes files (dpkg may
//     overwrite what a hoisted file step wrote, and apt reads its sources and
//     configuration from files a later-run step would write);
//   - either is a command or a hook: what they do is opaque, so nothing moves
//     across them.
// Within one stage the lists keep the definition's order, except `packages`,
// which installs all its names in one apt-get call (so a step that depends on
// an earlier one there goes further down).
import type { Fact, Hook, Phase, Step } from '../../ir/schema.js';
import { isHook, kindOf } from '../../steps/index.js';
import { rendering } from '../renderings.js';

import { stages, type Stage } from '../../emit/cloud-init/calls.js';
export { stages, type Stage };

const rank = (s: Stage): number => stages.indexOf(s);
/** Stages whose module does its entries one after the other, in list order. */
const inOrder = (s: Stage): boolean => s !== 'packages';

/** A step a cloud-config places (its kind is `inRoot`). */
export type RootStep = Exclude<Step, Hook>;

export interface Item {
  readonly step: RootStep | Hook;
  readonly phase: Phase;
}

export interface Placed extends Item {
  readonly stage: Stage;
  /** When the step did not get its first stage: that stage and the earlier step that kept it out. */
  readonly demoted?: { readonly from: Stage; readonly after: Placed };
}

/** Whether cloud-init's packages module can install for this base (the runcmd fallback needs a package manager table entry too). */
export interface PlanOptions {
  readonly packagesModule: boolean;
}

/** The stages that can express a step, best first; always ending in runcmd. */
export const candidates = (s: RootStep | Hook, opts: PlanOptions): readonly Stage[] => {
  if (isHook(s))
    // bootcmd cannot stop the modules after it, so only hooks that never stop anything go there.
    return (s.action.type === 'event' && s.action.target === 'stdout') || (s.action.type === 'webhook' && s.action.onFailure === 'warn') ? ['bootcmd', 'runcmd'] : ['runcmd'];
  const r = rendering(kindOf(s).cloudInit, s, 'cloudInit');
  return [...(r.stages?.(s, opts) ?? []), 'runcmd'];
};

// What a kind says it touches (src/steps: `opaque`, `touches`).
const opaque = (s: Step): boolean => kindOf(s).opaque === true;
const packageOp = (s: Step): boolean => kindOf(s).touches?.(s).packageManager === true;
const writesFiles = (s: Step): boolean => kindOf(s).touches?.(s).writesFiles === true;

/** `outer` is `inner` or a directory above it. */
const covers = (outer: string, inner: string): boolean => outer === inner || outer === '/' || inner.startsWith(`${outer}/`);

/** Does a fact `later` needs or changes depend on fact `earlier`? `how` says which way paths nest. */
const meet = (a: Fact, b: Fact, how: 'aCoversB' | 'either'): boolean => {
  if (a.kind !== b.kind) return false;
  if (a.kind !== 'path') return a.key === b.key;
  return how === 'either' ? covers(a.key, b.key) || covers(b.key, a.key) : covers(a.key, b.key);
};

const any = (as: readonly Fact[], bs: readonly Fact[], how: 'aCoversB' | 'either'): boolean => as.some((a) => bs.some((b) => meet(a, b, how)));


/**
 * A step's facts: those it declares, and those its fields imply, so that IR
 * made by hand (compilers are a library too) with facts left out still keeps
 * a file after the user that owns it, a package after its repository's file…
 */
const factsOf = (s: Step): { needs: Fact[]; changes: Fact[] } => {
  const t = kindOf(s).touches?.(s);
  return { needs: [...s.requires, ...(t?.needs ?? [])], changes: [...s.provides, ...s.removes, ...(t?.changes ?? [])] };
};

/** Must `later` run after `earlier`? (Both in definition order.) */
export const dependsOn = (later: Step, earlier: Step): boolean => {
  if (opaque(later) || opaque(earlier)) return true;
  if ((packageOp(earlier) && writesFiles(later)) || (writesFiles(earlier) && packageOp(later))) return true;
  const e = factsOf(earlier);
  const l = factsOf(later);
  // Two package operations' other facts are what their packages bring (shared directories: /etc/default):
  // the package manager orders what they install, so only the packages themselves order the steps.
  const both = packageOp(earlier) && packageOp(later);
  const changed = (f: Fact) => !both || f.kind === 'package';
  return (
    // later needs what earlier made (or a directory above it)
    any(e.changes, l.needs, 'aCoversB') ||
    // both change the same thing, or one changes what contains the other
    any(l.changes.filter(changed), e.changes.filter(changed), 'either') ||
    // later changes what earlier needed (or a directory above it)
    any(l.changes, e.needs, 'aCoversB')
  );
};

/** Places every item, in order; see the header. */
export const plan = (items: readonly Item[], opts: PlanOptions): Placed[] => {
  const placed: Placed[] = [];
  for (const item of items) {
    const deps = placed.filter((p) => dependsOn(item.step, p.step));
    // The step that keeps `stage` out: of those that do, the one furthest down, and the latest.
    const blocker = (stage: Stage): Placed | undefined =>
      deps
        .filter((p) => rank(p.stage) > rank(stage) || (rank(p.stage) === rank(stage) && !inOrder(stage)))
        .reduce<Placed | undefined>((best, p) => (best === undefined || rank(p.stage) >= rank(best.stage) ? p : best), undefined);
    const options = candidates(item.step, opts);
    const stage = options.find((s) => blocker(s) === undefined) ?? 'runcmd';
    const first = options[0]!;
    const after = stage === first ? undefined : blocker(first);
    placed.push({ ...item, stage, ...(after ? { demoted: { from: first, after } } : {}) });
  }
  return placed;
};
