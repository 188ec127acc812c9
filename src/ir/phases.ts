// What a phase is for, from what it holds: steps that change the root, the
// artifacts made from it, or the checks run on the result. The build, verify
// and contracts all ask.
import { variablesIn } from '../core/variables.js';
import type { Image, Phase } from './schema.js';
import { kindOf } from '../steps/index.js';

export type PhaseKind = 'root' | 'artifact' | 'verify';

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
export const imageView = (ir: Image): Image => {
  if (!ir.phases.some((p) => p.runtimeOnly)) return ir;
  const phases = ir.phases.filter((p) => !p.runtimeOnly);
  // A variable only those phases use (the join token) is none of the image's business.
  const { variables: _all, ...rest } = ir;
  const variables = variablesIn(ir, phases);
  return { ...rest, phases, ...(variables.length ? { variables } : {}) };
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
