// The generated package facts (stdlib/archive/debian-12.ts, npm run gen:packages)
// against a real install: ten packages installed together into one fresh root
// of the Debian 12 base; per package, its dpkg file list (dpkg -L) against the
// archive entry's commands, services and /etc,/opt paths, and what
// installedFacts reports for it (each in a root of its own, its dependencies
// first: the paths its maintainer scripts create, its users and groups)
// against the root and the entry, which the generator merges it into.
import { execa } from 'execa';
import { lstatSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chrootEnv, prepareRoot } from '../../src/build/chroot.js';
import { installedFacts, type InstalledFacts } from '../../src/build/installed-facts.js';
import { RootMounts } from '../../src/build/mounts.js';
import { Session } from '../../src/build/session.js';
import { readGroups, readPasswd } from '../../src/core/root.js';
import { image } from '../../src/index.js';
import { DirView } from '../../src/verify/rootview.js';
import { debian12Archive } from '../../stdlib/archive/debian-12.js';
import { debian12 } from '../../stdlib/bases.js';
import { repoRoot } from '../helpers/cli.js';
import { mountsContaining, tempDir } from '../helpers/temp.js';
import { cannotChroot, freshRoot, removeRoot } from '../runtime-support.js';

/** Services, servers and tools whose maintainer scripts make users, groups, config files and empty directories. */
const TEN = ['auditd', 'chrony', 'containerd', 'curl', 'jq', 'nginx', 'nginx-common', 'openssh-server', 'prometheus-node-exporter', 'sudo'];

const exists = (root: string, p: string): boolean => {
  try {
    lstatSync(path.join(root, p));
    return true;
  } catch {
    return false;
  }
};

