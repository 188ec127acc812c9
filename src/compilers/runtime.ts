// Runtime provisioning and decommissioning, backend-neutral: computed once
// from the IR (pure), rendered by the shell and ansible backends.
//
// - The host contract: what an existing host must already have for the
//   runtime phases (`runtime: true`) to run there — the requirements of their
//   steps and hooks that `factFlow` says come from the base or from a step of
//   a phase that is not run at runtime (requirements met inside the runtime
//   phases are not preconditions), plus the base's distro and release; taken
//   from the contract of the phase before (src/contract/preflight.ts), so the
//   preflight asks what probe and check mean by a fact.
// - Creations: what a runtime step may create on a host (a user, a group, a
//   path, a package, an enabled service, a line of a sysctl/modules-load.d
//   file). Each has a token `STEP-ID` or `STEP-ID#N`, written to the host's
//   record (recordFile) when the step actually created it there. Decommission
//   undoes recorded creations only, in reverse order, so nothing that existed
//   before — on that host, or in the base and the build phases — is touched.
import { packageName } from '../core/packages.js';
import { substitute } from '../core/variables.js';
import { valuesOf, type Assignment } from '../core/conditions.js';
import { factFlow, runOrder } from '../ir/flow.js';
import { factId } from '../core/facts.js';
import type { Fact, Image, Phase, Step } from '../ir/schema.js';
import { kindOf } from '../steps/index.js';
import { decommissionPhase, drainPhase } from '../ir/phases.js';

export { contractKinds, preflightLabel, type ContractKind, type HostContract, type PreflightFact as ContractFact } from '../contract/preflight.js';
import { inPreflightOrder, preflightOf, type HostContract, type PreflightFact } from '../contract/preflight.js';
import { contractOf } from '../contract/contract.js';

/** The phases the runtime outputs run, in order (not drain and the decommission edge's hooks: the decommission outputs run those). */
export const runtimePhases = (ir: Image): Phase[] => {
  const leaving = new Set([drainPhase(ir), decommissionPhase(ir)]);
  return ir.phases.filter((p) => p.runtime && !leaving.has(p));
};

/** Whether the image has anything to run at runtime. */
export const hasRuntime = (ir: Image): boolean => runtimePhases(ir).length > 0;

/**
 * The host contract of the runtime phases: for each, the contract of the
 * phase before it (src/contract), narrowed to the facts its steps need from
 * the base or from a phase not run at runtime; in kind order, then first use.
 */
export const hostContract = (ir: Image): HostContract => {
  const order = runOrder(ir);
  const phaseOf = new Map(order.map((p) => [p.step.id, p.phaseIndex]));
  const run = new Set(runtimePhases(ir));
  const runtimeIds = new Set(order.filter((p) => run.has(ir.phases[p.phaseIndex]!)).map((p) => p.step.id));
  const needed = new Map<number, Fact[]>();
  for (const edge of factFlow(ir)) {
    if (!runtimeIds.has(edge.to) || runtimeIds.has(edge.from)) continue;
    const i = phaseOf.get(edge.to)!;
    needed.set(i, [...(needed.get(i) ?? []), edge.fact]);
  }
  const parts = [...needed].map(([i, facts]) => preflightOf(contractOf(ir, i === 0 ? 'base' : ir.phases[i - 1]!.name), facts));
  return { distro: ir.base.distro, release: ir.base.release, facts: inPreflightOrder(parts.flatMap((p) => p.facts.map((f) => pinnedOnly(ir, f)))) };
};

/**
 * A package's version is asked of a host only when a step pins it: the
 * versions the base states are what its root had, and a host with its
 * security updates has others.
 */
const pinnedOnly = (ir: Image, f: PreflightFact): PreflightFact => {
  const v = f.details?.version;
  if (f.kind !== 'package' || v === undefined || ir.base.details?.[factId(f)]?.version !== v) return f;
  const { version: _base, ...rest } = f.details!;
  const { details: _all, ...bare } = f;
  return Object.keys(rest).length ? { ...bare, details: rest } : bare;
};

