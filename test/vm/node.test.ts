// The reference node as a platform team ships it: two clones of its disk,
// each grown with `qemu-img resize` and given its own NoCloud seed, boot on
// QEMU's (restricted) user network with their own identity; and a kernel
// reinstalled on a booted node is the one the next boot runs. The disk is
// built once (the phases come from the cache when the build tests made them).
import { execa } from 'execa';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { imgcRun, outDir, summaryOf } from '../build/helpers.js';
import { espFiles, ESP_MOUNT } from '../../src/core/boot.js';
import { rootPartitionOffset } from '../../src/host/gpt.js';
import { verifyBoot, type BootResult } from '../../src/verify/boot.js';
import type { Image } from '../../src/ir/schema.js';
import { cannotBootNode, cloneDisk, installedVersion, probe, seedIso, serveDebs } from './node-support.js';

const example = 'examples/node-image-debian.ts';
const user = 'node-admin';
const key = (n: string) => `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE${n}xq0rYkq3c9JjvYd6Q9Hw1nY0s0mJ8m0u7nU5k0 ${user}@${n}`;
/** TCG on a loaded 2-core machine: a first boot with cloud-init takes minutes. */
const BOOT_SECONDS = 1500;

if (cannotBootNode) console.warn(`node VM tests skipped: ${cannotBootNode}`);

