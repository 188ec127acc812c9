// Root-changing steps (and verify-phase commands) as Ansible tasks. Every task
// is idempotent on its own: the modules compare before they change, lines are
// owned by a regexp, and raw commands are guarded by `creates` or declared
// change-free.
import { validatorCommand, validatorFor } from '../validators.js';
import { aptKeyPath, aptSourcesPath, debSources } from '../../ir/apt.js';
import type { Base, Step, StepOf } from '../../ir/schema.js';
import { isRegistered, kindOf, type RegisteredStep } from '../../steps/index.js';
import type { AnsibleContext } from '../../steps/kind.js';
import { rendered, rendering } from '../renderings.js';
import { firstLine, labelText, stepTaskName } from '../../emit/ansible/names.js';
import { packageManagers } from './packages.js';
import { bool, int, mode, pythonRegexLiteral, str, unsafe, word } from '../../emit/ansible/quote.js';
import { task, type Task } from '../../emit/ansible/tasks.js';
import { entry, map, seq } from '../../emit/ansible/yaml.js';
import { rawCommandNoqa } from '../../emit/ansible/lint.js';

export interface PhaseContext extends AnsibleContext {
  readonly base: Base;
}

const name = stepTaskName;

const NO_MODE_NOTE = 'No mode declared: an existing path keeps its mode, a new one gets the umask default.';

/** owner/group/mode arguments, and the lint skip a missing mode needs. */
/** `validate:` for a file a syntax error in would lock people out (../validators.ts). */
const validateArg = (path: string) => {
  const check = validatorFor(path);
  return check ? { validate: unsafe(validatorCommand(check)) } : {};
};

const ownership = (s: { owner?: string; group?: string; mode?: string }) => ({
  args: { owner: s.owner !== undefined ? unsafe(s.owner) : undefined, group: s.group !== undefined ? unsafe(s.group) : undefined, mode: s.mode !== undefined ? mode(s.mode) : undefined },
  ...(s.mode === undefined ? { comments: [NO_MODE_NOTE], noqa: ['risky-file-permissions'] } : {}),
});

/** A systemd unit name: a bare name means `.service` (systemctl needs the suffix in a chroot). */
const unitName = (n: string): string =>
  /\.(service|socket|timer|target|path|mount|automount|swap|slice|scope|device)$/.test(n) ? n : `${n}.service`;

const userTasks = (s: StepOf<'user'>): Task[] => {
  const own = s.primaryGroup === undefined;
  return [
    // useradd would make the user's own group (USERGROUPS); Ansible's user module does not
    // when one exists already, so the group is made explicitly and set as primary.
    ...(own
      ? [
          task({
            name: name(`Group ${labelText(s.name)} for user ${labelText(s.name)}`, s),
            module: 'ansible.builtin.group',
            args: map({ name: unsafe(s.name), system: s.system ? bool(true) : undefined }),
          }),
        ]
      : []),
    task({
      name: name(`User ${labelText(s.name)}`, s),
      module: 'ansible.builtin.user',
      args: map({
        name: unsafe(s.name),
        uid: s.uid !== undefined ? int(s.uid) : undefined,
        group: unsafe(s.primaryGroup ?? s.name),
        groups: s.groups.length ? seq(s.groups.map(unsafe)) : undefined,
        append: s.groups.length ? bool(true) : undefined,
        home: s.home !== undefined ? unsafe(s.home) : undefined,
        create_home: bool(s.home !== undefined),
        shell: s.shell !== undefined ? unsafe(s.shell) : undefined,
        system: s.system ? bool(true) : undefined,
      }),
    }),
  ];
};

const aptRepositoryTasks = (s: StepOf<'aptRepository'>, ctx: PhaseContext): Task[] => {
  // The schema allows apt repositories on apt bases only, and keeps each field to one word.
  const keyPath = aptKeyPath(s);
  const sources = debSources(s);
  const repo = labelText(s.name);
  ctx.refresh = true;
  return [
    ...(s.key !== undefined && keyPath
      ? [
          task({
            name: name(`Apt repository ${repo}: signing key`, s),
            module: 'ansible.builtin.copy',
            args: map({ content: unsafe(s.key), dest: unsafe(keyPath), mode: mode('0644') }),
          }),
        ]
      : s.keyUrl !== undefined && keyPath
        ? [
            task({
              name: name(`Apt repository ${repo}: signing key`, s),
              module: 'ansible.builtin.get_url',
              comments: ['Downloaded only when the key file is missing (force: false).'],
              args: map({ url: unsafe(s.keyUrl), dest: unsafe(keyPath), mode: mode('0644'), force: bool(false) }),
            }),
          ]
        : []),
    // ansible.builtin.deb822_repository is not in ansible-core 2.14: the .sources file is written as a file.
    task({
      name: name(`Apt repository ${repo}: sources`, s),
      module: 'ansible.builtin.copy',
      args: map({ content: unsafe(sources), dest: unsafe(aptSourcesPath(s.name)), mode: mode('0644') }),
    }),
  ];
};

