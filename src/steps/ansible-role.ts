// ansibleRole: an existing Ansible role, applied as one step with the facts it
// declares (like `command`, imgc cannot see into it). The builder reads the
// role's directory when the definition runs and the IR carries its files, so
// every output that applies the role holds a copy of it (self-contained), and
// a changed role file changes the IR: the build's phase key and the loader's
// cache follow it. The ansible target applies it natively (import_role); the
// shell target's build applies that same import from the build machine
// (`fromBuildMachine`), between parts of the phase script. Where steps run
// only inside the root or on the host (provision.sh, cloud-init, Packer's
// shell provisioner) it is refused (docs/ansible-role.md).
import { z } from '../util/zod.js';
import { stepBase } from '../core/fields.js';
import { bool, num, unsafe, word, type Scalar } from '../emit/ansible/quote.js';
import { entry, map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { DefinitionError } from '../core/definition-error.js';
import { declared, type DeclaredFacts } from './shared.js';
import type { MakeContext, StepInput, StepKind } from './kind.js';

/** ansible-lint's role-name rule: the name a copy of the role goes by in outputs. */
export const RoleName = z.string().regex(/^[a-z][a-z0-9_]*$/, 'a role name is lower-case letters, digits and "_", starting with a letter');
/** A file of the role: its path under the role's directory ("/" separated, no ".." or absolute paths) and its text. */
export const RoleFile = z
  .object({
    path: z.string().regex(/^(?:(?!\.\.?\/)[^/\0]+\/)*(?!\.\.?$)[^/\0]+$/, 'a role file path is relative to the role, without empty, "." or ".." parts'),
    text: z.string(),
  })
  .strict();
/** A role variable's value: what every target writes as a YAML scalar. */
export const RoleVarValue = z.union([z.string(), z.number().finite(), z.boolean()]);

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('ansibleRole'),
    name: RoleName,
    /** The role's directory as written in the definition, relative to it (for messages). */
    source: z.string().min(1),
    files: z.array(RoleFile).min(1),
    vars: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a role variable name is letters, digits and "_", not starting with a digit'), RoleVarValue),
  })
  .strict();
export type AnsibleRoleStep = z.infer<typeof schema>;

/** The files under which a role's copy goes in an output: `roles/<name>/…` (the ansible target's roles_path). */
export const roleFilePath = (s: Pick<AnsibleRoleStep, 'name'>, file: string): string => `roles/${s.name}/${file}`;

const scalar = (v: string | number | boolean): Scalar => (typeof v === 'string' ? unsafe(v) : typeof v === 'number' ? num(v) : bool(v));

/**
 * provision.sh runs on the host itself (`ssh host sudo sh -s`, one script on
 * stdin): no copy of the role travels there, and applying it would take
 * Ansible on every host; ansible --runtime already does it properly.
 */
const onHost = {
  refuse: 'provision.sh runs on the host itself as one script (ssh host sudo sh -s), which carries no copy of the role and no ansible-playbook to apply it',
  hint: 'apply it to existing hosts with --target ansible --runtime (runtime.yml imports the role, its copy beside it), or build it into the image with --target shell or --target ansible',
};

/** The role read from directory `root`: its name in outputs (the directory's, `-` as `_`) and its files; throws why it is not one. */
const roleOf = (root: string, files: { path: string; text: string }[]): { name: string; files: { path: string; text: string }[] } => {
  // Hyphens are common in role directory names; ansible-lint's role-name rule wants "_".
  const name = (root.split('/').pop() ?? '').replace(/-/g, '_');
  if (!RoleName.safeParse(name).success)
    throw new Error(`the role's copy is named after its directory, and '${name}' is not a role name (lower-case letters, digits and "_", starting with a letter): rename the directory`);
  if (!files.some((f) => f.path === 'tasks/main.yml' || f.path === 'tasks/main.yaml')) throw new Error(`${root} has no tasks/main.yml (or tasks/main.yaml): not an Ansible role`);
  return { name, files };
};

export interface AnsibleRoleOptions extends DeclaredFacts {
  description?: string;
  /** The role's variables, passed with the import (role vars: they override its defaults). */
  vars?: Readonly<Record<string, string | number | boolean>>;
}

export const ansibleRole = {
  kind: 'ansibleRole',
  schema,
  /** The role's directory (relative to the calling file) is read now: the IR carries its files. */
  make: ({ readTextTree }: MakeContext, dir: string, opts: AnsibleRoleOptions = {}): StepInput<AnsibleRoleStep> => {
    let role: { name: string; files: { path: string; text: string }[] };
    try {
      const tree = readTextTree(dir);
      role = roleOf(tree.root, tree.files);
    } catch (e) {
      throw new DefinitionError(`ansibleRole('${dir}'): ${(e as Error).message}`);
    }
    return {
      kind: 'ansibleRole',
      name: role.name,
      source: dir,
      files: role.files,
      vars: { ...(opts.vars ?? {}) },
      ...(opts.description ? { description: opts.description } : {}),
      provides: declared(opts.provides),
      requires: declared(opts.requires),
      removes: declared(opts.removes),
    };
  },

  describe: (s) => `ansible role '${s.name}'`,
  comment: (s) => s.description ?? `apply the Ansible role ${s.source}`,
  // Opaque: nothing moves across it (cloud-init's plan), and it may write anywhere.
  opaque: true,
  inRoot: true,
  // A role may install packages or start anything: a resolver and the kernel filesystems, as for a raw command.
  chroot: { mounts: () => true, network: () => true },
  /** The role's copy, for the outputs that apply it. */
  carries: (s) => s.files.map((f) => ({ path: roleFilePath(s, f.path), text: f.text })),

  // The shell target's image build applies the `ansible` rendering below from the build machine.
  fromBuildMachine: 'ansible-playbook',
  shell: onHost,
  ansible: (s) => {
    const names = Object.keys(s.vars).sort();
    return [
      task({
        name: stepTaskName(`Role ${labelText(s.name)}${s.description !== undefined ? `: ${labelText(s.description)}` : ''}`, s),
        module: 'ansible.builtin.import_role',
        comments: [
          `The role ${labelText(s.source)} of the definition, copied to roles/${s.name}; imgc checks only the facts it declares.`,
          // import_role (static), not include_role: the task's keywords are inherited by the role's tasks.
          'Imported statically: whatever tags and conditions this task has reach each of its tasks.',
        ],
        args: map({ name: word(s.name) }),
        keywords: [names.length ? entry('vars', map(Object.fromEntries(names.map((n) => [n, scalar(s.vars[n]!)])))) : undefined],
      }),
    ];
  },
  cloudInit: {
    refuse: 'cloud-init runs no Ansible role: its commands run on the booting node, which has no copy of the role or ansible-playbook',
    hint: 'apply the role with --target ansible (or a Packer image built with --provisioner ansible) and boot that image; or say what the role does with imgc steps',
  },
  packer: { comment: (s) => `ansible role ${s.name} (${s.source})` },

  runtime: () => ({ creations: [], kept: 'an Ansible role cannot be inverted: what it did stays' }),

  verify: {},
} as const satisfies StepKind<AnsibleRoleStep>;