const inFactTree = (p: string) => /^\/(etc|opt)\/./.test(p);
const sorted = (xs: readonly string[]) => [...xs].sort();
/** Where the archive's commands are: files directly in these. */
const COMMAND_DIRS = ['/usr/bin', '/usr/sbin', '/bin', '/sbin'];
/** Where the archive's services are: unit files directly in these. */
const UNIT_DIRS = ['/lib/systemd/system', '/usr/lib/systemd/system'];
describe.skipIf(cannotChroot)('package facts against a real install of ten packages', () => {
  const ir = image('t').base(debian12()).toIR();
  let root = '';
  let facts: Record<string, InstalledFacts> = {};
  /** dpkg -L of each package, in the root they were all installed into. */
  const listed = new Map<string, string[]>();

  beforeAll(async () => {
    root = await freshRoot(ir, 'archive-facts');
    facts = await installedFacts(root, TEN, { suite: ir.base.suite });
    // The ten together into the root itself, as a build's phase installs them.
    const session = new Session();
    const mounts = new RootMounts(root);
    try {
      prepareRoot(session, root, { network: true });
      mounts.mount();
      const apt = (args: string[]) => execa('chroot', [root, 'apt-get', ...args], { env: chrootEnv(), extendEnv: false });
      await apt(['update', '-q']);
      await apt(['install', '-y', '-q', '--no-install-recommends', ...TEN]);
      for (const p of TEN) listed.set(p, (await execa('chroot', [root, 'dpkg', '-L', p], { env: chrootEnv(), extendEnv: false })).stdout.split('\n'));
    } finally {
      mounts.unmountAll();
      session.cleanup();
    }
  });

  afterAll(() => {
    if (root) removeRoot(root);
  });

  it('reports each package, with what its maintainer scripts made and without host keys', () => {
    expect(Object.keys(facts)).toEqual(TEN);
    expect(facts['openssh-server']!.paths).toContain('/etc/ssh/sshd_config');
    expect(facts['openssh-server']!.paths.filter((p) => p.includes('ssh_host_'))).toEqual([]);
    expect(facts['openssh-server']!.users).toEqual(['sshd']);
    expect(facts['chrony']).toMatchObject({ users: ['_chrony'], groups: ['_chrony'] });
    expect(facts['chrony']!.paths).toContain('/etc/chrony/chrony.conf');
    // An empty directory nginx-common ships: in its file list, not in the archive's Contents.
    expect(facts['nginx-common']!.paths).toContain('/etc/nginx/conf.d');
    // nginx-common is a dependency of nginx and still has its own facts; nginx's are not nginx-common's.
    expect(facts['nginx']!.paths).not.toContain('/etc/nginx/nginx.conf');
    expect(facts['jq']).toEqual({ users: [], groups: [], paths: [] });
  });

  it.each(TEN)('%s: its dpkg file list and its created paths, users and groups agree with the real install', (name) => {
    const own = facts[name]!;
    const dpkgPaths = listed.get(name)!.filter((p) => inFactTree(p) && exists(root, p));
    expect(dpkgPaths.filter((p) => !own.paths.includes(p))).toEqual([]);
    expect(own.paths.filter((p) => !exists(root, p))).toEqual([]);
    const view = new DirView(root);
    const users = readPasswd(view);
    const groups = readGroups(view);
    expect(own.users.filter((u) => !users.has(u))).toEqual([]);
    expect(own.groups.filter((g) => !groups.has(g))).toEqual([]);
  });

  it.each(TEN)('%s: the archive entry has the commands, services and /etc,/opt paths of its dpkg file list (or its scripts made), and no others', (name) => {
    const entry = debian12Archive.entry(name);
    expect(entry, `${name} is in ${debian12Archive.describe}`).toBeDefined();
    const dpkg = listed.get(name)!;
    const isDir = (p: string) => {
      try {
        return lstatSync(path.join(root, p)).isDirectory();
      } catch {
        return false;
      }
    };
    const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);
    const commands = dpkg.filter((p) => COMMAND_DIRS.includes(path.posix.dirname(p)) && !isDir(p)).map(base);
    const services = dpkg
      .filter((p) => UNIT_DIRS.includes(path.posix.dirname(p)) && /^[^@]+\.(service|timer|socket)$/.test(base(p)))
      .map((p) => base(p).replace(/\.service$/, ''));
    expect({ commands: sorted(entry!.commands), services: sorted(entry!.services) }).toEqual({ commands: sorted(commands), services: sorted(services) });
    const own = facts[name]!;
    expect(entry!.paths.filter((p) => !exists(root, p))).toEqual([]);
    expect(entry!.paths.filter((p) => !dpkg.includes(p) && !own.paths.includes(p))).toEqual([]);
    expect(dpkg.filter((p) => inFactTree(p) && exists(root, p) && !isDir(p) && !entry!.paths.includes(p))).toEqual([]);
  });

  it.each(TEN)('%s: what its real install made (users, groups, created paths) is in the archive entry', (name) => {
    const entry = debian12Archive.entry(name)!;
    const own = facts[name]!;
    const missing = {
      users: own.users.filter((u) => !entry.users.includes(u)),
      groups: own.groups.filter((g) => !entry.groups.includes(g)),
      paths: own.paths.filter((p) => !entry.paths.includes(p)),
    };
    expect(missing).toEqual({ users: [], groups: [], paths: [] });
  });

  it('an unknown package and one the base has are clear errors, and nothing is left behind', async () => {
    const leftovers = () => [...readdirSync(tmpdir()).filter((d) => d.startsWith('imgc-facts-')), ...mountsContaining('imgc-facts-')];
    expect(leftovers()).toEqual([]);
    await expect(installedFacts(root, ['tree', 'imgc-no-such-package'], { suite: ir.base.suite })).rejects.toThrow(
      /^package 'imgc-no-such-package' cannot be installed from \S+ bookworm: Unable to locate package imgc-no-such-package$/,
    );
    await expect(installedFacts(root, ['bash', 'tree'], { suite: ir.base.suite })).rejects.toThrow(/^already installed in \S+, so installing cannot show what they add: bash \(their facts are the base's\)$/);
    expect(leftovers()).toEqual([]);
  });

  it('an interrupt while a package installs ends it and leaves no copy or mount behind', async () => {
    const parent = tempDir('facts-interrupt');
    // The built module, in a process of its own to interrupt, as a generator run is.
    const mod = pathToFileURL(path.join(repoRoot, 'dist/src/build/installed-facts.js')).href;
    const script = `const { installedFacts } = await import(${JSON.stringify(mod)});
await installedFacts(${JSON.stringify(root)}, ['rsyslog'], { suite: 'bookworm', workParent: ${JSON.stringify(parent)}, progress: (l) => console.log(l) });`;
    const child = execa(process.execPath, ['--input-type=module', '-e', script], { reject: false, all: true });
    await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('rsyslog: installing') && resolve()));
    // While the package's copy of the root is mounted (apt is installing in it).
    while (!mountsContaining(path.join(parent, 'imgc-facts-')).some((m) => m.includes('/rsyslog/'))) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    const r = await child;
    expect(r.all).toContain('interrupted by SIGINT');
    expect(r.exitCode).not.toBe(0);
    expect({ left: readdirSync(parent), mounted: mountsContaining(parent) }).toEqual({ left: [], mounted: [] });
  });
});
