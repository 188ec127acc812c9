// puppetApply: an existing Puppet manifest (and its modules), applied inside
// the root with `puppet apply` as one step with the facts it declares (like
// `command`, imgc cannot see into it). The builder reads the manifest and the
// module directory when the definition runs and the IR carries their text, so
// every output holds them and a changed file changes the IR (the build's
// phase key follows it). Each target writes them to a directory of its own
// under /run, applies them with --detailed-exitcodes (2: changes made, 0:
// none, anything else: failure, with Puppet's messages) and removes the
// directory; the root needs the puppet package (docs/puppet-apply.md). Chef
// has no kind: Debian 12 packages no chef client to test one against.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { stepBase } from '../core/fields.js';
import { word } from '../emit/shell/quote.js';
import { bool, mode, str, template, unsafe, word as aWord } from '../emit/ansible/quote.js';
import { entry, map, seq } from '../emit/ansible/yaml.js';
import { task, type Task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { DefinitionError } from '../core/definition-error.js';
import { call, declared, type DeclaredFacts } from './shared.js';
import type { MakeContext, StepInput, StepKind } from './kind.js';

/** The package whose `puppet` command applies the manifest (Debian's name). */
export const PUPPET_PACKAGE = 'puppet';

/**
 * A file of the module directory: its path under it and its text. Paths keep
 * to the characters Puppet module trees use, so every target writes them as
 * they are (Ansible's destination path, the shell's arguments).
 */
const ModuleFile = z
  .object({
    path: z.string().regex(/^(?:(?!\.\.?\/)[A-Za-z0-9_.+@=,-]+\/)*(?!\.\.?$)[A-Za-z0-9_.+@=,-]+$/, 'a module file path is relative to the module directory: letters, digits and "_.+@=,-" between "/", without "." or ".." parts'),
    text: z.string(),
  })
  .strict();

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('puppetApply'),
    /** The manifest as written in the definition, relative to it (for messages). */
    source: z.string().min(1),
    /** Its file name, which Puppet's messages name, and its text. */
    manifest: z.object({ name: z.string().regex(/^[A-Za-z0-9_.+@=,-]+\.pp$/, 'a manifest is a .pp file named with letters, digits and "_.+@=,-"'), text: z.string() }).strict(),
    /** The module directory as written in the definition, and its files: Puppet's whole --modulepath. */
    modules: z.object({ source: z.string().min(1), files: z.array(ModuleFile).min(1) }).strict().optional(),
  })
  .strict();
export type PuppetApplyStep = z.infer<typeof schema>;

/** Where an output writes the manifest and modules for the run; removed after it (the shell helper makes its own with mktemp). */
const runDir = (s: PuppetApplyStep): string => `/run/imgc-puppet.${s.id}`;

/** The registered result of the Ansible run: a one-word variable name per step. */
const result = (s: PuppetApplyStep): string => `imgc_${s.id.replace(/[^A-Za-z0-9]/g, '_').toLowerCase()}`;

/** The arguments of the helper (shell, cloud-init): the manifest's name and text, then each module file's path and text. */
const helperArgs = (s: PuppetApplyStep): string[] => [s.manifest.name, s.manifest.text, ...(s.modules?.files ?? []).flatMap((f) => [f.path, f.text])];

