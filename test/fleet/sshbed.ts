// The SSH test bed: N "hosts", each a separate copy of a real Debian root
// (the build cache's debootstrap tarball, with openssh-server and python3
// installed once and kept in the cache as a tarball of its own) whose own
// sshd listens on 127.0.0.1:22 inside a network, mount, UTS and PID namespace
// of its own. The namespaces keep a host's sysctls (net.*), mounts and
// processes apart from this machine's and from each other: provisioning one
// with `sysctl --system` changes that host only. ssh reaches a host through a
// ProxyCommand that enters its network namespace (./relay.mjs). stop() kills
// each namespace's first process (the kernel then kills everything in it and
// drops its mounts), waits for it, and checks that no process is left.
import { execa, type ResultPromise } from 'execa';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readlinkSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../../src/build/cache.js';
import { RootMounts } from '../../src/build/mounts.js';
import { packRoot, unpackRoot } from '../../src/host/tar.js';
import type { Image } from '../../src/ir/schema.js';
import { rootTestsOff } from '../helpers/root.js';
import { tempDir } from '../helpers/temp.js';
import { freshRoot, inRoot, removeRoot } from '../runtime-support.js';

const relay = fileURLToPath(new URL('./relay.mjs', import.meta.url));
/**
 * What a test host needs beyond the base: its sshd, the python3 Ansible's
 * modules run with, and python3-apt, which runtime.yml's preflight asks for
 * where the apt module runs (the module would install it on its own).
 */
const extraPackages = ['openssh-server', 'python3', 'python3-apt'];

/** Why the bed cannot run here, or undefined. */
export const cannotBed: string | undefined =
  rootTestsOff ?? (process.getuid?.() !== 0 ? 'needs root (namespaces, chroot)' : !existsSync('/usr/sbin/debootstrap') ? 'needs debootstrap' : !existsSync('/usr/bin/unshare') ? 'needs unshare (util-linux)' : undefined);

/**
 * The prepared root's tarball in the build cache: the base of `ir` plus
 * openssh-server and python3 (apt, with the network, once; later runs unpack it).
 */
export const bedTarball = async (ir: Image): Promise<string> => {
  const key = createHash('sha256').update(JSON.stringify({ base: { suite: ir.base.suite, variant: ir.base.variant, include: ir.base.include }, extraPackages })).digest('hex').slice(0, 32);
  const file = path.join(cacheDir(process.env), `testbed-ssh-${key}.tar.zst`);
  if (existsSync(file)) return file;
  const root = await freshRoot(ir, 'sshbed-prepare');
  const mounts = new RootMounts(root);
  const policy = path.join(root, 'usr/sbin/policy-rc.d');
  try {
    writeFileSync(path.join(root, 'etc/resolv.conf'), await execa('cat', ['/etc/resolv.conf']).then((r) => `${r.stdout}\n`));
    writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    mounts.mount();
    const r = await inRoot(root, `apt-get install -y -q --no-install-recommends ${extraPackages.join(' ')} >/dev/null`);
    if (r.exitCode !== 0) throw new Error(`could not install ${extraPackages.join(', ')} into the test bed root: ${r.stderr}`);
  } finally {
    const failed = mounts.unmountAll();
    rmSync(policy, { force: true });
    rmSync(path.join(root, 'etc/resolv.conf'), { force: true });
    if (failed.length) throw new Error(`could not unmount ${failed.join(', ')}`);
  }
  const tmp = `${file}.tmp-${process.pid}`;
  await packRoot(root, tmp, 'zstd');
  renameSync(tmp, file);
  removeRoot(root);
  return file;
};

export interface BedHost {
  readonly name: string;
  /** The host's root directory, as this machine sees it. */
  readonly root: string;
  /** The pid of the process holding the host's namespaces (its network namespace is /proc/PID/ns/net). */
  readonly pid: number;
}

// The namespace's first process: brings up loopback and names the host
// (with the root's own tools: this machine needs none of them), mounts the
// kernel filesystems the host needs, then runs the root's own sshd in the
// chroot and waits for it.
const hostInit = `set -eu
chroot "$2" ip link set lo up
chroot "$2" hostname "$1"
mount -t proc proc "$2/proc"
mount --rbind /dev "$2/dev"
mkdir -p "$2/run/sshd"
chroot "$2" /usr/sbin/sshd -D -e -o ListenAddress=127.0.0.1 -o Port=22 \\
  -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o UsePAM=no &
wait
`;

export class SshBed {
  private readonly procs: ResultPromise[] = [];
  readonly hosts: BedHost[] = [];

