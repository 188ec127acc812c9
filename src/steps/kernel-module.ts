// kernelModule: a module listed in a modules-load.d file for systemd to load
// at boot; loading one is not possible in an image build.
import { z } from '../util/zod.js';
import { AbsPath, stepBase } from '../core/fields.js';
import { moduleListed } from '../core/root.js';
import { word, words } from '../emit/shell/quote.js';
import { bool, mode, pythonRegexLiteral, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import type { StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';

const schema = z
  .object({ ...stepBase, kind: z.literal('kernelModule'), name: z.string().regex(/^[A-Za-z0-9_-]+$/, 'kernel module names are letters, digits, "_" or "-"'), file: AbsPath })
  .strict();
type KernelModuleStep = z.infer<typeof schema>;

export const kernelModule = {
  kind: 'kernelModule',
  schema,
  make: (name: string, opts: { file?: string } = {}): StepInput<KernelModuleStep> => {
    const file = opts.file ?? '/etc/modules-load.d/imgc.conf';
    return { kind: 'kernelModule', name, file, provides: [fact('kernelModule', name), fact('path', file)] };
  },
  describe: (s) => `kernel module '${s.name}'`,
  comment: (s) => `kernel module ${s.name} in ${s.file}`,
  paths: (s) => [[s.file, 'file']],
  edits: (s) => [s.file],
  touches: (s) => ({ changes: [{ kind: 'kernelModule', key: s.name }, { kind: 'path', key: s.file }], writesFiles: true }),
  inRoot: true,

  shellHelpers: {
    module: {
      deps: ['line'],
      code: [
        '# imgc_module FILE NAME: FILE (modules-load.d) lists the kernel module NAME.',
        'imgc_module() {',
        '  imgc_line "$1" \'\' "$2" "$2"',
        '}',
      ],
    },
  },
  shell: (s) => shellLine(`imgc_module ${words([s.file, s.name])}`, 'module'),
  ansible: (s, ctx) => {
    ctx.notes.add('Kernel modules are listed in modules-load.d for systemd to load at boot; loading one is not possible in an image build.');
    return [
      task({
        name: stepTaskName(`Kernel module ${labelText(s.name)} at boot`, s),
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
  },
  cloudInit: {
    run: (s) => [call([fn('module'), s.file, s.name], 'module')],
  },
  packer: { comment: (s) => `kernel module ${s.name}` },

  runtime: (s, { path }) => ({
    creations: [...path(s.file, 'lineFile', 0), { token: s.id, kind: 'line', file: s.file, sep: '', key: s.name }],
    kept: 'a line that was there before (with another value) keeps the value provisioning gave it',
  }),

  verify: {
    root: (s) => [
      {
        subject: `fact:kernelModule:${s.name}`,
        what: `kernel module '${s.name}'`,
        check: (r) => (!r.view.lstat(s.file) ? `${s.file} does not exist` : moduleListed(r.view, s.file, s.name) ? undefined : `${s.file} has no line '${s.name}'`),
      },
    ],
    boot: (s) => [
      { subject: `kernelModule:${s.name}`, what: `kernel module '${s.name}' loaded`, script: `test -d /sys/module/${word(s.name)} || { echo "not loaded (no /sys/module/${s.name})"; exit 1; }` },
    ],
  },
} as const satisfies StepKind<KernelModuleStep>;
