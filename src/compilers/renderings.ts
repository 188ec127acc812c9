// How a frame gets a kind's rendering for its target: the function, or the
// kind's explicit refusal reported as IMGC2002 at the step (src/steps/kind.ts).
import { diagnostic } from '../check/diagnostic.js';
import { describeStep } from '../steps/index.js';
import type { Step } from '../ir/schema.js';
import { isRefusal, type Refusal } from '../steps/index.js';
import type { Elsewhere } from '../steps/kind.js';
import { CompileError } from './types.js';

/** Target names as diagnostics print them. */
export const targetLabel = { shell: 'shell', ansible: 'ansible', cloudInit: 'cloud-init' } as const;
export type RenderTarget = keyof typeof targetLabel;

/** The error a refusal becomes. */
export const refusalError = (s: Step, target: RenderTarget, r: Refusal): CompileError =>
  new CompileError([
    diagnostic('IMGC2002', `the ${targetLabel[target]} target cannot express ${describeStep(s)}: ${r.refuse}`, {
      loc: s.loc,
      stepId: s.id,
      hint: r.hint ?? 'use another target for this image, or change the step to something the target supports',
    }),
  ]);

export const isElsewhere = (r: unknown): r is Elsewhere<never> => typeof r === 'object' && r !== null && typeof (r as { elsewhere?: unknown }).elsewhere === 'function';

/** The rendering `r` of step `s` for `target`; a refusal (or a kind done elsewhere) throws IMGC2002. */
export const rendering = <F>(r: F | Refusal | Elsewhere, s: Step, target: RenderTarget): Exclude<F, Refusal | Elsewhere> => {
  if (isRefusal(r)) throw refusalError(s, target, r);
  if (isElsewhere(r)) throw refusalError(s, target, { refuse: `it is not a step of the target's phases (${(r as Elsewhere<Step>).elsewhere(s)})` });
  return r as Exclude<F, Refusal | Elsewhere>;
};

/** A rendering's result, or the refusal it returned for this step, thrown as IMGC2002. */
export const rendered = <T>(out: T | Refusal, s: Step, target: RenderTarget): T => {
  if (isRefusal(out)) throw refusalError(s, target, out);
  return out;
};