describe.skipIf(cannotBootNode)('the reference node, cloned and booted', () => {
  // Made in beforeAll: a skipped file runs no hook that would remove it.
  let out: string;
  let ir: Image;
  let builtRootBytes: number;
  const clone = (name: string) => path.join(out, `${name}.raw`);
  const boot = async (name: string, opts: { seed: string; checks: ReturnType<typeof probe>[]; forwards?: { guest: string; port: number }[] }): Promise<BootResult> => {
    const started = Date.now();
    const r = await verifyBoot(ir, clone(name), { timeoutSeconds: BOOT_SECONDS, consoleLog: path.join(out, 'logs', `${name}-console.log`), scratch: out, inPlace: true, ...opts });
    console.log(`${name}: booted and checked in ${((Date.now() - started) / 1000).toFixed(0)}s (${r.accel})`);
    return r;
  };

  beforeAll(async () => {
    out = outDir('vm-node');
    const b = await imgcRun(['build', example, '--no-typecheck', '--out', out]);
    if (b.exitCode !== 0) throw new Error(`the build failed:\n${b.all}`);
    expect(summaryOf(out).boot).toMatchObject({ failed: 0 });
    ir = JSON.parse((await imgcRun(['ir', '--no-typecheck', example])).stdout) as Image;
    const disk = path.join(out, 'disk.raw');
    const stats = (await execa('dumpe2fs', ['-h', `${disk}?offset=${await rootPartitionOffset(disk)}`])).stdout;
    builtRootBytes = Number(/^Block count:\s+(\d+)/m.exec(stats)![1]) * Number(/^Block size:\s+(\d+)/m.exec(stats)![1]);
    mkdirSync(path.join(out, 'logs'), { recursive: true });
  }, 1_800_000);

  it('two clones, each grown and seeded, boot with their own identity, an IPv4 address, dbus and no failed unit', async () => {
    const nodes = ['node-a', 'node-b'];
    const seeds = await Promise.all(nodes.map((n) => seedIso(out, { hostname: n, user, key: key(n) })));
    await Promise.all(nodes.map((n) => cloneDisk(path.join(out, 'disk.qcow2'), clone(n), '6G')));
    const checks = [
      probe('machine-id', 'cat /etc/machine-id'),
      probe('host-keys', 'ls /etc/ssh/ssh_host_*_key.pub >/dev/null && cat /etc/ssh/ssh_host_*_key.pub | sha256sum | cut -c1-64'),
      // hostnamectl asks systemd-hostnamed over dbus.
      probe('hostname', 'echo "$(hostnamectl --static) $(hostname)"'),
      probe('authorized-key', `cat /home/${user}/.ssh/authorized_keys`),
      probe('root-bytes', 'df -B1 --output=size / | tail -n 1'),
      probe('dbus', 'systemctl is-active dbus'),
      probe('ipv4', 'ip -4 -o addr show scope global'),
    ];
    // Concurrently: under TCG each VM leaves the other core time it does not use.
    const results = await Promise.all(nodes.map((n, i) => boot(n, { seed: seeds[i]!, checks })));
    const root = path.join(out, 'rootfs');
    const imageMachineId = readFileSync(path.join(root, 'etc/machine-id'), 'utf8').trim();
    const imageKeys = readdirSync(path.join(root, 'etc/ssh')).filter((f) => f.startsWith('ssh_host_'));
    expect(imageMachineId).toBe('');
    expect(imageKeys).toEqual([]);
    for (const [i, r] of results.entries()) {
      const n = nodes[i]!;
      expect(r.failures, `${n}: ${JSON.stringify(r.failures)}`).toEqual([]);
      expect(r.state, n).toBe('running');
      // The definition's checks ran too: networkd's IPv4 address and cloud-init's status among them.
      expect(Object.keys(r.printed).length, n).toBeGreaterThanOrEqual(checks.length);
      expect(r.printed['machine-id'], n).toMatch(/^[0-9a-f]{32}$/);
      expect(r.printed['host-keys'], n).toMatch(/^[0-9a-f]{64}$/);
      expect(r.printed['hostname'], n).toBe(`${n} ${n}`);
      expect(r.printed['authorized-key'], n).toBe(key(n));
      expect(Number(r.printed['root-bytes']), n).toBeGreaterThan(builtRootBytes + 1024 ** 3);
      expect(r.printed['dbus'], n).toBe('active');
      expect(r.printed['ipv4'], n).toMatch(/inet 10\.0\.2\.\d+\//);
    }
    const [a, b] = results as [BootResult, BootResult];
    expect(a.printed['machine-id']).not.toBe(b.printed['machine-id']);
    expect(a.printed['host-keys']).not.toBe(b.printed['host-keys']);
  }, 3_600_000);

  it('a kernel reinstalled on a booted node (a .deb served from 127.0.0.1) is copied to the ESP and boots next', async () => {
    const a = clone('node-a');
    expect(existsSync(a), 'the clones test boots node-a first').toBe(true);
    const seed = path.join(out, 'node-a-seed.iso');
    // The kernel the image boots (/vmlinuz leads to it): the one reinstalled.
    const release = path.basename(readlinkSync(path.join(out, 'rootfs', 'vmlinuz'))).replace(/^vmlinuz-/, '');
    const pkg = `linux-image-${release}`;
    const version = installedVersion(path.join(out, 'rootfs'), pkg);
    expect(version, pkg).toBeDefined();
    // The same version from the machine's mirror (apt on this host), served to the node only.
    const debs = path.join(out, 'debs');
    mkdirSync(debs, { recursive: true });
    const dl = await execa('apt-get', ['download', `${pkg}=${version}`], { cwd: debs, reject: false, all: true });
    expect(dl.exitCode, `apt-get download ${pkg}=${version} on this machine: ${dl.all}`).toBe(0);
    const { server, port } = await serveDebs(debs);
    const esp = (f: string) => `${ESP_MOUNT}${f}`;
    try {
      const apt = '-o Dir::Etc::SourceList=/etc/apt/imgc-test.list -o Dir::Etc::SourceParts=- -o Acquire::Languages=none';
      const reinstall = await boot('node-a', {
        seed,
        forwards: [{ guest: '10.0.2.100:80', port }],
        checks: [
          probe(
            'reinstall',
            [
              `before=$(sha256sum ${esp(espFiles.initrd)} | cut -c1-64)`,
              "echo 'deb [trusted=yes] http://10.0.2.100/ ./' >/etc/apt/imgc-test.list",
              `{ apt-get ${apt} update && DEBIAN_FRONTEND=noninteractive apt-get ${apt} install -y --reinstall ${pkg}; } >/var/tmp/reinstall.log 2>&1 || { tail -n 5 /var/tmp/reinstall.log; exit 1; }`,
              `echo "$before $(sha256sum /boot/initrd.img-${release} | cut -c1-64)"`,
            ].join('\n'),
          ),
        ],
      });
      expect(reinstall.failures, JSON.stringify(reinstall.failures)).toEqual([]);
      const [before, regenerated] = reinstall.printed['reinstall']!.split(' ');
      // The reinstall made a new initramfs (initramfs-tools writes the time into it): the ESP must get that one.
      expect(regenerated).not.toBe(before);
      const next = await boot('node-a', {
        seed,
        checks: [
          probe(
            'entry',
            [
              `e=${esp(espFiles.entry)}`,
              `grep -qx "version $(uname -r)" $e && grep -qx 'linux ${espFiles.kernel}' $e && grep -qx 'initrd ${espFiles.initrd}' $e || { cat $e; exit 1; }`,
              `cmp ${esp(espFiles.kernel)} /boot/vmlinuz-$(uname -r) && cmp ${esp(espFiles.initrd)} /boot/initrd.img-$(uname -r)`,
              `echo "$(uname -r) $(dpkg-query -W -f '\${Version}' linux-image-$(uname -r)) $(sha256sum ${esp(espFiles.initrd)} | cut -c1-64)"`,
            ].join('\n'),
          ),
        ],
      });
      expect(next.failures, JSON.stringify(next.failures)).toEqual([]);
      expect(next.printed['entry']).toBe(`${release} ${version} ${regenerated}`);
    } finally {
      server.close();
    }
  }, 3_600_000);
});
