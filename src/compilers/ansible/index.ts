// The ansible backend: the IR as a playbook, one play and one role per phase.
//
//   site.yml                     plays in phase order, tagged with the phase
//   roles/<phase>/tasks/main.yml the phase's pre hooks, steps and post hooks
//   group_vars/all.yml           imgc_image, imgc_base, imgc_source
//   ansible.cfg                  relative roles path, no facts, quiet interpreter discovery
//   inventory.example            a chroot directory and an SSH host
//
// YAML is written by ./yaml.ts with every scalar from ./quote.ts (user data as
// `!unsafe`), not by the `yaml` package: its stringifier can tag scalars but
// not pick the style per value (literal blocks for file contents, folding that
// keeps ansible-lint's line limit) or place `# noqa` comments on a task's line.
import type { Image, Phase, SourceLocation, Step } from '../../ir/schema.js';
import { assertCompilable } from '../representable.js';
import type { CompiledFiles, CompileOptions, Compiler } from '../types.js';
import { guardedBlock, hookTasks } from './hooks.js';
import { labelName, labelText } from '../../emit/ansible/names.js';
import { bool, ident, label, word } from '../../emit/ansible/quote.js';
import { stepTasks, type PhaseContext, type RootStep } from './steps.js';
import { kindOf } from '../../steps/index.js';
import type { Elsewhere } from '../../steps/kind.js';
import { isElsewhere } from '../renderings.js';
import { taskItem, type Task } from '../../emit/ansible/tasks.js';
import { sensitiveGuard, valueChecks } from './variables.js';
import { ansibleCfg, groupVars } from './files.js';
import { document, map, seq, type Item } from '../../emit/ansible/yaml.js';
import { ansibleRuntime } from './runtime.js';
import { ansibleDecommission } from './decommission.js';
import { imageView } from '../../ir/phases.js';
import { withCarried } from '../carried.js';

/** Role directory of a phase: ansible-lint's role-name wants [a-z][a-z0-9_]*; phase names never hold `_`. */
export const roleName = (phase: string): string => phase.replace(/-/g, '_');

const at = (loc: SourceLocation | undefined): string => (loc ? ` (${labelText(loc.file)}:${loc.line})` : '');

/** What a step that Ansible does not carry out is, and who does it. */
const elsewhere = (s: Step): string | undefined => {
  const r = kindOf(s).ansible;
  return isElsewhere(r) ? `${s.id}: ${(r as Elsewhere<Step>).elsewhere(s)}` : undefined;
};

interface CompiledPhase {
  phase: Phase;
  items: Item[];
  notes: string[];
  skipped: string[];
}

/** `booted`: the play runs on Packer's VM, not in a chroot. */
const compilePhase = (ir: Image, phase: Phase, booted: boolean): CompiledPhase => {
  const ctx: PhaseContext = { base: ir.base, refresh: true, notes: new Set(), verify: phase.name === 'verify', booted };
  const skipped: string[] = [];
  const pre = phase.pre.flatMap((h) => hookTasks(h, phase.name, { onHosts: false }));
  const steps: Task[] = [];
  for (const s of phase.steps) {
    const other = elsewhere(s);
    if (other !== undefined) skipped.push(other);
    else steps.push(...stepTasks(s as RootStep, ctx));
  }
  const post = phase.post.flatMap((h) => hookTasks(h, phase.name, { onHosts: false }));
  const { assert, groups } = sensitiveGuard(ir, [pre, steps, post]);
  const [hiddenPre = [], body = [], hiddenPost = []] = groups;
  // With post hooks, a failing step still fires them (result failed, the message) before the host fails.
  const guarded: Item[] = post.length && body.length ? [guardedBlock(phase, body, false)] : body.map(taskItem);
  const items = [...valueChecks(ir, phase), ...assert, ...hiddenPre].map(taskItem).concat(guarded, hiddenPost.map(taskItem));
  return { phase, items, notes: [...ctx.notes], skipped };
};

const tasksFile = (ir: Image, c: CompiledPhase): string =>
  document(seq(c.items, { spaced: true }), [
    `Phase ${c.phase.name}${at(c.phase.loc)} of ${ir.name}: written by imgc from ${labelText(ir.source)}; edit the definition, not this file.`,
    ...(c.phase.runtime ? ['This phase may also run at runtime on existing hosts (--tags ' + c.phase.name + ').'] : []),
    ...c.notes,
    ...(c.skipped.length ? ['Not done by Ansible:', ...c.skipped.map((s) => `  ${s}`)] : []),
  ]);

