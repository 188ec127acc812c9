// One Ansible task: name, one module call, task keywords; rendered as a list item.
import { label, type Scalar } from './quote.js';
import { entry, map, type Entry, type Item, type Node, type YMap } from './yaml.js';

export interface Task {
  readonly name: string;
  /** Fully qualified module name. */
  readonly module: string;
  /** Its arguments; a scalar only for the free-form-only modules (raw). */
  readonly args: YMap | Scalar;
  /** Task keywords after the module: vars, delegate_to, register, changed_when… */
  readonly keywords?: readonly (Entry | undefined)[];
  readonly comments?: readonly string[];
  /** ansible-lint rules this task knowingly trips (each with a comment saying why). */
  readonly noqa?: readonly string[];
}

export const task = (t: Task): Task => t;

// ansible-lint's no-tabs allows tabs in these arguments only.
const tabsAllowed = new Set(['ansible.builtin.lineinfile:line', 'ansible.builtin.lineinfile:regexp']);

const userValues = (n: Node, path: string, out: [string, string][]): void => {
  if (n.kind === 'scalar') {
    if ((n as Scalar).value !== undefined) out.push([path, (n as Scalar).value!]);
  } else if (n.kind === 'map') for (const e of n.entries) userValues(e.value, e.key, out);
  else for (const i of n.items) userValues(i.value, path, out);
};

export const taskItem = (t: Task): Item => {
  const values: [string, string][] = [];
  userValues(t.args, '', values);
  for (const k of t.keywords ?? []) if (k) userValues(k.value, k.key, values);
  const tabs = values.some(([k, v]) => v.includes('\t') && !tabsAllowed.has(`${t.module}:${k}`));
  // ansible-lint inspects `!unsafe` text as if it were a template; it is data.
  const jinja = values.some(([, v]) => /\{\{|\{%|\{#/.test(v));
  const noqa = [...(t.noqa ?? []), ...(jinja ? ['jinja'] : []), ...(tabs ? ['no-tabs'] : [])];
  const comments = [
    ...(t.comments ?? []),
    ...(jinja ? ['Template-like text below is data (!unsafe): Ansible never evaluates it.'] : []),
    ...(tabs ? ['A value below holds a tab character (user data, kept as is).'] : []),
  ];
  return {
    value: map([entry('name', label(t.name)), entry(t.module, t.args), ...(t.keywords ?? [])]),
    ...(comments.length ? { comments } : {}),
    ...(noqa.length ? { noqa } : {}),
  };
};