const commandTask = (s: StepOf<'command'>, verify: boolean): Task => {
  const comments = [
    'A raw command from the definition, run by /bin/sh as written.',
    ...(s.creates === undefined ? [verify ? 'A check: it changes nothing and fails the play by exiting non-zero.' : 'No `creates`: the command is assumed idempotent; it runs every time and reports ok.'] : []),
    ...(s.needsMounts ? ['Needs /proc, /sys and /dev mounted in a chroot (the runner mounts them).'] : []),
  ];
  return task({
    name: name(`${verify ? 'Check' : 'Command'}: ${s.description !== undefined ? labelText(s.description) : firstLine(s.run)}`, s),
    module: 'ansible.builtin.shell',
    comments,
    noqa: rawCommandNoqa(s.run),
    args: map({ cmd: unsafe(s.run), executable: word('/bin/sh'), creates: s.creates !== undefined ? unsafe(s.creates) : undefined }),
    keywords: [s.creates === undefined ? entry('changed_when', bool(false)) : undefined],
  });
};

export type RootStep =
  | StepOf<'user' | 'group' | 'directory' | 'file' | 'symlink' | 'packages' | 'aptRepository' | 'service' | 'sysctl' | 'kernelModule' | 'command'>
  | Extract<Step, RegisteredStep>;

/** The tasks of one root-changing step (or a verify-phase command, `verify` set). */
export const stepTasks = (s: RootStep, ctx: PhaseContext): Task[] => {
  if (isRegistered(s)) return rendered(rendering(kindOf(s).ansible, s, 'ansible')(s, ctx), s, 'ansible');
  const verify = ctx.verify ?? false;
  switch (s.kind) {
    case 'group':
      return [
        task({
          name: name(`Group ${labelText(s.name)}`, s),
          module: 'ansible.builtin.group',
          args: map({ name: unsafe(s.name), gid: s.gid !== undefined ? int(s.gid) : undefined, system: s.system ? bool(true) : undefined }),
        }),
      ];
    case 'user':
      return userTasks(s);
    case 'directory': {
      const o = ownership(s);
      return [
        task({
          name: name(`Directory ${labelText(s.path)}`, s),
          module: 'ansible.builtin.file',
          ...o,
          args: map({ path: unsafe(s.path), state: word('directory'), ...o.args }),
        }),
      ];
    }
    case 'file': {
      const o = ownership(s);
      return [
        task({
          name: name(`File ${labelText(s.path)}`, s),
          module: 'ansible.builtin.copy',
          ...o,
          args: map({ content: unsafe(s.content), dest: unsafe(s.path), ...o.args, ...validateArg(s.path) }),
        }),
      ];
    }
    case 'symlink':
      return [
        task({
          name: name(`Symlink ${labelText(s.path)} -> ${labelText(s.target)}`, s),
          module: 'ansible.builtin.file',
          args: map({ path: unsafe(s.path), src: unsafe(s.target), state: word('link') }),
        }),
      ];
    case 'packages': {
      const pm = packageManagers[ctx.base.packageManager];
      const list = labelText(s.names.join(', '));
      if (s.action === 'remove') return [task({ name: name(`Remove ${list}`, s), module: pm.module, args: pm.remove(s.names) })];
      const refresh = ctx.refresh;
      ctx.refresh = false;
      return [
        task({
          name: name(`Install ${list}`, s),
          module: pm.module,
          ...(refresh ? { comments: [pm.refreshNote] } : {}),
          args: pm.install(s.names, refresh),
        }),
      ];
    }
    case 'aptRepository':
      return aptRepositoryTasks(s, ctx);
    case 'service':
      ctx.notes.add('Services are only enabled or disabled (symlinks, works offline in a chroot); nothing is started.');
      return [
        task({
          name: name(`${s.enabled ? 'Enable' : 'Disable'} ${labelText(unitName(s.name))}`, s),
          module: 'ansible.builtin.systemd_service',
          args: map({ name: unsafe(unitName(s.name)), enabled: bool(s.enabled) }),
        }),
      ];
    case 'sysctl': {
      ctx.notes.add(
        'Sysctls are written to sysctl.d (systemd-sysctl applies them at boot); a build root cannot apply them, so sysctl -w/-p is never run. Each step owns its key\'s line.',
      );
      return [
        task({
          name: name(`Sysctl ${labelText(`${s.key} = ${s.value}`)}`, s),
          module: 'ansible.builtin.lineinfile',
          args: map({
            path: unsafe(s.file),
            regexp: unsafe(`^\\s*${pythonRegexLiteral(s.key)}\\s*=`),
            line: unsafe(`${s.key} = ${s.value}`),
            create: bool(true),
            mode: mode('0644'),
          }),
        }),
      ];
    }
    case 'kernelModule':
      ctx.notes.add('Kernel modules are listed in modules-load.d for systemd to load at boot; loading one is not possible in an image build.');
      return [
        task({
          name: name(`Kernel module ${labelText(s.name)} at boot`, s),
          module: 'ansible.builtin.lineinfile',
          args: map({
            path: unsafe(s.file),
            regexp: unsafe(`^\\s*${pythonRegexLiteral(s.name)}\\s*$`),
            line: unsafe(s.name),
            create: bool(true),
            mode: mode('0644'),
          }),
        }),
      ];
    case 'command':
      return [commandTask(s, verify)];
  }
};
