// Which steps of a phase run in the root, and what they need there.
import type { Phase, Step, StepKind } from '../ir/schema.js';
import { isRegistered, kindOf } from '../steps/index.js';

/** Step kinds shell and ansible carry out inside the root (registered kinds say so themselves: `inRoot`). */
export const rootStepKinds: ReadonlySet<StepKind> = new Set<StepKind>([
  'user', 'group', 'directory', 'file', 'symlink', 'packages', 'aptRepository', 'service', 'sysctl', 'kernelModule', 'command',
]);

/** The steps a target's phase script/play runs (in order). */
export const targetSteps = (phase: Phase): Step[] => phase.steps.filter((s) => (isRegistered(s) ? kindOf(s).inRoot : rootStepKinds.has(s.kind)));

/** Mounts are needed by package installs, commands that say so, and script hooks. */
export const stepsNeedMounts = (steps: readonly Step[]): boolean =>
  steps.some((s) => s.kind === 'packages' || (s.kind === 'command' && s.needsMounts) || (s.kind === 'hook' && s.action.type === 'script'));

/** Steps that may reach the network from inside the root (and so need a resolver). */
export const stepsNeedNetwork = (steps: readonly Step[]): boolean =>
  steps.some((s) => s.kind === 'packages' || s.kind === 'aptRepository' || s.kind === 'command' || (s.kind === 'hook' && s.action.type === 'script'));
