// The definition's variables in the playbook. Non-sensitive ones are role
// defaults in group_vars/all.yml (`-e` overrides them); sensitive ones are
// expected from `-e` or a vault: each play that uses one first asserts they
// are defined, and every task whose arguments hold one has `no_log: true`.
import type { Image } from '../../ir/schema.js';
import { bool, num, oneOfExpression, str, unsafe, type Scalar } from '../../emit/ansible/quote.js';
import { labelText } from '../../emit/ansible/names.js';
import { allowedValues, variablesIn } from '../../core/variables.js';
import { task, type Task } from '../../emit/ansible/tasks.js';
import { entry, map, seq, type Node } from '../../emit/ansible/yaml.js';

const referenced = (n: Node | undefined, out: Set<string>): Set<string> => {
  if (!n) return out;
  if (n.kind === 'scalar') for (const v of (n as Scalar).variables ?? []) out.add(v);
  else if (n.kind === 'map') for (const e of n.entries) referenced(e.value, out);
  else for (const i of n.items) referenced(i.value, out);
  return out;
};

const taskVariables = (t: Task): Set<string> => {
  const out = referenced(t.args, new Set());
  for (const k of t.keywords ?? []) if (k) referenced(k.value, out);
  return out;
};

/** group_vars/all.yml entries: the non-sensitive variables with their values, numbers and booleans as such (a `when:` or a module's int argument needs them typed), a list as a YAML list. */
export const variableDefaults = (ir: Image): Record<string, Node> =>
  Object.fromEntries(
    (ir.variables ?? [])
      .filter((v) => !v.sensitive)
      .map((v) => [
        v.name,
        typeof v.value === 'number' ? num(v.value) : typeof v.value === 'boolean' ? bool(v.value) : typeof v.value === 'object' ? seq(v.value.map((i) => ({ value: unsafe(i) }))) : unsafe(String(v.value)),
      ]),
  );

/**
 * A phase's groups of tasks (pre hooks, steps, post hooks), each task with
 * `no_log` where it uses a sensitive variable, and the one assert (or none)
 * that those variables are given, for the phase to run first.
 */
export const sensitiveGuard = (ir: Image, groups: readonly (readonly Task[])[]): { assert: Task[]; groups: Task[][] } => {
  const sensitive = new Set((ir.variables ?? []).filter((v) => v.sensitive).map((v) => v.name));
  if (!sensitive.size) return { assert: [], groups: groups.map((g) => [...g]) };
  const used = new Set<string>();
  const guarded = groups.map((g) =>
    g.map((t) => {
      const names = [...taskVariables(t)].filter((n) => sensitive.has(n));
      if (!names.length) return t;
      names.forEach((n) => used.add(n));
      return { ...t, keywords: [...(t.keywords ?? []), entry('no_log', bool(true))] };
    }),
  );
  if (!used.size) return { assert: [], groups: guarded };
  const names = [...used].sort();
  return {
    assert: [
      task({
        name: `Sensitive variables are given: ${names.join(', ')} (-e NAME=VALUE or a vault file)`,
        module: 'ansible.builtin.assert',
        args: map({
          that: seq(names.map((n) => ({ value: str(`${n} is defined`) }))),
          fail_msg: str(`set the sensitive variable${names.length > 1 ? 's' : ''} ${names.join(', ')} with -e or a vault file`),
          quiet: bool(true),
        }),
        keywords: [entry('no_log', bool(true))],
      }),
    ],
    groups: guarded,
  };
};

/**
 * One assert per boolean or z.enum variable `used` references, before its
 * steps: a condition compares the value as text, so `-e gpu=yes` or a
 * misspelt value would otherwise silently take the other branch (the shell
 * target checks the same in its prologue).
 */
export const valueChecks = (ir: Image, used: unknown): Task[] =>
  variablesIn(ir, used).flatMap((v) => {
    const values = allowedValues(v);
    if (!values) return [];
    return [
      task({
        name: `Variable ${v.name} is one of: ${values.map(labelText).join(', ')}`,
        module: 'ansible.builtin.assert',
        args: map({
          that: seq([{ value: oneOfExpression(v.name, v.type === 'boolean', values) }]),
          fail_msg: unsafe(`variable ${v.name} is none of: ${values.join(', ')}`),
          quiet: bool(true),
        }),
      }),
    ];
  });
