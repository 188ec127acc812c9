// Which steps of a phase run in the root, and what they need there.
import type { Phase, Step } from '../ir/schema.js';
import { kindOf } from '../steps/index.js';

/** The steps a target's phase script/play runs (in order). */
export const targetSteps = (phase: Phase): Step[] => phase.steps.filter((s) => kindOf(s).inRoot);

/** Mounts are needed by package installs, commands that say so, and script hooks (each kind says: `chroot.mounts`). */
export const stepsNeedMounts = (steps: readonly Step[]): boolean => steps.some((s) => kindOf(s).chroot?.mounts?.(s) === true);

/** Steps that may reach the network from inside the root (and so need a resolver): each kind says (`chroot.network`). */
export const stepsNeedNetwork = (steps: readonly Step[]): boolean => steps.some((s) => kindOf(s).chroot?.network?.(s) === true);
