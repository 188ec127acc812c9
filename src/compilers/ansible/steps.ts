// Root-changing steps (and verify-phase commands) as Ansible tasks: each
// kind's `ansible` rendering (src/steps). Every task is idempotent on its own:
// the modules compare before they change, lines are owned by a regexp, and
// raw commands are guarded by `creates` or declared change-free.
import type { Base, Step } from '../../ir/schema.js';
import { kindOf } from '../../steps/index.js';
import type { AnsibleContext } from '../../steps/kind.js';
import type { Task } from '../../emit/ansible/tasks.js';
import { rendered, rendering } from '../renderings.js';

export interface PhaseContext extends AnsibleContext {
  readonly base: Base;
}

/** A step the phase's tasks carry out (its kind's `inRoot`). */
export type RootStep = Step;

/** The tasks of one root-changing step (or a verify-phase command, `ctx.verify` set). */
export const stepTasks = (s: RootStep, ctx: PhaseContext): Task[] => rendered(rendering(kindOf(s).ansible, s, 'ansible')(s, ctx), s, 'ansible');
