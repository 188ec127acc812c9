// The reference node image, built for real by one target: debootstrap
// (cached), both root phases in a chroot, all four artifacts, the boot check;
// the facts are then read straight off the disk, and a second run of the same
// target on the built root must change nothing. One test file per target
// (node-image.test.ts, node-image-ansible.test.ts), so the two builds run on
// two workers at once.
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { imgc } from '../helpers/cli.js';
import { rootPartitionOffset } from '../../src/host/gpt.js';
import { imgcRun, mountsContaining, outDir, read, snapshot, summaryOf } from './helpers.js';
import type { BuildPlan } from '../../src/build/plan.js';
import { cacheDir } from '../../src/build/cache.js';

export const example = 'examples/node-image-debian.ts';

/** Every build of the suite is under one SOURCE_DATE_EPOCH: node-image.test.ts builds the node again and compares the bytes. */
export const epoch = { SOURCE_DATE_EPOCH: '1700000000' };

/**
 * Inside a describe: builds the example with `target` (beforeAll) and adds the
 * tests every target's build must pass. Returns the build's output folder, for
 * more tests on the same build.
 */
export const referenceNode = (target: 'shell' | 'ansible'): { out: string } => {
  // In a folder of its own: a build's work directory goes beside --out, and the other target's build of
  // this image (the other test file, at the same time) must not be taken for this one's.
  const out = path.join(outDir(`node-${target}`), 'out');
  let build: Awaited<ReturnType<typeof imgcRun>>;

  beforeAll(async () => {
    // --no-cache: run the phases even if an earlier run cached them (the base tarball is reused).
    build = await imgcRun(['build', example, '--no-typecheck', '--target', target, '--out', out, '--no-cache'], { env: epoch });
  }, 1_800_000);

  it('builds every artifact and verifies the facts', () => {
    expect(build.exitCode, build.all).toBe(0);
    const s = summaryOf(out);
    expect(s.ok).toBe(true);
    expect(s.artifacts.map((a) => [a.output, a.format])).toEqual([
      ['rootfs', 'dir'],
      ['rootfs.tar.zst', 'tar'],
      ['disk.raw', 'raw'],
      ['disk.qcow2', 'qcow2'],
    ]);
    expect(s.verify?.failed).toBe(0);
    expect(s.verify?.checked).toBeGreaterThan(150);
    // The build ends boot-verified: the disk booted in QEMU and every runtime fact held.
    expect(s.boot, build.all).toMatchObject({ disk: 'disk.raw', failed: 0 });
    expect(s.boot!.checked).toBeGreaterThan(15);
    // The time to a boot-verified node is printed.
    expect(build.all).toMatch(/boot-verified node disk\.raw [\d.]+s after the build started/);
    expect(build.all).toMatch(/verify\.2\.verify boot: \d+ runtime facts hold on the booted node \((TCG|KVM), [\d.]+s/);
    // The node reported a finished boot (not degraded), and powered itself off.
    expect(read(path.join(out, 'logs', 'boot-results.txt'))).toMatch(/^imgc-boot state running$/m);
    expect(read(path.join(out, 'logs', 'boot-console.log'))).toMatch(/reboot: Power down/);
    expect(build.all).toMatch(/artifact\.5\.cloudImage: qemu image 'qemu': skipped \(a Packer source: the packer target makes it\)/);
    if (target === 'ansible') expect(build.all).toMatch(/installing python3/);
    expect(mountsContaining(`${path.dirname(out)}/.imgc-work-k8s-node-debian-`)).toEqual([]);
  });

  it('writes a manifest whose checksums match the files and whose definition hash is the IR\'s', async () => {
    const manifest = JSON.parse(read(path.join(out, 'manifest.json')));
    const sums = await execa('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out, reject: false });
    expect(sums.exitCode, sums.stdout + sums.stderr).toBe(0);
    expect(sums.stdout.split('\n').sort()).toEqual(['disk.qcow2: OK', 'disk.raw: OK', 'rootfs.tar.zst: OK']);
    const ir = await imgc(['ir', '--no-typecheck', example]);
    // execa strips the final newline `imgc ir` prints.
    expect(manifest.definition.sha256).toBe(createHash('sha256').update(`${ir.stdout}\n`).digest('hex'));
    for (const a of manifest.artifacts) if (a.format !== 'dir') expect(read(path.join(out, 'SHA256SUMS'))).toContain(`${a.sha256}  ${a.output}`);
    expect(manifest.facts).toEqual(expect.arrayContaining([{ kind: 'user', key: 'ops' }, { kind: 'package', key: 'containerd' }, { kind: 'sysctl', key: 'net.ipv4.ip_forward' }]));
  });

  it('has the promised facts on disk', () => {
    const root = path.join(out, 'rootfs');
    expect(read(path.join(root, 'etc/passwd'))).toMatch(/^ops:x:\d+:\d+:[^:]*:\/home\/ops:\/bin\/bash$/m);
    expect(read(path.join(root, 'etc/group'))).toMatch(/^admins:x:\d+:ops$/m);
    const status = read(path.join(root, 'var/lib/dpkg/status'));
    for (const pkg of ['openssh-server', 'containerd', 'runc', 'containernetworking-plugins', 'conntrack', 'socat', 'kubernetes-client', 'systemd']) {
      expect(status, pkg).toMatch(new RegExp(`^Package: ${pkg}\\n(?:[^\\n]+\\n)*?Status: install ok installed$`, 'm'));
    }
    expect(read(path.join(root, 'etc/sysctl.d/99-kubernetes.conf')).split('\n').filter(Boolean).sort()).toEqual([
      'net.bridge.bridge-nf-call-ip6tables = 1',
      'net.bridge.bridge-nf-call-iptables = 1',
      'net.ipv4.ip_forward = 1',
    ]);
    expect(read(path.join(root, 'etc/modules-load.d/k8s.conf')).split('\n').filter(Boolean)).toEqual(['overlay', 'br_netfilter']);
    const swap = read(path.join(root, 'etc/fstab'))
      .split('\n')
      .filter((l) => !l.trim().startsWith('#') && l.trim().split(/\s+/)[2] === 'swap');
    expect(swap).toEqual([]);
    expect(read(path.join(root, 'etc/apt/sources.list'))).toMatch(/^deb \S+ bookworm main$/m);
  });

  it('made a bootable disk whose root partition is ext4, and a qcow2 of it', async () => {
    const offset = await rootPartitionOffset(path.join(out, 'disk.raw'));
    expect(offset).toBe(257 * 1024 * 1024);
    const passwd = await execa('debugfs', ['-R', 'cat /etc/passwd', `${path.join(out, 'disk.raw')}?offset=${offset}`], { reject: false });
    expect(passwd.stdout).toMatch(/^ops:x:/m);
    const info = JSON.parse((await execa('qemu-img', ['info', '--output=json', path.join(out, 'disk.qcow2')])).stdout);
    expect(info.format).toBe('qcow2');
    expect(info['virtual-size']).toBe(4 * 1024 ** 3);
  });

  it('imgc verify holds on the raw image', async () => {
    const r = await imgcRun(['verify', example, '--no-typecheck', '--image', path.join(out, 'disk.raw')]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toMatch(/facts checked, all hold/);
  });

  it('imgc build --plan of the example with only a phase-3 setting changed: phase 3 runs, the phases before it are cached, nothing runs', async () => {
    const before = snapshot(out);
    const r = await imgcRun(['build', 'test/build/fixtures/node-image-debian-6g.ts', '--no-typecheck', '--plan', '--format', 'json', '--target', target, '--out', out], { env: epoch });
    expect(r.exitCode, r.all).toBe(0);
    const plan = JSON.parse(r.stdout) as BuildPlan;
    expect(plan.base.status).toBe('cached');
    expect(plan.phases.map((p) => [p.name, p.status])).toEqual([
      ['customize', 'cached'],
      ['provision', 'cached'],
      ['artifact', 'run'],
      ['verify', 'run'],
    ]);
    // The dir and the tarball are kept when the cache still holds the very root they were made from (another
    // build of the same key, in another test or an earlier run, may have stored it again since); the disks' size changed.
    const made = JSON.parse(read(path.join(out, '.imgc-artifacts.json'))) as { artifacts: Record<string, { root?: string }> };
    const provisionKey = plan.phases[1]!.key!;
    const cachedId = (JSON.parse(read(path.join(cacheDir(process.env), `phase-${provisionKey.slice(0, 32)}.json`))) as { id: string }).id;
    const sameRoot = made.artifacts['rootfs']?.root === cachedId;
    expect(plan.phases[2]!.artifacts?.map((a) => [a.output, a.status, a.reason])).toEqual([
      ['rootfs', ...(sameRoot ? ['keep', undefined] : ['make', 'the root it is made from changed'])],
      ['rootfs.tar.zst', ...(sameRoot ? ['keep', undefined] : ['make', 'the root it is made from changed'])],
      ['disk.raw', 'make', sameRoot ? 'its settings (or the root it is made from) changed' : 'the root it is made from changed'],
      ['disk.qcow2', 'make', sameRoot ? 'its settings (or the root it is made from) changed' : 'the root it is made from changed'],
    ]);
    expect(snapshot(out), 'the plan wrote nothing into the output directory').toEqual(before);
  });

  it('a second run of the same target on the built root changes nothing', async () => {
    const again = outDir(`node-${target}-again`);
    // --until: the root phases are the claim; their artifacts and boot were proven by the first build.
    const r = await imgcRun(['build', example, '--no-typecheck', '--target', target, '--out', again, '--from-dir', path.join(out, 'rootfs'), '--no-cache', '--until', 'provision'], { env: epoch });
    expect(r.exitCode, r.all).toBe(0);
    const s = summaryOf(again);
    expect(s.phases.map((p) => p.name)).toEqual(['customize', 'provision']);
    expect(s.artifacts).toEqual([]);
    const root = s.phases.filter((p) => p.kind === 'root');
    for (const [i, p] of root.entries()) {
      if (target === 'shell') {
        expect(p.steps.length).toBeGreaterThan(5);
        expect(p.steps.filter((x) => x.status !== 'unchanged'), p.name).toEqual([]);
        expect(p.changed, p.name).toBe(0);
      } else {
        // apt's Python binding (the apt and package_facts modules) writes its binary caches
        // (/var/cache/apt/*.bin) each time it opens the package cache: sysprep's removal of
        // them is the one task a second run changes. Nothing else, the lists included.
        const log = read(path.join(again, 'logs', `0${i + 1}-${p.name}.log`));
        const changed = [...log.matchAll(/^TASK \[[\w-]+ : (.+)\]\nchanged: /gm)].map((m) => m[1]);
        expect(changed, p.name).toEqual(p.name === 'provision' ? [expect.stringMatching(/^Remove \/var\/cache\/apt\/\*\.bin \(provision\.\d+\.clean, /)] : []);
        expect(p.recap, p.name).toMatchObject({ changed: changed.length, failed: 0 });
      }
    }
  }, 1_200_000);
  return { out };
};