const siteFile = (ir: Image, played: CompiledPhase[], empty: CompiledPhase[]): string =>
  document(
    seq(
      played.map((c) => ({
        value: map({
          name: label(labelName(`Phase ${c.phase.name}${at(c.phase.loc)}`)),
          hosts: word('all'),
          gather_facts: bool(false),
          tags: seq([ident(c.phase.name)]),
          roles: seq([map({ role: ident(roleName(c.phase.name)) })]),
        }),
      })),
      { spaced: true },
    ),
    [
      `${ir.name} (base ${ir.base.name}): written by imgc from ${labelText(ir.source)}; edit the definition, not this file.`,
      '',
      'One play per phase, in the definition\'s order, each applying the role of the same',
      'name and tagged with it. A role per phase keeps a phase one unit: `--tags NAME` runs',
      'it alone, and a runtime phase\'s role can be applied by itself to existing hosts.',
      'No play gathers facts (no module here needs them) or uses become: a chroot runs as',
      'root; for an SSH host set ansible_become in the inventory (see inventory.example).',
      '',
      'A chroot directory: ansible-playbook -i /path/to/root, -c community.general.chroot site.yml',
      ...(empty.length
        ? ['', 'Phases with nothing for Ansible to do (no play):', ...empty.flatMap((c) => [`  ${c.phase.name}:`, ...c.skipped.map((s) => `    ${s}`)])]
        : []),
    ],
  );

const inventoryExample = (ir: Image): string => {
  const runtime = ir.phases.filter((p) => p.runtime).map((p) => p.name);
  return [
    '# Example inventory for site.yml (written by imgc): copy it to `inventory`, keep one group.',
    '#',
    '# A chroot directory (the root being built); the directory is the host name. Run as root.',
    '# The root needs /usr/bin/python3 (e.g. debootstrap --include=python3,python3-apt); without',
    '# python3-apt, ansible.builtin.apt installs it (needs the mirror). Module temp files go to the',
    "# root's /tmp, not /root/.ansible. Or, with no inventory file:",
    '#   ansible-playbook -i /path/to/root, -c community.general.chroot site.yml',
    '[chroot]',
    '/path/to/root ansible_connection=community.general.chroot ansible_python_interpreter=/usr/bin/python3 ansible_remote_tmp=/tmp/.ansible-imgc',
    '',
    runtime.length
      ? `# An existing host over SSH, e.g. for the runtime phase${runtime.length > 1 ? 's' : ''} only:`
      : '# An existing host over SSH:',
    `#   ansible-playbook -i inventory --limit ssh${runtime.length ? ` --tags ${runtime.join(',')}` : ''} site.yml`,
    '[ssh]',
    'node1.example.com ansible_user=admin ansible_become=true',
    '',
  ].join('\n');
};

export const ansibleCompiler: Compiler = {
  target: 'ansible',
  description: 'Ansible playbook: site.yml, one role per phase (ansible-core 2.14; runs on a chroot or an SSH host)',
  compile(given: Image, opts: CompileOptions = {}): CompiledFiles {
    // The schema and unrepresentable strings; Ansible itself can express
    // every step kind on apt and dnf bases, so nothing is refused below.
    assertCompilable(given);
    const ir = opts.runtime || opts.decommission ? given : imageView(given);
    // --runtime / --decommission: playbooks for existing hosts instead of the build (./runtime.ts).
    if (opts.runtime || opts.decommission) {
      const host = { ...(opts.runtime ? ansibleRuntime(ir, opts) : {}), ...(opts.decommission ? ansibleDecommission(ir, opts) : {}) };
      return Object.fromEntries(Object.entries(host).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    const compiled = ir.phases.map((p) => compilePhase(ir, p, opts.booted === true));
    const played = compiled.filter((c) => c.items.length > 0);
    const empty = compiled.filter((c) => c.items.length === 0);
    const files: CompiledFiles = {
      'site.yml': siteFile(ir, played, empty),
      'group_vars/all.yml': groupVars(ir),
      'ansible.cfg': ansibleCfg,
      'inventory.example': inventoryExample(ir),
    };
    for (const c of played) files[`roles/${roleName(c.phase.name)}/tasks/main.yml`] = tasksFile(ir, c);
    const all = withCarried(files, ir.phases.flatMap((p) => p.steps), 'ansible');
    return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  },
};
