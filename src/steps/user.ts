// user: a user account (useradd), its primary and supplementary groups, home
// and shell. Without a primary group the user gets its own, as useradd's
// USERGROUPS does.
import { z } from '../util/zod.js';
import { AbsPath, AccountName, stepBase } from '../core/fields.js';
import type { PasswdEntry, RootFacts } from '../core/root.js';
import { words } from '../emit/shell/quote.js';
import { bool, int, unsafe } from '../emit/ansible/quote.js';
import { map, seq } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { bool as yBool, int as yInt, str } from '../emit/cloud-init/quote.js';
import { entries, seq as ySeq } from '../emit/cloud-init/yaml.js';
import { fn } from '../emit/cloud-init/calls.js';
import type { Creation } from '../core/creations.js';
import { call } from './shared.js';
import type { StepKind, StepInput } from './kind.js';
import { fact, parentDir } from '../core/facts.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('user'),
    name: AccountName,
    uid: z.number().int().nonnegative().optional(),
    primaryGroup: AccountName.optional(),
    groups: z.array(AccountName),
    home: AbsPath.optional(),
    shell: z.string().optional(),
    system: z.boolean(),
  })
  .strict();
type UserStep = z.infer<typeof schema>;

/** useradd's options, as both shell helpers take them. */
const options = (s: UserStep): string[] => [
  ...(s.system ? ['--system'] : []),
  ...(s.uid !== undefined ? ['--uid', String(s.uid)] : []),
  ...(s.groups.length ? ['--groups', s.groups.join(',')] : []),
  ...(s.home !== undefined ? ['--create-home', '--home-dir', s.home] : ['--no-create-home']),
  ...(s.shell !== undefined ? ['--shell', s.shell] : []),
];

const userCheck = (r: RootFacts, s: UserStep): string | undefined => {
  const u: PasswdEntry | undefined = r.passwd.get(s.name);
  if (!u) return `no line for '${s.name}' in /etc/passwd`;
  const problems: string[] = [];
  if (s.uid !== undefined && u.uid !== s.uid) problems.push(`uid is ${u.uid}, not ${s.uid}`);
  if (s.system && s.uid === undefined && u.uid >= 1000) problems.push(`uid ${u.uid} is not a system uid (< 1000)`);
  if (s.shell !== undefined && u.shell !== s.shell) problems.push(`shell is ${u.shell}, not ${s.shell}`);
  if (s.home !== undefined) {
    if (u.home !== s.home) problems.push(`home is ${u.home}, not ${s.home}`);
    const h = r.view.stat(s.home);
    if (!h || h.type !== 'dir') problems.push(`home ${s.home} does not exist`);
    else if (h.uid !== u.uid) problems.push(`home ${s.home} is owned by uid ${h.uid}, not ${u.uid}`);
  }
  const primary = s.primaryGroup ?? s.name;
  const pg = r.groups.get(primary);
  if (!pg) problems.push(`primary group '${primary}' has no /etc/group entry`);
  else if (pg.gid !== u.gid) problems.push(`primary gid is ${u.gid}, not ${primary} (${pg.gid})`);
  for (const g of s.groups) {
    const e = r.groups.get(g);
    if (!e) problems.push(`supplementary group '${g}' has no /etc/group entry`);
    else if (!e.members.includes(s.name) && e.gid !== u.gid) problems.push(`not a member of group '${g}'`);
  }
  return problems.length ? problems.join('; ') : undefined;
};

/** The builder's `user` options, without their type-level checks (src/dsl/types.ts `UserOptions`). */
export interface UserInput {
  uid?: number;
  primaryGroup?: string;
  groups?: readonly string[];
  home?: string;
  shell?: string;
  system?: boolean;
}

