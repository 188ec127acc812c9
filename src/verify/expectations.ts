// What a definition promises about its built root, step by step: every fact
// the base and the steps provide, checked more closely where the step says
// more (a file's exact content and mode, a user's shell and groups, a sysctl's
// value in its file). A later step about the same thing replaces an earlier
// one; a fact a later step removes is no longer promised.
import { describeFact } from '../ir/facts.js';
import { packageName } from '../ir/packages.js';
import type { Fact, Image, SourceLocation, Step, StepOf } from '../ir/schema.js';
import { parseDeb822Sources } from '../build/mirror.js';
import { phaseKind } from '../ir/phases.js';
import {
  activeSwapLines,
  enablementLinks,
  findCommand,
  isInstalled,
  isMasked,
  moduleAnywhere,
  moduleListed,
  readDpkgStatus,
  readGroups,
  readPasswd,
  readRepo,
  sysctlAnywhere,
  sysctlSettings,
  unitFile,
  type GroupEntry,
  type PasswdEntry,
} from './readers.js';
import type { RootView } from './rootview.js';

/** The root's databases, read once per verification. */
export class RootFacts {
  private _passwd?: Map<string, PasswdEntry>;
  private _groups?: Map<string, GroupEntry>;
  private _dpkg?: Map<string, string>;
  constructor(readonly view: RootView) {}
  get passwd() {
    return (this._passwd ??= readPasswd(this.view));
  }
  get groups() {
    return (this._groups ??= readGroups(this.view));
  }
  get dpkg() {
    return (this._dpkg ??= readDpkgStatus(this.view));
  }
}

/** Why the expectation does not hold, or undefined when it does. */
export type Check = (r: RootFacts) => string | undefined;

