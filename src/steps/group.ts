// group: a group account, made with groupadd unless it exists.
import { z } from '../util/zod.js';
import { AccountName, stepBase } from '../core/fields.js';
import { words } from '../emit/shell/quote.js';
import { bool, int, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { str } from '../emit/cloud-init/quote.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import type { StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';

const schema = z
  .object({ ...stepBase, kind: z.literal('group'), name: AccountName, gid: z.number().int().nonnegative().optional(), system: z.boolean() })
  .strict();
type GroupStep = z.infer<typeof schema>;

const options = (s: GroupStep): string[] => [...(s.system ? ['--system'] : []), ...(s.gid !== undefined ? ['--gid', String(s.gid)] : [])];

export const group = {
  kind: 'group',
  schema,
  make: (name: string, opts: { gid?: number; system?: boolean } = {}): StepInput<GroupStep> => ({
    kind: 'group',
    name,
    ...(opts.gid !== undefined ? { gid: opts.gid } : {}),
    system: opts.system ?? false,
    provides: [fact('group', name)],
  }),
  describe: (s) => `group '${s.name}'`,
  comment: (s) => `group ${s.name}`,
  touches: (s) => ({ changes: [{ kind: 'group', key: s.name }] }),
  inRoot: true,
  creates: (s) => [`group:${s.name}`],

  shellHelpers: {
    group: {
      deps: [],
      code: [
        '# imgc_group NAME [groupadd options]: creates group NAME unless it exists.',
        'imgc_group() {',
        '  imgc_name=$1',
        '  shift',
        '  if getent group "$imgc_name" >/dev/null; then',
        '    return 0',
        '  fi',
        '  groupadd "$@" "$imgc_name"',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s) => shellLine(`imgc_group ${words([s.name, ...options(s)])}`, 'group'),
  ansible: (s) => [
    task({
      name: stepTaskName(`Group ${labelText(s.name)}`, s),
      module: 'ansible.builtin.group',
      args: map({ name: unsafe(s.name), gid: s.gid !== undefined ? int(s.gid) : undefined, system: s.system ? bool(true) : undefined }),
    }),
  ],
  cloudInit: {
    // The groups module runs plain `groupadd NAME`: no --system, no --gid.
    stages: (s) => (!s.system && s.gid === undefined ? ['groups'] : []),
    run: (s) => [call([fn('group'), s.name, ...options(s)], 'group')],
    entries: (s) => [str(s.name)],
  },

  runtime: (s, { mine }) => ({ creations: mine({ kind: 'group', key: s.name }) ? [{ token: s.id, kind: 'group', name: s.name }] : [] }),

  verify: {
    root: (s) => [
      {
        subject: `fact:group:${s.name}`,
        what: `group '${s.name}'`,
        check: (r) => {
          const g = r.groups.get(s.name);
          if (!g) return `no line for '${s.name}' in /etc/group`;
          if (s.gid !== undefined && g.gid !== s.gid) return `gid is ${g.gid}, not ${s.gid}`;
          if (s.system && s.gid === undefined && g.gid >= 1000) return `gid ${g.gid} is not a system gid (< 1000)`;
          return undefined;
        },
      },
    ],
  },
} as const satisfies StepKind<GroupStep>;
