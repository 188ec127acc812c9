// Root-changing steps (and verify-phase commands) as Ansible tasks: each
// kind's `ansible` rendering (src/steps). Every task is idempotent on its own:
// the modules compare before they change, lines are owned by a regexp, and
// raw commands are guarded by `creates` or declared change-free.
import type { Base, Step } from '../../ir/schema.js';
import { kindOf } from '../../steps/index.js';
import type { AnsibleContext } from '../../steps/kind.js';
import type { Task } from '../../emit/ansible/tasks.js';
import { rendered, rendering } from '../renderings.js';
import { conditionExpression } from '../../emit/ansible/quote.js';
import { entry, seq } from '../../emit/ansible/yaml.js';
import type { Condition } from '../../core/conditions.js';

export interface PhaseContext extends AnsibleContext {
  readonly base: Base;
}

/** A step the phase's tasks carry out (its kind's `inRoot`). */
export type RootStep = Step;

/** The tasks of one root-changing step (or a verify-phase command, `ctx.verify` set). */
export const stepTasks = (s: RootStep, ctx: PhaseContext): Task[] => {
  const tasks = rendered(rendering(kindOf(s).ansible, s, 'ansible')(s, ctx), s, 'ansible');
  return s.conditions ? tasks.map((t) => conditioned(t, s.conditions!)) : tasks;
};

/** A task under the step's conditions: `when:` holds each (a list is Ansible's "and"), after any test of the task's own. */
const conditioned = (t: Task, cs: readonly Condition[]): Task => {
  const own = t.keywords?.find((k) => k?.key === 'when');
  const tests = [...cs.map(conditionExpression), ...(own ? [own.value] : [])];
  return { ...t, keywords: [...(t.keywords ?? []).filter((k) => k !== own), entry('when', tests.length === 1 ? tests[0] : seq(tests))] };
};
