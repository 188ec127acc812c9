// Pieces several kinds' renderings share, written once: path ownership per
// target, the guarded-file checks, unit names. Kind-neutral; each target's
// part uses only that target's quoting module (src/emit).
import { fact, parentDir, type Fact, type FactKind } from '../core/facts.js';
import { isInstalled, type RootFacts } from '../core/root.js';
import { words } from '../emit/shell/quote.js';
import type { Emitted, HelperName } from '../emit/shell/emitted.js';
import { mode as ansibleMode, unsafe } from '../emit/ansible/quote.js';
import { validatorCommand, validatorFor, type Validator } from '../emit/validators.js';
import { bool, mode as cloudMode, normalMode as cloudNormalMode, str } from '../emit/cloud-init/quote.js';
import { map, type Node, type YMap } from '../emit/cloud-init/yaml.js';
import type { Call, HelperName as CloudHelperName } from '../emit/cloud-init/calls.js';
import type { RootExpectation } from './kind.js';

export interface Owned {
  readonly owner?: string | undefined;
  readonly group?: string | undefined;
  readonly mode?: string | undefined;
}

// ---- shell -----------------------------------------------------------------

/** A mode as the helpers take it: 4 octal digits ("644" and "00644" become "0644"). */
export const normalMode = (mode: string | undefined): string => (mode === undefined ? '' : parseInt(mode, 8).toString(8).padStart(4, '0'));

/** MODE OWNER GROUP arguments of the shell helpers (empty: leave it alone). */
export const shellAttrs = (s: Owned): string => words([normalMode(s.mode), s.owner ?? '', s.group ?? '']);

/** One line calling helpers. */
export const shellLine = (line: string, ...helpers: HelperName[]): Emitted => ({ lines: [line], helpers });

/** The helper function that checks each kind of guarded file (src/emit/validators.ts). */
export const checkHelper: Record<Validator, { fn: string; helper: HelperName }> = {
  sudoers: { fn: 'imgc_check_sudoers', helper: 'checkSudoers' },
  sshd: { fn: 'imgc_check_sshd', helper: 'checkSshd' },
};

// ---- ansible ---------------------------------------------------------------

const NO_MODE_NOTE = 'No mode declared: an existing path keeps its mode, a new one gets the umask default.';

/** owner/group/mode arguments, and the lint skip a missing mode needs. */
export const ansibleOwnership = (s: Owned) => ({
  args: { owner: s.owner !== undefined ? unsafe(s.owner) : undefined, group: s.group !== undefined ? unsafe(s.group) : undefined, mode: s.mode !== undefined ? ansibleMode(s.mode) : undefined },
  ...(s.mode === undefined ? { comments: [NO_MODE_NOTE], noqa: ['risky-file-permissions'] } : {}),
});

/** `validate:` for a file a syntax error in would lock people out (src/emit/validators.ts). */
export const ansibleValidate = (path: string) => {
  const check = validatorFor(path);
  return check ? { validate: unsafe(validatorCommand(check)) } : {};
};

// ---- cloud-init ------------------------------------------------------------

/** A runcmd call of helpers. */
export const call = (argv: readonly string[], ...helpers: CloudHelperName[]): Call => ({ argv, helpers });

/** A mode as the runcmd helpers take it ('' when none). */
export const cloudMode4 = (s: string | undefined): string => (s === undefined ? '' : cloudNormalMode(s));

/** `owner: user:group` as write_files takes it; root where only the group is given. */
const owner = (o: string | undefined, g: string | undefined): Node | undefined =>
  o === undefined && g === undefined ? undefined : str(g === undefined ? o! : `${o ?? 'root'}:${g}`);

/** A write_files entry. */
export const writeFile = (path: string, content: string, attrs: Owned, defer: boolean): YMap =>
  map({
    path: str(path),
    content: str(content),
    owner: owner(attrs.owner, attrs.group),
    permissions: attrs.mode !== undefined ? cloudMode(attrs.mode) : undefined,
    defer: defer ? bool(true) : undefined,
  });

// ---- verify ----------------------------------------------------------------

const octal = (mode: number) => mode.toString(8).padStart(4, '0');

