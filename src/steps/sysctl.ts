// sysctl: a kernel parameter set at boot by a line of a sysctl.d file
// (systemd-sysctl applies it); a build root cannot apply it, so nothing is set now.
import { z } from '../util/zod.js';
import { AbsPath, OneLine, stepBase } from '../core/fields.js';
import { sysctlSettings } from '../core/root.js';
import { word, words } from '../emit/shell/quote.js';
import { bool, mode, pythonRegexLiteral, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import type { StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';
import { sysctlModule } from '../core/sysctl-modules.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('sysctl'),
    key: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_./-]*$/, 'sysctl keys look like net.ipv4.ip_forward: letters, digits, "_", ".", "/" or "-"'),
    value: OneLine,
    file: AbsPath,
  })
  .strict();
type SysctlStep = z.infer<typeof schema>;

export const sysctl = {
  kind: 'sysctl',
  schema,
  make: (key: string, value: string | number, opts: { file?: string } = {}): StepInput<SysctlStep> => {
    const file = opts.file ?? '/etc/sysctl.d/99-imgc.conf';
    // A key a module registers exists only once the module is loaded (src/core/sysctl-modules.ts).
    const module = sysctlModule(key);
    return { kind: 'sysctl', key, value: String(value), file, provides: [fact('sysctl', key), fact('path', file)], ...(module ? { requires: [fact('kernelModule', module.module)] } : {}) };
  },
  describe: (s) => `sysctl '${s.key}'`,
  comment: (s) => `sysctl ${s.key} = ${s.value} in ${s.file}`,
  paths: (s) => [[s.file, 'file']],
  edits: (s) => [s.file],
  touches: (s) => ({ changes: [{ kind: 'sysctl', key: s.key }, { kind: 'path', key: s.file }], writesFiles: true }),
  inRoot: true,

  shellHelpers: {
    sysctl: {
      deps: ['line'],
      code: [
        '# imgc_sysctl FILE KEY VALUE: FILE has the line "KEY = VALUE".',
        'imgc_sysctl() {',
        '  imgc_line "$1" = "$2" "$2 = $3"',
        '}',
      ],
    },
  },
  shell: (s) => shellLine(`imgc_sysctl ${words([s.file, s.key, s.value])}`, 'sysctl'),
  ansible: (s, ctx) => {
    ctx.notes.add(
      'Sysctls are written to sysctl.d (systemd-sysctl applies them at boot); a build root cannot apply them, so sysctl -w/-p is never run. Each step owns its key\'s line.',
    );
    return [
      task({
        name: stepTaskName(`Sysctl ${labelText(`${s.key} = ${s.value}`)}`, s),
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
  },
  cloudInit: {
    run: (s) => [call([fn('sysctl'), s.file, s.key, s.value], 'sysctl')],
  },
  packer: { comment: (s) => `sysctl ${s.key} = ${s.value}` },

  runtime: (s, { path }) => ({
    creations: [...path(s.file, 'lineFile', 0), { token: s.id, kind: 'line', file: s.file, sep: '=', key: s.key }],
    kept: 'a line that was there before (with another value) keeps the value provisioning gave it',
  }),

  verify: {
    root: (s) => [
      {
        subject: `fact:sysctl:${s.key}`,
        what: `sysctl ${s.key} = ${s.value}`,
        check: (r) => {
          if (!r.view.lstat(s.file)) return `${s.file} does not exist`;
          const v = sysctlSettings(r.view, s.file).get(s.key);
          if (v === undefined) return `${s.file} has no line '${s.key} = ${s.value}'`;
          return v === s.value ? undefined : `${s.file} sets ${s.key} = ${v}, not ${s.value}`;
        },
      },
    ],
    boot: (s) => [
      {
        subject: `sysctl:${s.key}`,
        what: `sysctl ${s.key} = ${s.value}`,
        script: `v=$(sysctl -n ${word(s.key)} 2>&1 | tr -s ' \\t' '  ') || { echo "cannot be read: $v"; exit 1; }\n[ "$v" = ${word(s.value.replace(/\s+/g, ' '))} ] || { echo "is $v"; exit 1; }`,
      },
    ],
  },
} as const satisfies StepKind<SysctlStep>;
