// command: a raw shell command, run by /bin/sh as written. imgc cannot see
// into it: it provides, requires and removes only what it declares, and
// `creates` is its idempotence guard.
import { z } from '../util/zod.js';
import { AbsPath, stepBase } from '../core/fields.js';
import { word } from '../emit/shell/quote.js';
import { bool, unsafe, word as aWord } from '../emit/ansible/quote.js';
import { entry, map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { firstLine, labelText, stepTaskName } from '../emit/ansible/names.js';
import { rawCommandNoqa } from '../emit/ansible/lint.js';
import { fn } from '../emit/cloud-init/calls.js';
import { envName, marker, splitMarkers } from '../core/variables.js';
import { call, clip, gist, declared, type DeclaredFacts } from './shared.js';
import type { StepKind, StepInput } from './kind.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('command'),
    run: z.string().min(1),
    /** A path whose existence means the command already ran (idempotence guard). */
    creates: AbsPath.optional(),
    /** Needs /proc, /sys and /dev mounted when run in a chroot. */
    needsMounts: z.boolean(),
  })
  .strict();
type CommandStep = z.infer<typeof schema>;

/**
 * The command's program with each variable reference written `${IMGC_VAR_NAME}`,
 * for the command's own shell to expand from its environment, and the
 * variable each of those names carries: a value (a secret) never becomes part
 * of a process's command line, and is never read as shell code.
 */
const program = (run: string): { text: string; env: ReadonlyMap<string, string> } => {
  const parts = splitMarkers(run);
  const env = new Map(parts.flatMap((p) => (typeof p === 'string' ? [] : [[envName(p.variable), p.variable] as const])));
  return { text: parts.map((p) => (typeof p === 'string' ? p : `\${${envName(p.variable)}}`)).join(''), env };
};

export interface CommandOptions extends DeclaredFacts {
  description?: string;
  /** Skip the command when this path exists (idempotence). */
  creates?: `/${string}`;
  /** Mount /proc, /sys and /dev in a chroot before running it. */
  needsMounts?: boolean;
}

export const command = {
  kind: 'command',
  schema,
  /** `check`: a verify phase's check, which creates and removes nothing (its `creates` and `removes` are not taken). */
  make: (run: string, opts: CommandOptions = {}, check = false): StepInput<CommandStep> => ({
    kind: 'command',
    run,
    ...(opts.description ? { description: opts.description } : {}),
    ...(opts.creates && !check ? { creates: opts.creates } : {}),
    needsMounts: opts.needsMounts ?? false,
    provides: declared(opts.provides),
    requires: declared(opts.requires),
    removes: check ? [] : declared(opts.removes),
  }),
  describe: (s) => {
    const first = s.run.split('\n')[0] ?? '';
    return s.description ?? `command \`${first.length > 40 ? `${first.slice(0, 37)}...` : first}\``;
  },
  comment: (s) => `${s.description ?? `run ${gist(s.run)}`}${s.creates !== undefined ? ` (unless ${s.creates} exists)` : ''}`,
  // Opaque: nothing moves across it (cloud-init's plan).
  opaque: true,
  inRoot: true,
  alwaysChanges: (s) => s.creates === undefined,
  chroot: { mounts: (s) => s.needsMounts, network: () => true },
  variables: ['run'],

  shell: (s, ctx) => ({
    lines: [
      ...(s.needsMounts ? ['# Needs /proc, /sys and /dev mounted in the root (the imgc runner mounts them).'] : []),
      ...(s.creates !== undefined ? [`if [ -e ${word(s.creates)} ]; then`, '  return 0', 'fi'] : []),
      // Assignments before the command put the values in its environment, not on its command line.
      ((p) => `${[...p.env.keys()].map((n) => `${n}="\${${n}}" `).join('')}/bin/sh -ec ${word(p.text)}`)(program(s.run)),
      ...(ctx.checks ? [] : ['imgc_dirty=1']),
    ],
    helpers: [],
  }),
  ansible: (s, ctx) => {
    const verify = ctx.verify ?? false;
    const comments = [
      'A raw command from the definition, run by /bin/sh as written.',
      ...(s.creates === undefined ? [verify ? 'A check: it changes nothing and fails the play by exiting non-zero.' : 'No `creates`: the command is assumed idempotent; it runs every time and reports ok.'] : []),
      ...(s.needsMounts ? ['Needs /proc, /sys and /dev mounted in a chroot (the runner mounts them).'] : []),
    ];
    return [
      task({
        name: stepTaskName(`${verify ? 'Check' : 'Command'}: ${s.description !== undefined ? labelText(s.description) : firstLine(s.run)}`, { id: s.id, loc: s.loc }),
        module: 'ansible.builtin.shell',
        comments,
        noqa: rawCommandNoqa(s.run),
        args: map({ cmd: unsafe(program(s.run).text), executable: aWord('/bin/sh'), creates: s.creates !== undefined ? unsafe(s.creates) : undefined }),
        keywords: [
          s.creates === undefined ? entry('changed_when', bool(false)) : undefined,
          // Values reach the command through its environment, as in the shell target.
          ...((env) => (env.size ? [entry('environment', map(Object.fromEntries([...env].map(([n, v]) => [n, unsafe(marker(v))]))))] : []))(program(s.run).env),
        ],
      }),
    ];
  },
  cloudInit: {
    run: (s) => [s.creates !== undefined ? call([fn('creates'), s.creates, '/bin/sh', '-ec', s.run], 'creates') : call(['/bin/sh', '-ec', s.run])],
  },
  packer: { comment: (s) => `command: ${clip(s.run)}` },

  runtime: () => ({ creations: [], kept: 'a raw command cannot be inverted: what it did stays' }),

  verify: {},
} as const satisfies StepKind<CommandStep>;
