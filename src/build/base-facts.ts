// The facts a fresh root of a base provides, read from a real root: users and
// groups (passwd, group), packages with versions (dpkg status), the paths the
// packages lay down as dpkg lists them (bounded: directories near the top and
// every one under /etc and /var, conffiles), and what debootstrap and the
// maintainer scripts make (directories near the top such as /opt, files
// directly in /etc such as /etc/passwd) with their type, owner, group and
// mode, services (unit files) and the commands on PATH. `npm run gen:bases` writes them as the stdlib's
// data (stdlib/bases/*.ts); a test compares that data with a cached root.
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DirView, type RootView } from '../verify/rootview.js';
import { readGroups, readPasswd } from '../core/root.js';
import type { FactDetails } from '../core/facts.js';

export interface BaseFacts {
  users: string[];
  groups: string[];
  /** Package name → installed version. */
  packages: Record<string, string>;
  paths: string[];
  /** Path → its type, owner, group and mode, as the root has them (not for the kernel filesystems' mount points). */
  pathDetails: Record<string, FactDetails>;
  services: string[];
  commands: string[];
}

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

const names = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.split(':')[0]!)
    : [];

/** dpkg status paragraphs of installed packages: name, version, conffiles. */
const installed = (root: string): { name: string; version: string; conffiles: string[] }[] =>
  readFileSync(path.join(root, 'var/lib/dpkg/status'), 'utf8')
    .split(/\n\n+/)
    .map((para) => {
      const field = (k: string) => new RegExp(`^${k}: (.*)$`, 'm').exec(para)?.[1];
      const conffiles = /^Conffiles:\n((?: .*\n?)*)/m.exec(para)?.[1] ?? '';
      return {
        name: field('Package') ?? '',
        version: field('Version') ?? '',
        status: field('Status') ?? '',
        conffiles: conffiles.split('\n').map((l) => l.trim().split(' ')[0] ?? '').filter((p) => p.startsWith('/')),
      };
    })
    .filter((p) => p.name && p.status === 'install ok installed')
    .map(({ name, version, conffiles }) => ({ name, version, conffiles }));

