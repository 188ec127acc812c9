// The registry of step kinds: every kind imgc knows, by name. The IR's Step
// union is composed from their schemas (src/ir/schema.ts); checker, targets,
// runtime and verify look a step's kind up here instead of switching over
// kind names. To add a kind: write src/steps/<kind>.ts (./kind.ts says what
// it holds), list it below, and give the builder a method that calls `make`.
import type { z } from '../util/zod.js';
import type { StepCommon, StepKind } from './kind.js';
import { swapOff } from './swap-off.js';
import { clean } from './clean.js';
import { mask } from './mask.js';
import { hold } from './hold.js';

export const kinds = { swapOff, clean, mask, hold } as const;

export type KindName = keyof typeof kinds;
/** The IR shape of the registered kinds' steps. */
export type RegisteredStep = z.infer<(typeof kinds)[KindName]['schema']>;

const registered = new Map<string, StepKind>(Object.entries(kinds).map(([name, k]) => [name, k as unknown as StepKind]));

/** Whether step `s` is of a registered kind (while kinds move here from the old switches). */
export const isRegistered = <S extends StepCommon>(s: S): s is Extract<S, RegisteredStep> => registered.has(s.kind);

/** The kind of step `s`. */
export const kindOf = <S extends RegisteredStep>(s: S): StepKind<S> => registered.get(s.kind) as unknown as StepKind<S>;

/** The registry's kind names, in registration order. */
export const kindNames = (): string[] => [...registered.keys()];

/** Outputs whose step comments may be worded their own way by a kind. */
export type CommentTarget = 'cloudInit' | 'packer';

/** The comment above a step of a registered kind in an output: the target's own wording where the kind has one. */
export const commentOf = (s: RegisteredStep, target?: CommentTarget): string => {
  const k = kindOf(s);
  const r = target === 'cloudInit' ? k.cloudInit : undefined;
  const own = target === 'packer' ? k.packer?.comment : r !== undefined && 'run' in r ? r.comment : undefined;
  return (own ?? k.comment)(s);
};

export { isRefusal, type Refusal, type StepKind, type StepCommon } from './kind.js';