/** A bare unit name means a .service. */
export const unitOf = (n: string): string =>
  /\.(service|socket|timer|target|path|mount|automount|swap|slice|scope|device)$/.test(n) ? n : `${n}.service`;

/** A package spec without its arch qualifier and `=version`. */
export { packageName };

export type { Creation } from '../core/creations.js';
import type { Creation } from '../core/creations.js';

export interface RuntimeStep {
  readonly step: Step;
  /** What the step may create, in the order it creates them. */
  readonly creations: readonly Creation[];
  /** Why part of what the step does is not undone by decommission, if so. */
  readonly kept?: string;
}

export interface RuntimePhase {
  readonly phase: Phase;
  readonly steps: readonly RuntimeStep[];
}

export interface RuntimePlan {
  readonly contract: HostContract;
  readonly phases: readonly RuntimePhase[];
  /** The host's record of what provisioning created, one token a line. */
  readonly recordFile: string;
  readonly recordDir: string;
}

export const recordDirOf = (ir: Image): string => `/var/lib/imgc/${ir.name}`;

const creationsOf = (s: Step, before: Set<string>, values: Assignment): { creations: Creation[]; kept?: string } => {
  const mine = (f: Fact) => !before.has(factId(f));
  const resolved = (text: string) => substitute(text, values as ReadonlyMap<string, string | number | boolean>);
  const path = (p: string, type: 'file' | 'directory' | 'symlink' | 'lineFile', n?: number): Creation[] =>
    mine({ kind: 'path', key: p }) ? [{ token: n === undefined ? s.id : `${s.id}#${n}`, kind: 'path', path: p, type }] : [];
  // The kind says what its step creates, or why decommission leaves it (src/steps, `runtime`).
  const r = kindOf(s).runtime(s, { mine, path, resolved });
  return { creations: [...r.creations], ...(r.kept !== undefined ? { kept: r.kept } : {}) };
};

/** Everything the runtime and decommission outputs need, from the IR alone. */
export const runtimePlan = (ir: Image): RuntimePlan => {
  // Facts the base or a non-runtime phase provides are not the runtime phases' to create or undo.
  const before = new Set<string>(ir.base.provides.map(factId));
  for (const p of ir.phases) if (!p.runtime) for (const s of [...p.pre, ...p.steps, ...p.post]) s.provides.forEach((f) => before.add(factId(f)));
  const values = valuesOf(ir.variables);
  const phases = runtimePhases(ir).map((phase) => ({
    phase,
    steps: [...phase.pre, ...phase.steps, ...phase.post].map((step) => {
      const c = creationsOf(step, before, values);
      return { step, creations: c.creations, ...(c.kept !== undefined ? { kept: c.kept } : {}) };
    }),
  }));
  const recordDir = recordDirOf(ir);
  return { contract: hostContract(ir), phases, recordDir, recordFile: `${recordDir}/created` };
};

/**
 * The drain phase as the decommission outputs run it, before the undo. What
 * its steps create is not recorded: decommission undoes the runtime phases,
 * and a drained node (kubelet stopped, a marker written) stays drained.
 */
export const drainPlan = (ir: Image): RuntimePhase | undefined => {
  const phase = drainPhase(ir);
  return phase && { phase, steps: [...phase.pre, ...phase.steps, ...phase.post].map((step) => ({ step, creations: [] })) };
};

/** Every creation of the plan, in reverse run order: the order decommission undoes them. */
export const undoOrder = (plan: RuntimePlan): { step: Step; creation: Creation }[] =>
  plan.phases
    .flatMap((p) => p.steps.flatMap((s) => s.creations.map((creation) => ({ step: s.step, creation }))))
    .reverse();

/** Steps whose effect decommission leaves in place, and why. */
export const keptEffects = (plan: RuntimePlan): { step: Step; why: string }[] =>
  plan.phases.flatMap((p) => p.steps.filter((s) => s.kept !== undefined).map((s) => ({ step: s.step, why: s.kept! })));