export interface Expectation {
  /** What it is about; a later expectation with the same subject replaces this one. */
  subject: string;
  /** Human wording: "user 'ops'", "file /etc/x". */
  what: string;
  stepId: string;
  loc?: SourceLocation;
  check: Check;
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0');

/** Owner, group and mode of a path as a step declared them. */
export const ownership = (r: RootFacts, p: string, want: { owner?: string; group?: string; mode?: string }): string | undefined => {
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

const unitSuffix = /\.[a-z]+$/;

/** The plain check of one fact, whichever step provides it. */
export const factCheck = (f: Fact): Check | undefined => {
  switch (f.kind) {
    case 'user':
      return (r) => (r.passwd.has(f.key) ? undefined : `no line for '${f.key}' in /etc/passwd`);
    case 'group':
      return (r) => (r.groups.has(f.key) ? undefined : `no line for '${f.key}' in /etc/group`);
    case 'path':
      return (r) => (r.view.lstat(f.key) ? undefined : `${f.key} does not exist`);
    case 'package':
      return (r) => {
        const s = r.dpkg.get(f.key);
        return isInstalled(s) ? undefined : `not installed according to /var/lib/dpkg/status${s ? ` (status: ${s})` : ''}`;
      };
    case 'service':
      return (r) => (unitFile(r.view, f.key) ? undefined : `no unit file for ${unitSuffix.test(f.key) ? f.key : `${f.key}.service`} in the systemd unit directories`);
    case 'kernelModule':
      return (r) => (moduleAnywhere(r.view, f.key) ? undefined : `not listed in /etc/modules or any modules-load.d/*.conf`);
    case 'sysctl':
      return (r) => (sysctlAnywhere(r.view, f.key) ? undefined : `not set in /etc/sysctl.conf or any sysctl.d/*.conf`);
    case 'command':
      return (r) => (findCommand(r.view, f.key) ? undefined : `no executable '${f.key}' in ${'/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'}`);
    case 'repo':
      return (r) => (readRepo(r.view, f.key) ? undefined : `no /etc/apt/sources.list.d/${f.key}.sources (or .list)`);
    case 'artifact':
      return undefined; // artifacts are files beside the root, checked by the build that makes them
  }
};

const factSubject = (f: Fact) => `fact:${f.kind}:${f.key}`;

/** Closer expectations a step makes beyond its facts, keyed like the facts they refine. */
const stepExpectations = (s: Step): Array<Omit<Expectation, 'stepId' | 'loc'>> => {
  switch (s.kind) {
    case 'user':
      return [{ subject: factSubject({ kind: 'user', key: s.name }), what: `user '${s.name}'`, check: (r) => userCheck(r, s) }];
    case 'group':
      return [
        {
          subject: factSubject({ kind: 'group', key: s.name }),
          what: `group '${s.name}'`,
          check: (r) => {
            const g = r.groups.get(s.name);
            if (!g) return `no line for '${s.name}' in /etc/group`;
            if (s.gid !== undefined && g.gid !== s.gid) return `gid is ${g.gid}, not ${s.gid}`;
            if (s.system && s.gid === undefined && g.gid >= 1000) return `gid ${g.gid} is not a system gid (< 1000)`;
            return undefined;
          },
        },
      ];
    case 'directory':
      return [
        {
          subject: factSubject({ kind: 'path', key: s.path }),
          what: `directory ${s.path}`,
          check: (r) => {
            const m = r.view.stat(s.path);
            if (!m) return `${s.path} does not exist`;
            if (m.type !== 'dir') return `${s.path} is a ${m.type}, not a directory`;
            return ownership(r, s.path, s);
          },
        },
      ];
    case 'file':
      return [
        {
          subject: factSubject({ kind: 'path', key: s.path }),
          what: `file ${s.path}`,
          check: (r) => {
            const m = r.view.lstat(s.path);
            if (!m) return `${s.path} does not exist`;
            if (m.type !== 'file') return `${s.path} is a ${m.type}, not a regular file`;
            const got = r.view.readFile(s.path);
            const want = Buffer.from(s.content, 'utf8');
            if (!got || !got.equals(want)) return `${s.path}: content differs from the definition (${got?.length ?? 0} bytes, expected ${want.length})`;
            return ownership(r, s.path, s);
          },
        },
      ];
    case 'symlink':
      return [
        {
          subject: factSubject({ kind: 'path', key: s.path }),
          what: `symlink ${s.path}`,
          check: (r) => {
            const t = r.view.readlink(s.path);
            if (t === undefined) return `${s.path} is not a symlink`;
            return t === s.target ? undefined : `${s.path} points to '${t}', not '${s.target}'`;
          },
        },
      ];
    case 'packages':
      return s.names.map((spec) => packageName(spec)).map((name) => ({
        subject: factSubject({ kind: 'package', key: name }),
        what: `package '${name}' ${s.action === 'install' ? 'installed' : 'removed'}`,
        check: (r: RootFacts) => {
          const st = r.dpkg.get(name);
          if (s.action === 'install') return isInstalled(st) ? undefined : `not installed according to /var/lib/dpkg/status${st ? ` (status: ${st})` : ''}`;
          return isInstalled(st) ? `still installed (status: ${st})` : undefined;
        },
      }));
    case 'aptRepository':
      return [{ subject: factSubject({ kind: 'repo', key: s.name }), what: `apt repository '${s.name}'`, check: (r) => repoCheck(r, s) }];
    case 'service':
      return [
        {
          subject: `service-enabled:${s.name}`,
          what: `service '${s.name}' ${s.enabled ? 'enabled' : 'disabled'}`,
          check: (r) => {
            const links = enablementLinks(r.view, s.name);
            if (s.enabled) {
              if (isMasked(r.view, s.name)) return `${s.name} is masked (/etc/systemd/system/${s.name} → /dev/null)`;
              return links.length ? undefined : `no link to ${s.name} in /etc/systemd/system/*.wants or *.requires`;
            }
            return links.length ? `still enabled: ${links.join(', ')}` : undefined;
          },
        },
      ];
    case 'sysctl':
      return [
        {
          subject: factSubject({ kind: 'sysctl', key: s.key }),
          what: `sysctl ${s.key} = ${s.value}`,
          check: (r) => {
            if (!r.view.lstat(s.file)) return `${s.file} does not exist`;
            const v = sysctlSettings(r.view, s.file).get(s.key);
            if (v === undefined) return `${s.file} has no line '${s.key} = ${s.value}'`;
            return v === s.value ? undefined : `${s.file} sets ${s.key} = ${v}, not ${s.value}`;
          },
        },
      ];
    case 'kernelModule':
      return [
        {
          subject: factSubject({ kind: 'kernelModule', key: s.name }),
          what: `kernel module '${s.name}'`,
          check: (r) => (!r.view.lstat(s.file) ? `${s.file} does not exist` : moduleListed(r.view, s.file, s.name) ? undefined : `${s.file} has no line '${s.name}'`),
        },
      ];
    case 'swapOff':
      return [
        {
          subject: 'swapOff',
          what: 'swap off',
          check: (r) => {
            const active = activeSwapLines(r.view);
            return active.length ? `/etc/fstab still activates swap: ${active.join(' | ')}` : undefined;
          },
        },
      ];
    default:
      return [];
  }
};

const userCheck = (r: RootFacts, s: StepOf<'user'>): string | undefined => {
  const u = r.passwd.get(s.name);
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

const repoCheck = (r: RootFacts, s: StepOf<'aptRepository'>): string | undefined => {
  const file = `/etc/apt/sources.list.d/${s.name}.sources`;
  const text = r.view.readFile(file)?.toString('utf8');
  if (text === undefined) return `${file} does not exist`;
  const entries = parseDeb822Sources(text, file);
  const e = entries[0];
  if (!e) return `${file} has no source entry`;
  const problems: string[] = [];
  const norm = (u: string) => u.replace(/\/+$/, '');
  if (!e.types.includes('deb')) problems.push(`Types is '${e.types.join(' ')}', not deb`);
  if (!e.uris.map(norm).includes(norm(s.uri))) problems.push(`URIs is '${e.uris.join(' ')}', not ${s.uri}`);
  if (e.suites.join(' ') !== s.suites.join(' ')) problems.push(`Suites is '${e.suites.join(' ')}', not '${s.suites.join(' ')}'`);
  if (e.components.join(' ') !== s.components.join(' ')) problems.push(`Components is '${e.components.join(' ')}', not '${s.components.join(' ')}'`);
  if (s.keyPath) {
    if (e.signedBy !== s.keyPath) problems.push(`Signed-By is '${e.signedBy ?? ''}', not ${s.keyPath}`);
    const key = r.view.readFile(s.keyPath);
    if (!key) problems.push(`key ${s.keyPath} does not exist`);
    else if (s.key !== undefined && key.toString('utf8').trim() !== s.key.trim()) problems.push(`key ${s.keyPath} differs from the definition's key`);
  }
  return problems.length ? `${file}: ${problems.join('; ')}` : undefined;
};

/** Every expectation of the definition about its final root, in step order. */
export const expectationsOf = (ir: Image): Expectation[] => {
  const bySubject = new Map<string, Expectation>();
  const put = (e: Expectation) => {
    bySubject.delete(e.subject); // re-insert: the order is that of the last step that promised it
    bySubject.set(e.subject, e);
  };
  const baseLoc = ir.base.loc;
  for (const f of ir.base.provides) {
    const check = factCheck(f);
    if (check) put({ subject: factSubject(f), what: describeFact(f), stepId: 'base', ...(baseLoc ? { loc: baseLoc } : {}), check });
  }
  for (const phase of ir.phases) {
    if (phaseKind(phase) === 'artifact') continue;
    for (const s of [...phase.pre, ...phase.steps, ...phase.post]) {
      const at = { stepId: s.id, ...(s.loc ? { loc: s.loc } : {}) };
      for (const f of s.removes) bySubject.delete(factSubject(f));
      const own = stepExpectations(s).map((e) => ({ ...e, ...at }));
      const covered = new Set(own.map((e) => e.subject));
      for (const f of s.provides) {
        if (covered.has(factSubject(f))) continue;
        const check = factCheck(f);
        if (check) put({ subject: factSubject(f), what: describeFact(f), ...at, check });
      }
      for (const e of own) put(e);
    }
  }
  return [...bySubject.values()];
};