const kindIn = (root: string, p: string): 'dir' | 'file' | 'other' | undefined => {
  try {
    const st = lstatSync(path.join(root, p));
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
};

/** A directory a definition may well write into: near the top, or anywhere under /etc or /var. */
const dirMatters = (p: string): boolean => p.split('/').length <= 4 || p.startsWith('/etc/') || p.startsWith('/var/');

/** Where a running system mounts its kernel filesystems: their owner and mode are the mount's, not the root's. */
const kernelMounts = new Set(['/proc', '/sys', '/dev', '/run']);

/**
 * Paths whose details a fresh root does not keep: apt gives its partial
 * directories to _apt (0700) the first time it runs, and temporary files, logs
 * and caches change on their own (the probe leaves their contents out too). The
 * paths stay facts; their details are not promised.
 */
const unsettled = ['/tmp/', '/var/tmp/', '/var/log/', '/var/cache/', '/var/lib/apt/lists/'];

/** Names of the root's users and groups by id, for pathDetails. */
export const idNames = (view: RootView): { users: Map<number, string>; groups: Map<number, string> } => ({
  users: new Map([...readPasswd(view).values()].map((u) => [u.uid, u.name])),
  groups: new Map([...readGroups(view).values()].map((g) => [g.gid, g.name])),
});

/** Type, owner, group and mode of a path as the root has them (names from its own passwd and group); none for a kernel mount point. */
export const pathDetails = (view: RootView, p: string, names: ReturnType<typeof idNames>): FactDetails => {
  const m = kernelMounts.has(p) ? undefined : view.meta(p);
  if (!m) return {};
  const owner = names.users.get(m.uid);
  const group = names.groups.get(m.gid);
  return { type: m.type, ...(owner ? { owner } : {}), ...(group ? { group } : {}), mode: m.mode.toString(8).padStart(4, '0') };
};

/** A file directly in /etc that tools leave behind, not a fact: backups (passwd-) and lock files (.pwd.lock). */
export const isToolLeftover = (name: string): boolean => name.startsWith('.') || name.endsWith('-');

const PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Reads the facts of the root at `root`. */
export const readBaseFacts = (root: string): BaseFacts => {
  const pkgs = installed(root);
  const infoDir = path.join(root, 'var/lib/dpkg/info');
  const listed = readdirSync(infoDir)
    .filter((f) => f.endsWith('.list'))
    .flatMap((f) => readFileSync(path.join(infoDir, f), 'utf8').split('\n'))
    .filter((p) => p.startsWith('/'));
  const dirs = listed.filter((p) => dirMatters(p) && kindIn(root, p) === 'dir');
  // Directories no package lists, made by debootstrap or maintainer scripts (/opt, /srv, /usr/local/bin).
  const made: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const e of readdirSync(path.join(root, dir)).sort()) {
      const p = `${dir === '/' ? '' : dir}/${e}`;
      if (kindIn(root, p) !== 'dir' || kernelMounts.has(p)) continue;
      made.push(p);
      if (depth < 3) walk(p, depth + 1);
    }
  };
  walk('/', 1);
  const conffiles = pkgs.flatMap((p) => p.conffiles).filter((p) => kindIn(root, p) === 'file');
  const etcFiles = readdirSync(path.join(root, 'etc'))
    .filter((f) => !isToolLeftover(f))
    .map((f) => `/etc/${f}`)
    .filter((p) => kindIn(root, p) === 'file');
  const unitDirs = ['lib/systemd/system', 'usr/lib/systemd/system', 'etc/systemd/system'].map((d) => path.join(root, d)).filter(existsSync);
  const services = unitDirs
    .flatMap((d) => readdirSync(d))
    .filter((u) => !u.includes('@') && /\.(service|socket|timer|path|target|mount)$/.test(u))
    .map((u) => u.replace(/\.service$/, ''));
  // Links are followed inside the root (/usr/sbin/modprobe → /bin/kmod is the root's kmod, not this machine's).
  const view = new DirView(root);
  const commands = PATH.flatMap((d) => {
    if (kindIn(root, d) !== 'dir') return [];
    return readdirSync(path.join(root, d)).filter((f) => {
      const st = view.stat(`${d}/${f}`);
      return st?.type === 'file' && (st.mode & 0o111) !== 0;
    });
  });
  const paths = sorted(['/', ...dirs, ...made, ...conffiles, ...etcFiles]);
  const ids = idNames(view);
  return {
    users: sorted(names(path.join(root, 'etc/passwd'))),
    groups: sorted(names(path.join(root, 'etc/group'))),
    packages: Object.fromEntries(pkgs.map((p) => [p.name, p.version]).sort(([a], [b]) => (a! < b! ? -1 : 1))),
    paths,
    pathDetails: Object.fromEntries(
      paths
        .filter((p) => !unsettled.some((u) => p.startsWith(u)))
        .map((p) => [p, pathDetails(view, p, ids)])
        .filter(([, d]) => Object.keys(d as FactDetails).length > 0),
    ),
    services: sorted(services),
    commands: sorted(commands),
  };
};

const list = (xs: readonly string[]) => `[\n${xs.map((x) => `    ${JSON.stringify(x)},`).join('\n')}\n  ]`;

/** The stdlib data file of a base's facts: a TypeScript module, so the literal types follow the data. */
export const renderBaseFacts = (name: string, exportName: string, describe: string, facts: BaseFacts): string =>
  [
    `// Generated by \`npm run gen:bases\` (scripts/gen-bases.mjs) from ${describe}: do not edit.`,
    '// Regenerate with `npm run gen:bases` (debootstraps from the apt mirror of this machine,',
    '// or reuses the cached base root), or `npm run gen:bases -- --from-tar ROOT.tar`.',
    `/** What a fresh root of base '${name}' provides, read from a real one. */`,
    `export const ${exportName} = {`,
    `  users: ${list(facts.users)},`,
    `  groups: ${list(facts.groups)},`,
    `  packages: {\n${Object.entries(facts.packages)
      .map(([n, v]) => `    ${JSON.stringify(n)}: ${JSON.stringify(v)},`)
      .join('\n')}\n  },`,
    `  paths: ${list(facts.paths)},`,
    `  pathDetails: {\n${Object.entries(facts.pathDetails)
      .map(([p, d]) => `    ${JSON.stringify(p)}: { ${Object.entries(d).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')} },`)
      .join('\n')}\n  },`,
    `  services: ${list(facts.services)},`,
    `  commands: ${list(facts.commands)},`,
    '} as const;',
    '',
  ].join('\n');