  private constructor(
    readonly dir: string,
    readonly key: string,
  ) {}

  /** Starts `names.length` hosts from the prepared root of `ir`'s base; `ready` on each, bounded in time. */
  static async start(ir: Image, names: readonly string[]): Promise<SshBed> {
    const tarball = await bedTarball(ir);
    const dir = tempDir('sshbed', process.env['IMGC_TEST_DIR'] ?? undefined);
    const key = path.join(dir, 'id_ed25519');
    await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'imgc-test-bed', '-f', key]);
    const pub = await execa('cat', [`${key}.pub`]);
    const bed = new SshBed(dir, key);
    try {
      for (const name of names) {
        const root = path.join(dir, name);
        mkdirSync(root);
        await unpackRoot(tarball, root);
        mkdirSync(path.join(root, 'root/.ssh'), { recursive: true, mode: 0o700 });
        writeFileSync(path.join(root, 'root/.ssh/authorized_keys'), `${pub.stdout}\n`, { mode: 0o600 });
        const proc = execa('unshare', ['--mount', '--net', '--uts', '--pid', '--fork', '--kill-child', '--propagation', 'private', '--', '/bin/sh', '-c', hostInit, 'init', name, root], {
          reject: false,
          stdin: 'ignore',
          all: true,
        });
        bed.procs.push(proc);
        bed.hosts.push({ name, root, pid: proc.pid! });
      }
      for (const h of bed.hosts) await bed.waitReady(h);
    } catch (e) {
      await bed.stop();
      throw e;
    }
    return bed;
  }

  /** The options that make `ssh root@NAME` reach host `h`. */
  sshOptions(h: BedHost): string[] {
    return [
      '-F', 'none',
      '-i', this.key,
      '-o', 'IdentitiesOnly=yes',
      '-o', 'BatchMode=yes',
      '-o', 'StrictHostKeyChecking=no',
      '-o', 'UserKnownHostsFile=/dev/null',
      '-o', 'LogLevel=ERROR',
      '-o', `ProxyCommand=${this.proxyCommand(h)}`,
    ];
  }

  private proxyCommand(h: BedHost): string {
    return `nsenter --target ${h.pid} --net -- ${process.execPath} ${relay} 127.0.0.1 22`;
  }

  /** `ssh root@HOST COMMAND` with `input` on stdin. */
  ssh(h: BedHost, command: string, input?: string) {
    return execa('ssh', [...this.sshOptions(h), `root@${h.name}`, command], { reject: false, ...(input !== undefined ? { input } : { stdin: 'ignore' }) });
  }

  private async waitReady(h: BedHost): Promise<void> {
    const until = Date.now() + 30_000;
    for (;;) {
      const r = await this.ssh(h, 'true');
      if (r.exitCode === 0) return;
      if (Date.now() > until) throw new Error(`sshd of test host ${h.name} did not answer in 30 s: ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 200));
    }
  }

  /** An Ansible inventory (YAML) of the hosts, with per-host variables. */
  inventory(vars: Record<string, Record<string, string | number | boolean>> = {}): string {
    const hosts = Object.fromEntries(
      this.hosts.map((h) => [
        h.name,
        {
          ansible_user: 'root',
          ansible_ssh_private_key_file: this.key,
          ansible_ssh_common_args: `-F none -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ProxyCommand="${this.proxyCommand(h)}"`,
          ansible_python_interpreter: '/usr/bin/python3',
          ...vars[h.name],
        },
      ]),
    );
    return `${JSON.stringify({ all: { hosts } }, null, 2)}\n`;
  }

  /** Pids of processes whose root directory is one of the hosts' roots (none after stop()). */
  leftovers(): number[] {
    const roots = new Set(this.hosts.map((h) => h.root));
    const out: number[] = [];
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        if (roots.has(readlinkSync(`/proc/${p}/root`))) out.push(Number(p));
      } catch {
        // gone meanwhile, or not ours to read
      }
    }
    return out;
  }

  /** Ends every host (their namespaces with everything in them), then removes the roots. */
  async stop(): Promise<void> {
    for (const p of this.procs) p.kill('SIGTERM');
    await Promise.all(this.procs);
    const until = Date.now() + 10_000;
    while (this.leftovers().length && Date.now() < until) await new Promise((res) => setTimeout(res, 100));
    const left = this.leftovers();
    if (left.length) throw new Error(`test bed processes still running: ${left.join(', ')}`);
    if (process.env['IMGC_KEEP_TMP'] !== '1') rmSync(this.dir, { recursive: true, force: true });
  }
}
