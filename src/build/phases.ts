// What a phase is for, from what it holds: steps that change the root, the
// artifacts made from it, or the checks run on the result.
import type { Phase, Step, StepKind } from '../ir/schema.js';

export type PhaseKind = 'root' | 'artifact' | 'verify';

/** Step kinds shell and ansible carry out inside the root. */
export const rootStepKinds: ReadonlySet<StepKind> = new Set<StepKind>([
  'user', 'group', 'directory', 'file', 'symlink', 'packages', 'aptRepository', 'service', 'sysctl', 'kernelModule', 'swapOff', 'command',
]);

export const phaseKind = (phase: Phase): PhaseKind =>
  phase.steps.some((s) => s.kind === 'artifact' || s.kind === 'cloudImage')
    ? 'artifact'
    : phase.name === 'verify' || phase.steps.some((s) => s.kind === 'verify')
      ? 'verify'
      : 'root';

/** The steps a target's phase script/play runs (in order). */
export const targetSteps = (phase: Phase): Step[] => phase.steps.filter((s) => rootStepKinds.has(s.kind));

/** Mounts are needed by package installs, commands that say so, and script hooks. */
export const stepsNeedMounts = (steps: readonly Step[]): boolean =>
  steps.some((s) => s.kind === 'packages' || (s.kind === 'command' && s.needsMounts) || (s.kind === 'hook' && s.action.type === 'script'));

/** Steps that may reach the network from inside the root (and so need a resolver). */
export const stepsNeedNetwork = (steps: readonly Step[]): boolean =>
  steps.some((s) => s.kind === 'packages' || s.kind === 'aptRepository' || s.kind === 'command' || (s.kind === 'hook' && s.action.type === 'script'));