/** Owner, group and mode of a path as a step declared them: what differs, or undefined. */
export const ownershipProblem = (r: RootFacts, p: string, want: Owned): string | undefined => {
  if (want.owner === undefined && want.group === undefined && want.mode === undefined) return undefined;
  const m = r.view.meta(p);
  if (!m) return `${p} does not exist`;
  const problems: string[] = [];
  if (want.mode !== undefined && m.mode !== parseInt(want.mode, 8)) problems.push(`mode is ${octal(m.mode)}, not ${octal(parseInt(want.mode, 8))}`);
  if (want.owner !== undefined) {
    const u = r.passwd.get(want.owner);
    if (!u) problems.push(`owner '${want.owner}' has no /etc/passwd entry`);
    else if (u.uid !== m.uid) problems.push(`owner is uid ${m.uid}, not ${want.owner} (${u.uid})`);
  }
  if (want.group !== undefined) {
    const g = r.groups.get(want.group);
    if (!g) problems.push(`group '${want.group}' has no /etc/group entry`);
    else if (g.gid !== m.gid) problems.push(`group is gid ${m.gid}, not ${want.group} (${g.gid})`);
  }
  return problems.length ? `${p}: ${problems.join('; ')}` : undefined;
};

/**
 * What an edit of an existing file promises about the file itself, under the
 * file's own subject: it is still a regular file (or a link to one). It
 * replaces a `file` step's whole-content expectation, which the edit made
 * false on purpose; the edit's own expectation checks what it changed.
 */
export const editedFile = (p: string): RootExpectation => ({
  subject: `fact:path:${p}`,
  what: `file ${p} (edited)`,
  check: (r) => {
    const m = r.view.meta(p);
    if (!m) return `${p} does not exist`;
    return r.view.readFile(p) === undefined ? `${p} is not a file` : undefined;
  },
});

/** The owner, group and mode a step was given, as its fields (the absent ones left out). */
export const ownedFields = (o: Owned): Owned => ({
  ...(o.owner !== undefined ? { owner: o.owner } : {}),
  ...(o.group !== undefined ? { group: o.group } : {}),
  ...(o.mode !== undefined ? { mode: o.mode } : {}),
});

/** What a path with this owner and group needs: its directory, the user and the group. */
export const ownedRequires = (path: string, o: Owned): Fact[] => [fact('path', parentDir(path)), ...ownerFacts(o)];

/** The owner and group a path needs to exist (facts of a file or directory step). */
export const ownerFacts = (s: Owned): Fact[] => [...(s.owner !== undefined ? [{ kind: 'user' as const, key: s.owner }] : []), ...(s.group !== undefined ? [{ kind: 'group' as const, key: s.group }] : [])];

// ---- declared facts --------------------------------------------------------

/** Declared facts of an escape-hatch step (raw command, script hook, Ansible role, Puppet manifest). */
export interface DeclaredFacts {
  provides?: Partial<Record<FactKind, readonly string[]>>;
  requires?: Partial<Record<FactKind, readonly string[]>>;
  removes?: Partial<Record<FactKind, readonly string[]>>;
}

/** The facts one field of `DeclaredFacts` names. */
export const declared = (m: DeclaredFacts[keyof DeclaredFacts]): Fact[] =>
  Object.entries(m ?? {}).flatMap(([kind, keys]) => (keys ?? []).map((k) => fact(kind as FactKind, k)));

// ---- comments --------------------------------------------------------------

/** The first line of a script, shortened, for a comment. */
export const gist = (run: string): string => {
  const [first = ''] = run.trim().split('\n');
  const cut = first.slice(0, 60);
  return cut === run.trim() ? cut : `${cut} ...`;
};

/** The first line of a script, cut at `n` characters with an ellipsis (Packer's comments). */
export const clip = (s: string, n = 60): string => {
  const line = s.split('\n')[0] ?? '';
  const chars = [...line];
  return chars.length > n || s.includes('\n') ? `${chars.slice(0, n).join('')}…` : line;
};

/** What verify expects of one package on the root: installed, or not (packages, package lists). */
export const packageExpectation = (name: string, installed: boolean): RootExpectation => ({
  subject: `fact:package:${name}`,
  what: `package '${name}' ${installed ? 'installed' : 'removed'}`,
  check: (r) => {
    const st = r.dpkg.get(name);
    if (installed) return isInstalled(st) ? undefined : `not installed according to /var/lib/dpkg/status${st ? ` (status: ${st})` : ''}`;
    return isInstalled(st) ? `still installed (status: ${st})` : undefined;
  },
});
