// What a phase is for, from what it holds: steps that change the root, the
// artifacts made from it, or the checks run on the result. The build, verify
// and contracts all ask.
import type { Phase } from './schema.js';

export type PhaseKind = 'root' | 'artifact' | 'verify';

export const phaseKind = (phase: Phase): PhaseKind =>
  phase.steps.some((s) => s.kind === 'artifact' || s.kind === 'cloudImage')
    ? 'artifact'
    : phase.name === 'verify' || phase.steps.some((s) => s.kind === 'verify')
      ? 'verify'
      : 'root';
