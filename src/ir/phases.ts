// What a phase is for, from what it holds: steps that change the root, the
// artifacts made from it, or the checks run on the result. The build, verify
// and contracts all ask.
import { variablesIn } from '../core/variables.js';
import type { Image, Phase } from './schema.js';
import { isStepWith, kindOf, type StepWith } from '../steps/index.js';

export type PhaseKind = 'root' | 'artifact' | 'verify';

// The steps other parts of imgc do themselves, picked by their kinds' fields (src/steps/kind.ts), not by kind names.
/** What `imgc build` makes from the finished root (a directory, a tarball, a disk). */
export type BuildArtifact = StepWith<{ phaseKind: 'artifact'; doneBy: 'build' }>;
export const isBuildArtifact = isStepWith({ phaseKind: 'artifact', doneBy: 'build' });
/** What `imgc build` checks on the result (facts, boot, checksums, manifest). */
export type BuildCheck = StepWith<{ phaseKind: 'verify'; doneBy: 'build' }>;
export const isBuildCheck = isStepWith({ phaseKind: 'verify', doneBy: 'build' });
/** Whatever `imgc build` does itself rather than a phase script: its artifacts and checks. */
export const isDoneByBuild = isStepWith({ doneBy: 'build' });
/** A source of the packer target's template (a cloud image, an existing host). */
export type PackerSource = StepWith<{ doneBy: 'packer' }>;
export const isPackerSource = isStepWith({ doneBy: 'packer' });

export const phaseKind = (phase: Phase): PhaseKind =>
  phase.steps.some((s) => kindOf(s).phaseKind === 'artifact')
    ? 'artifact'
    : phase.name === 'verify' || phase.steps.some((s) => kindOf(s).phaseKind === 'verify')
      ? 'verify'
      : 'root';

/**
 * The image without the phases that run on existing hosts only (bootstrap, drain):
 * what an image build, its outputs and its verification see. They come last
 * (the schema says so), so nothing of the image depends on them.
 */
export const imageView = (ir: Image): Image => (ir.phases.some((p) => p.runtimeOnly) ? withPhases(ir, ir.phases.filter((p) => !p.runtimeOnly)) : ir);

/** The image with only these of its phases; a variable only the others use (the join token) is none of its business. */
const withPhases = (ir: Image, phases: Phase[]): Image => {
  const { variables: _all, ...rest } = ir;
  const variables = variablesIn(ir, phases);
  return { ...rest, phases, ...(variables.length ? { variables } : {}) };
};

/**
 * The image's phases up to and including the one named `name` (`imgc build
 * --until`, a fromDefinition base): the phases after it are not run.
 * Undefined when the image has no such phase.
 */
export const throughPhase = (ir: Image, name: string): Image | undefined => {
  const index = ir.phases.findIndex((p) => p.name === name);
  return index < 0 ? undefined : withPhases(ir, ir.phases.slice(0, index + 1));
};

const hostOnlyPhase = (ir: Image, name: 'drain' | 'decommission'): Phase | undefined => ir.phases.find((p) => p.runtimeOnly && p.name === name);

/**
 * The decommission edge's hooks, as a phase of existing hosts only with no
 * steps of its own: the decommission outputs fire them around the undo; the
 * runtime outputs never run it.
 */
export const decommissionPhase = (ir: Image): Phase | undefined => hostOnlyPhase(ir, 'decommission');

/**
 * The drain phase (ready -> draining), on existing hosts only: the
 * decommission outputs run it, with its hooks, before the decommission hooks
 * and the undo; the runtime outputs never run it.
 */
export const drainPhase = (ir: Image): Phase | undefined => hostOnlyPhase(ir, 'drain');
