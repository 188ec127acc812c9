// One emitter per step kind that changes (or checks) the root: each returns
// the body of the step's shell function and the helpers it calls. Values go
// through quote.ts; checks-before-acts live in the helpers.
import { aptKeyPath, aptSourcesPath, debSources } from '../../ir/apt.js';
import type { Step, StepOf } from '../../ir/schema.js';
import type { Emitted } from '../../emit/shell/emitted.js';
import { isRegistered, kindOf, type RegisteredStep } from '../../steps/index.js';
import type { ShellContext } from '../../steps/kind.js';
import { rendered, rendering } from '../renderings.js';
import { word, words } from '../../emit/shell/quote.js';
import { validatorFor, type Validator } from '../validators.js';
import type { HelperName } from './helpers.js';

/** The helper function that checks each kind of guarded file (src/compilers/validators.ts). */
export const checkHelper: Record<Validator, { fn: string; helper: Extract<HelperName, 'checkSudoers' | 'checkSshd'> }> = {
  sudoers: { fn: 'imgc_check_sudoers', helper: 'checkSudoers' },
  sshd: { fn: 'imgc_check_sshd', helper: 'checkSshd' },
};

/** Kinds a phase script runs. */
export const rootStepKinds = [
  'user',
  'group',
  'directory',
  'file',
  'symlink',
  'packages',
  'aptRepository',
  'service',
  'sysctl',
  'kernelModule',
  'command',
] as const;
export type RootStep = StepOf<(typeof rootStepKinds)[number]> | Extract<Step, RegisteredStep>;

export const isRootStep = (s: Step): s is RootStep => (isRegistered(s) ? kindOf(s).inRoot : (rootStepKinds as readonly string[]).includes(s.kind));

export type StepContext = ShellContext;

/** A mode as the helpers take it: 4 octal digits ("644" and "00644" become "0644"). */
export const normalMode = (mode: string | undefined): string => (mode === undefined ? '' : parseInt(mode, 8).toString(8).padStart(4, '0'));

const attrs = (s: { mode?: string | undefined; owner?: string | undefined; group?: string | undefined }): string =>
  words([normalMode(s.mode), s.owner ?? '', s.group ?? '']);

const one = (line: string, ...helpers: Emitted['helpers']): Emitted => ({ lines: [line], helpers });

export const emitStep = (s: RootStep, ctx: StepContext): Emitted => {
  if (isRegistered(s)) return rendered(rendering(kindOf(s).shell, s, 'shell')(s, ctx), s, 'shell');
  switch (s.kind) {
    case 'group':
      return one(
        `imgc_group ${words([s.name, ...(s.system ? ['--system'] : []), ...(s.gid !== undefined ? ['--gid', String(s.gid)] : [])])}`,
        'group',
      );
    case 'user': {
      const opts = [
        ...(s.system ? ['--system'] : []),
        ...(s.uid !== undefined ? ['--uid', String(s.uid)] : []),
        ...(s.groups.length ? ['--groups', s.groups.join(',')] : []),
        ...(s.home !== undefined ? ['--create-home', '--home-dir', s.home] : ['--no-create-home']),
        ...(s.shell !== undefined ? ['--shell', s.shell] : []),
      ];
      return {
        lines: [
          `imgc_user ${words([s.name, s.primaryGroup ?? '', ...opts])}`,
          ...s.groups.map((g) => `imgc_member ${words([s.name, g])}`),
          ...(s.shell !== undefined ? [`imgc_user_shell ${words([s.name, s.shell])}`] : []),
        ],
        helpers: ['user', ...(s.groups.length ? (['member'] as const) : []), ...(s.shell !== undefined ? (['userShell'] as const) : [])],
      };
    }
    case 'directory':
      return one(`imgc_dir ${word(s.path)} ${attrs(s)}`, 'dir');
    case 'file': {
      const check = validatorFor(s.path);
      const call = `imgc_file ${word(s.path)} ${attrs(s)} \\\n    ${word(s.content)}`;
      if (!check) return one(call, 'file');
      return one(`imgc_checked ${checkHelper[check].fn} ${call}`, 'checked', checkHelper[check].helper, 'file');
    }
    case 'symlink':
      return one(`imgc_symlink ${words([s.path, s.target])}`, 'symlink');
    case 'packages':
      return s.action === 'install' ? ctx.pm.install(s.names) : ctx.pm.remove(s.names);
    case 'aptRepository': {
      const keyPath = aptKeyPath(s) ?? '';
      const key: Emitted =
        s.key !== undefined
          ? { lines: [`imgc_parent ${word(keyPath)}`, `imgc_file ${word(keyPath)} ${attrs({ mode: '0644' })} \\\n    ${word(s.key)}`], helpers: ['parent', 'file'] }
          : s.keyUrl !== undefined
            ? one(`imgc_fetch ${words([s.keyUrl, keyPath])}`, 'fetch')
            : { lines: [], helpers: [] };
      const after = ctx.installsAfter(s) ? ctx.pm.repositoryChanged : { lines: [], helpers: [] };
      return {
        lines: [...key.lines, `imgc_file ${word(aptSourcesPath(s.name))} ${attrs({ mode: '0644' })} \\\n    ${word(debSources(s))}`, ...after.lines],
        helpers: [...key.helpers, 'file', ...after.helpers],
      };
    }
    case 'service':
      return s.enabled ? one(`imgc_enable ${word(s.name)}`, 'enable') : one(`imgc_disable ${word(s.name)}`, 'disable');
    case 'sysctl':
      return one(`imgc_sysctl ${words([s.file, s.key, s.value])}`, 'sysctl');
    case 'kernelModule':
      return one(`imgc_module ${words([s.file, s.name])}`, 'module');
    case 'command':
      return {
        lines: [
          ...(s.needsMounts ? ['# Needs /proc, /sys and /dev mounted in the root (the imgc runner mounts them).'] : []),
          ...(s.creates !== undefined ? [`if [ -e ${word(s.creates)} ]; then`, '  return 0', 'fi'] : []),
          `/bin/sh -ec ${word(s.run)}`,
          ...(ctx.checks ? [] : ['imgc_dirty=1']),
        ],
        helpers: [],
      };
  }
};

/** What a step does, in the shared wording (the shell backend's comments use it as is). */
export { summary } from '../summary.js';
