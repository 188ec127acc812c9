// A step as the body of its shell function: each kind's `shell` rendering
// (src/steps) — the lines and the helpers they call. Values go through
// src/emit/shell/quote.ts; checks-before-acts live in the helpers.
import type { Step } from '../../ir/schema.js';
import type { Emitted } from '../../emit/shell/emitted.js';
import { kindOf } from '../../steps/index.js';
import type { ShellContext } from '../../steps/kind.js';
import { rendered, rendering } from '../renderings.js';

/** A step a phase script runs (its kind is `inRoot`). */
export type RootStep = Step;

export const isRootStep = (s: Step): boolean => kindOf(s).inRoot;

export type StepContext = ShellContext;

export const emitStep = (s: RootStep, ctx: StepContext): Emitted => rendered(rendering(kindOf(s).shell, s, 'shell')(s, ctx), s, 'shell');
