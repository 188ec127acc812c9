// A built root as step kinds' verify expectations read it (src/verify reads
// real roots and images through these): the view of its files, and the system
// databases read as files: passwd/group, dpkg status, sysctl.d and
// modules-load.d, fstab, systemd unit links.

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

export interface Meta {
  type: EntryType;
  /** Permission bits including setuid/setgid/sticky (mode & 0o7777). */
  mode: number;
  uid: number;
  gid: number;
}

export interface RootView {
  /** What the view reads, for messages. */
  readonly label: string;
  /** Type, mode, owner of the entry itself (a symlink is not followed). */
  lstat(p: string): Meta | undefined;
  /** Same, following symlinks inside the root. */
  stat(p: string): Meta | undefined;
  /** Exact owner and mode (image views ask the filesystem itself; extracted copies may lose setuid bits). */
  meta(p: string): Meta | undefined;
  readFile(p: string): Buffer | undefined;
  readlink(p: string): string | undefined;
  readdir(p: string): string[];
  /** Reads the exact owner and mode of many paths at once, for `meta` to answer after (an image view asks its filesystem once, not per path). */
  preloadMeta?(paths: readonly string[]): void;
}

/** The root's databases as a verification reads them (once each: src/verify/expectations.ts). */
export interface RootFacts {
  readonly view: RootView;
  readonly passwd: ReadonlyMap<string, PasswdEntry>;
  readonly groups: ReadonlyMap<string, GroupEntry>;
  readonly dpkg: ReadonlyMap<string, string>;
}

export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}
export interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

const lines = (view: RootView, p: string): string[] => (view.readFile(p)?.toString('utf8') ?? '').split('\n');

export const readPasswd = (view: RootView): Map<string, PasswdEntry> => {
  const out = new Map<string, PasswdEntry>();
  for (const l of lines(view, '/etc/passwd')) {
    const f = l.split(':');
    if (f.length < 7 || !f[0]) continue;
    out.set(f[0], { name: f[0], uid: Number(f[2]), gid: Number(f[3]), home: f[5]!, shell: f[6]! });
  }
  return out;
};

export const readGroups = (view: RootView): Map<string, GroupEntry> => {
  const out = new Map<string, GroupEntry>();
  for (const l of lines(view, '/etc/group')) {
    const f = l.split(':');
    if (f.length < 4 || !f[0]) continue;
    out.set(f[0], { name: f[0], gid: Number(f[2]), members: f[3]!.split(',').filter(Boolean) });
  }
  return out;
};

/** Package → its dpkg status words and version; multi-arch: the installed copy when one architecture's is. */
export const readDpkg = (view: RootView): Map<string, { status: string; version: string }> => {
  const out = new Map<string, { status: string; version: string }>();
  const text = view.readFile('/var/lib/dpkg/status')?.toString('utf8') ?? '';
  for (const para of text.split(/\n\s*\n/)) {
    const pkg = /^Package:\s*(\S+)/m.exec(para)?.[1];
    const status = /^Status:\s*(.+)$/m.exec(para)?.[1]?.trim();
    if (!pkg || !status) continue;
    if (out.get(pkg)?.status.endsWith(' installed')) continue;
    out.set(pkg, { status, version: /^Version:\s*(\S+)/m.exec(para)?.[1] ?? '' });
  }
  return out;
};

/** Package → its dpkg status words ("install ok installed"); a package is installed when the last word is `installed`. */
export const readDpkgStatus = (view: RootView): Map<string, string> => new Map([...readDpkg(view)].map(([k, v]) => [k, v.status]));

// A held package (`hold ok installed`, apt-mark hold) is as installed as any.
export const isInstalled = (status: string | undefined): boolean => status !== undefined && /\sinstalled$/.test(status) && /^(install|hold) /.test(status);

/** Non-comment lines of a config file, trimmed. */
export const configLines = (view: RootView, p: string): string[] =>
  lines(view, p)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#') && !l.startsWith(';'));

const confFiles = (view: RootView, dirs: readonly string[]): string[] =>
  dirs.flatMap((d) => view.readdir(d).filter((f) => f.endsWith('.conf')).map((f) => `${d}/${f}`));

export const sysctlDirs = ['/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d', '/lib/sysctl.d'] as const;
export const modulesLoadDirs = ['/etc/modules-load.d', '/run/modules-load.d', '/usr/local/lib/modules-load.d', '/usr/lib/modules-load.d', '/lib/modules-load.d'] as const;