export const user = {
  kind: 'user',
  schema,
  make: (name: string, opts: UserInput = {}): StepInput<UserStep> => {
    const groups = [...(opts.groups ?? [])];
    const home = opts.home ?? (opts.system ? undefined : `/home/${name}`);
    const primaryGroup = opts.primaryGroup;
    return {
      kind: 'user',
      name,
      ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
      ...(primaryGroup ? { primaryGroup } : {}),
      groups,
      ...(home ? { home } : {}),
      ...(opts.shell ? { shell: opts.shell } : {}),
      system: opts.system ?? false,
      provides: [fact('user', name), ...(primaryGroup ? [] : [fact('group', name)]), ...(home ? [fact('path', home)] : [])],
      requires: [...(primaryGroup ? [fact('group', primaryGroup)] : []), ...groups.map((g) => fact('group', g)), ...(home ? [fact('path', parentDir(home))] : [])],
    };
  },
  describe: (s) => `user '${s.name}'`,
  comment: (s) => `user ${s.name}`,
  paths: (s) => (s.home ? [[s.home, 'directory']] : []),
  touches: (s) => ({
    needs: [...s.groups.map((g) => ({ kind: 'group' as const, key: g })), ...(s.primaryGroup !== undefined ? [{ kind: 'group' as const, key: s.primaryGroup }] : [])],
    changes: [
      { kind: 'user', key: s.name },
      ...(s.primaryGroup === undefined ? [{ kind: 'group' as const, key: s.name }] : []),
      ...(s.home !== undefined ? [{ kind: 'path' as const, key: s.home }] : []),
    ],
    writesFiles: s.home !== undefined,
  }),
  inRoot: true,
  creates: (s) => [`user:${s.name}`],

  shellHelpers: {
    user: {
      deps: [],
      code: [
        '# imgc_user NAME PRIMARY_GROUP [useradd options]: creates user NAME unless it',
        '# exists. An empty PRIMARY_GROUP means a group of the user\'s own name, created',
        '# with it unless it exists already.',
        'imgc_user() {',
        '  imgc_name=$1',
        '  imgc_pg=$2',
        '  shift 2',
        '  if getent passwd "$imgc_name" >/dev/null; then',
        '    return 0',
        '  fi',
        '  if [ -n "$imgc_pg" ]; then',
        '    useradd --gid "$imgc_pg" "$@" "$imgc_name"',
        '  elif getent group "$imgc_name" >/dev/null; then',
        '    useradd --gid "$imgc_name" "$@" "$imgc_name"',
        '  else',
        '    useradd --user-group "$@" "$imgc_name"',
        '  fi',
        '  imgc_dirty=1',
        '}',
      ],
    },
    member: {
      deps: [],
      code: [
        '# imgc_member USER GROUP: USER is a member of GROUP.',
        'imgc_member() {',
        '  case " $(id -nG "$1") " in',
        '    *" $2 "*) ;;',
        '    *)',
        '      usermod --append --groups "$2" "$1"',
        '      imgc_dirty=1',
        '      ;;',
        '  esac',
        '}',
      ],
    },
    userShell: {
      deps: [],
      code: [
        '# imgc_user_shell USER SHELL: USER logs in with SHELL.',
        'imgc_user_shell() {',
        '  imgc_have=$(getent passwd "$1" | cut -d: -f7)',
        '  if [ "$imgc_have" != "$2" ]; then',
        '    usermod --shell "$2" "$1"',
        '    imgc_dirty=1',
        '  fi',
        '}',
      ],
    },
  },
  shell: (s) => ({
    lines: [
      `imgc_user ${words([s.name, s.primaryGroup ?? '', ...options(s)])}`,
      ...s.groups.map((g) => `imgc_member ${words([s.name, g])}`),
      ...(s.shell !== undefined ? [`imgc_user_shell ${words([s.name, s.shell])}`] : []),
    ],
    helpers: ['user', ...(s.groups.length ? (['member'] as const) : []), ...(s.shell !== undefined ? (['userShell'] as const) : [])],
  }),
  ansible: (s) => {
    const own = s.primaryGroup === undefined;
    return [
      // useradd would make the user's own group (USERGROUPS); Ansible's user module does not
      // when one exists already, so the group is made explicitly and set as primary.
      ...(own
        ? [
            task({
              name: stepTaskName(`Group ${labelText(s.name)} for user ${labelText(s.name)}`, s),
              module: 'ansible.builtin.group',
              args: map({ name: unsafe(s.name), system: s.system ? bool(true) : undefined }),
            }),
          ]
        : []),
      task({
        name: stepTaskName(`User ${labelText(s.name)}`, s),
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
  },
  cloudInit: {
    // cloud-init never creates the home of a system user (it adds -M).
    stages: (s) => (s.system && s.home !== undefined ? [] : ['users']),
    run: (s) => [
      call([fn('user'), s.name, s.primaryGroup ?? '', ...options(s)], 'user'),
      ...s.groups.map((g) => call([fn('member'), s.name, g], 'member')),
      ...(s.shell !== undefined ? [call([fn('userShell'), s.name, s.shell], 'userShell')] : []),
    ],
    entries: (s, _stage, ctx) => {
      // cloud-init runs useradd with -m unless no_create_home or system (then -M).
      const primary = s.primaryGroup ?? (ctx.groupExists(s.name) ? s.name : undefined);
      return [
        entries([
          { key: 'name', value: str(s.name) },
          primary !== undefined ? { key: 'primary_group', value: str(primary) } : undefined,
          s.groups.length ? { key: 'groups', value: ySeq(s.groups.map(str), { flow: true }) } : undefined,
          s.home !== undefined ? { key: 'homedir', value: str(s.home) } : undefined,
          s.shell !== undefined ? { key: 'shell', value: str(s.shell) } : undefined,
          s.system ? { key: 'system', value: yBool(true) } : undefined,
          s.home === undefined ? { key: 'no_create_home', value: yBool(true) } : undefined,
          s.uid !== undefined ? { key: 'uid', value: yInt(s.uid) } : undefined,
          { key: 'lock_passwd', value: yBool(true) },
        ]),
      ];
    },
  },

  runtime: (s, { mine }) => {
    if (!mine({ kind: 'user', key: s.name })) return { creations: [] };
    const own: Creation[] = s.primaryGroup === undefined && mine({ kind: 'group', key: s.name }) ? [{ token: `${s.id}#group`, kind: 'group', name: s.name }] : [];
    const home = s.home !== undefined && mine({ kind: 'path', key: s.home }) ? { home: { token: `${s.id}#home`, path: s.home } } : {};
    return { creations: [...own, { token: s.id, kind: 'user', name: s.name, ...home }] };
  },

  verify: {
    root: (s) => [{ subject: `fact:user:${s.name}`, what: `user '${s.name}'`, check: (r) => userCheck(r, s) }],
  },
} as const satisfies StepKind<UserStep>;
