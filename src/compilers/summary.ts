// The few words on what a step does that every backend puts in a comment
// above (or next to) it: the step kind's `comment` (src/steps), or the
// target's own wording where the kind has one.
import type { Step } from '../ir/schema.js';
import { commentOf, type CommentTarget } from '../steps/index.js';

/** A few words on what a step does, for the comment above it. */
export const summary = (s: Step, target?: CommentTarget): string => commentOf(s, target);