/** The directories under the run directory a module file needs, parents first. */
const moduleDirs = (s: PuppetApplyStep): string[] => {
  const dirs = new Set<string>();
  for (const f of s.modules?.files ?? []) {
    const parts = `modules/${f.path}`.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return [...dirs].sort();
};

const ansibleTasks = (s: PuppetApplyStep): Task[] => {
  const dir = runDir(s);
  const reg = result(s);
  const name = (what: string): string => stepTaskName(`Puppet ${labelText(s.manifest.name)}: ${what}`, s);
  // Writing and removing the run's copy changes nothing of the node: only Puppet's own run may report a change.
  const scaffold = entry('changed_when', bool(false));
  const argv = ['puppet', 'apply', '--detailed-exitcodes', '--color=false', ...(s.modules ? ['--modulepath', `${dir}/modules`] : []), `${dir}/${s.manifest.name}`];
  return [
    // A copy a failed run left behind goes first: the run sees exactly the definition's files.
    task({ name: name('no earlier copy'), module: 'ansible.builtin.file', args: map({ path: unsafe(dir), state: aWord('absent') }), keywords: [scaffold] }),
    ...['', ...moduleDirs(s)].map((d) =>
      task({
        name: name(d === '' ? 'the copy\'s directory' : `directory ${labelText(d)}`),
        module: 'ansible.builtin.file',
        args: map({ path: unsafe(d === '' ? dir : `${dir}/${d}`), state: aWord('directory'), owner: aWord('root'), group: aWord('root'), mode: mode('0700') }),
        keywords: [scaffold],
      }),
    ),
    ...[{ path: s.manifest.name, text: s.manifest.text }, ...(s.modules?.files ?? []).map((f) => ({ path: `modules/${f.path}`, text: f.text }))].map((f) =>
      task({
        name: name(`copy ${labelText(f.path)}`),
        module: 'ansible.builtin.copy',
        args: map({ content: unsafe(f.text), dest: unsafe(`${dir}/${f.path}`), owner: aWord('root'), group: aWord('root'), mode: mode('0600') }),
        keywords: [scaffold],
      }),
    ),
    task({
      name: name('apply'),
      module: 'ansible.builtin.command',
      comments: [
        `The Puppet manifest ${labelText(s.source)} of the definition; imgc checks only the facts it declares.`,
        '--detailed-exitcodes: 2 is changes made, 0 none; the task after the cleanup fails on anything else.',
      ],
      args: map({ argv: seq(argv.map(unsafe)) }),
      keywords: [entry('register', aWord(reg)), entry('changed_when', str(`${reg}.rc == 2`)), entry('failed_when', bool(false))],
    }),
    task({ name: name('remove the copy'), module: 'ansible.builtin.file', args: map({ path: unsafe(dir), state: aWord('absent') }), keywords: [scaffold] }),
    task({
      name: name('fail on errors'),
      module: 'ansible.builtin.fail',
      args: map({ msg: template(`'puppet apply failed (exit status ' ~ ${reg}.rc ~ '): ' ~ ${reg}.stderr`) }),
      keywords: [entry('when', str(`${reg}.rc not in [0, 2]`))],
    }),
  ];
};

export interface PuppetApplyOptions extends DeclaredFacts {
  description?: string;
  /** A directory of Puppet modules, relative to this file: the run's whole --modulepath. */
  modulePath?: string;
}

export const puppetApply = {
  kind: 'puppetApply',
  schema,
  /** The manifest and the module directory (relative to the calling file) are read now: the IR carries them. */
  make: ({ readTextFile, readTextTree }: MakeContext, manifest: string, opts: PuppetApplyOptions = {}): StepInput<PuppetApplyStep> => {
    let read: { text: string; modules?: { source: string; files: { path: string; text: string }[] } };
    try {
      const modules = opts.modulePath !== undefined ? readTextTree(opts.modulePath) : undefined;
      if (modules && !modules.files.length) throw new Error(`${modules.root} holds no files: not a Puppet module directory`);
      read = { text: readTextFile(manifest).text, ...(modules ? { modules: { source: opts.modulePath!, files: modules.files } } : {}) };
    } catch (e) {
      throw new DefinitionError(`puppetApply('${manifest}'): ${(e as Error).message}`);
    }
    return {
      kind: 'puppetApply',
      source: manifest,
      manifest: { name: manifest.split('/').pop() ?? manifest, text: read.text },
      ...(read.modules ? { modules: read.modules } : {}),
      ...(opts.description ? { description: opts.description } : {}),
      provides: declared(opts.provides),
      requires: [fact('package', PUPPET_PACKAGE), ...declared(opts.requires)],
      removes: declared(opts.removes),
    };
  },

  describe: (s) => `puppet manifest '${s.source}'`,
  comment: (s) => s.description ?? `apply the Puppet manifest ${s.source}${s.modules ? ` with the modules of ${s.modules.source}` : ''}`,
  // Opaque: nothing moves across it (cloud-init's plan), and it may write anywhere.
  opaque: true,
  inRoot: true,
  // Facter reads /proc and /sys; a manifest may install packages: mounts and a resolver, as for a raw command.
  chroot: { mounts: () => true, network: () => true },

  shellHelpers: {
    puppet: {
      deps: [],
      code: [
        '# imgc_puppet NAME TEXT [PATH TEXT]...: applies the Puppet manifest NAME holding',
        '# TEXT with puppet apply; each PATH TEXT pair is a file of its module directory',
        '# (then Puppet\'s whole --modulepath). They are written to a directory of their',
        '# own, removed after. --detailed-exitcodes: 2 is changes made, 0 none, anything',
        '# else a failure, whose messages Puppet has written to stderr.',
        'imgc_puppet() {',
        '  imgc_tmp=$(mktemp -d /run/imgc-puppet.XXXXXX) || return 1',
        '  imgc_name=$1',
        '  printf \'%s\' "$2" >"$imgc_tmp/$1"',
        '  shift 2',
        '  while [ "$#" -gt 1 ]; do',
        '    mkdir -p -- "$(dirname -- "$imgc_tmp/modules/$1")"',
        '    printf \'%s\' "$2" >"$imgc_tmp/modules/$1"',
        '    shift 2',
        '  done',
        '  set -- "$imgc_tmp/$imgc_name"',
        '  if [ -d "$imgc_tmp/modules" ]; then',
        '    set -- --modulepath "$imgc_tmp/modules" "$@"',
        '  fi',
        '  imgc_rc=0',
        '  puppet apply --detailed-exitcodes --color=false "$@" || imgc_rc=$?',
        '  rm -rf -- "$imgc_tmp"',
        '  case $imgc_rc in',
        '    0) ;;',
        '    2)',
        '      imgc_dirty=1',
        '      ;;',
        '    *)',
        '      printf \'imgc: puppet apply of %s failed (exit status %s)\\n\' "$imgc_name" "$imgc_rc" >&2',
        '      return 1',
        '      ;;',
        '  esac',
        '}',
      ],
    },
  },
  shell: (s) => ({ lines: [`imgc_puppet ${helperArgs(s).map(word).join(' \\\n    ')}`], helpers: ['puppet'] }),
  ansible: ansibleTasks,
  cloudInit: {
    run: (s) => [call([fn('puppet'), ...helperArgs(s)], 'puppet')],
  },
  packer: { comment: (s) => `puppet apply ${s.source}` },

  runtime: () => ({ creations: [], kept: 'a Puppet run cannot be inverted: what it did stays' }),

  // The facts it declares are checked like any step's; the manifest's own resources are Puppet's business.
  verify: {},
} as const satisfies StepKind<PuppetApplyStep>;