/** `key = value` settings of one sysctl file (the last setting of a key wins). */
export const sysctlSettings = (view: RootView, file: string): Map<string, string> => {
  const out = new Map<string, string>();
  for (const l of configLines(view, file)) {
    const m = /^-?([^=\s]+)\s*=\s*(.*)$/.exec(l);
    if (m) out.set(m[1]!.replace(/\//g, '.'), m[2]!.trim());
  }
  return out;
};

/** Every sysctl file of the root (plus /etc/sysctl.conf) where `key` is set, and the value. */
export const sysctlAnywhere = (view: RootView, key: string): { file: string; value: string } | undefined => {
  for (const file of ['/etc/sysctl.conf', ...confFiles(view, sysctlDirs)]) {
    const v = sysctlSettings(view, file).get(key);
    if (v !== undefined) return { file, value: v };
  }
  return undefined;
};

export const moduleListed = (view: RootView, file: string, name: string): boolean => configLines(view, file).includes(name);

export const moduleAnywhere = (view: RootView, name: string): string | undefined =>
  ['/etc/modules', ...confFiles(view, modulesLoadDirs)].find((f) => moduleListed(view, f, name));

/** fstab lines that would activate swap at boot. */
export const activeSwapLines = (view: RootView): string[] =>
  configLines(view, '/etc/fstab').filter((l) => l.split(/\s+/)[2] === 'swap');

const unitDirs = ['/etc/systemd/system', '/run/systemd/system', '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system'] as const;

/** `ssh` → `ssh.service`; names with a unit suffix stay. */
export const unitName = (name: string): string => (/\.(service|socket|timer|target|mount|path|slice|scope|swap|automount|device)$/.test(name) ? name : `${name}.service`);

/** Where imgc writes a unit (or a drop-in of it) and where masking links it. */
export const UNIT_DIR = '/etc/systemd/system';

/** The file of a unit, or of one of its drop-ins. */
export const unitPath = (s: { unit: string; dropIn?: string | undefined }): string => (s.dropIn === undefined ? `${UNIT_DIR}/${s.unit}` : `${UNIT_DIR}/${s.unit}.d/${s.dropIn}`);

/** Where a unit's file is, if the root has one (or a SysV script for it). */
export const unitFile = (view: RootView, name: string): string | undefined => {
  const unit = unitName(name);
  const found = unitDirs.map((d) => `${d}/${unit}`).find((p) => view.lstat(p) !== undefined);
  if (found) return found;
  const sysv = `/etc/init.d/${name.replace(/\.service$/, '')}`;
  return view.lstat(sysv) ? sysv : undefined;
};

/** The `*.wants` / `*.requires` links that enable `name` at boot (aliases resolved). */
export const enablementLinks = (view: RootView, name: string): string[] => {
  const unit = unitName(name);
  const names = new Set([unit]);
  // An alias (e.g. sshd.service → ssh.service) is enabled under its real name.
  for (const d of unitDirs) {
    const link = view.readlink(`${d}/${unit}`);
    if (link && !link.startsWith('/dev/null')) names.add(link.split('/').pop()!);
  }
  const out: string[] = [];
  for (const dir of ['/etc/systemd/system']) {
    for (const sub of view.readdir(dir)) {
      if (!/\.(wants|requires)$/.test(sub)) continue;
      for (const entry of view.readdir(`${dir}/${sub}`)) if (names.has(entry)) out.push(`${dir}/${sub}/${entry}`);
    }
  }
  return out;
};

/** Whether a unit is masked (linked to /dev/null in /etc). */
export const isMasked = (view: RootView, name: string): boolean => view.readlink(`/etc/systemd/system/${unitName(name)}`) === '/dev/null';

/** Started at boot, as `systemctl is-enabled` says "enabled": linked from a target's .wants or .requires, and not masked. */
export const serviceEnabled = (view: RootView, name: string): boolean => !isMasked(view, name) && enablementLinks(view, name).length > 0;

export const pathDirs = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'] as const;

/** The executable named `cmd` on the root's PATH, if any. */
export const findCommand = (view: RootView, cmd: string): string | undefined =>
  pathDirs.map((d) => `${d}/${cmd}`).find((p) => {
    const st = view.stat(p);
    return st !== undefined && st.type === 'file' && (st.mode & 0o111) !== 0;
  });
