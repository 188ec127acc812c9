// The reference node built by the shell target (node-image-suite.ts's tests),
// then what its bootable disks must do, booted for real in QEMU (TCG here, KVM
// where it works): a GPT disk with an ESP, probes of the tarball and the disk
// that hold every promised fact, an SBOM, `imgc verify --boot` (and it leaves
// no QEMU behind, also when interrupted or out of time), a node whose
// containerd cannot start reported with the step that enabled it (from this
// build's tarball, --from-tar), and a second --no-cache build of the node under
// the same SOURCE_DATE_EPOCH that gives the same bytes.
import { execa } from 'execa';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cannotBuild, failedLogs, imgcRun, outDir, read } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { repoRoot } from '../helpers/cli.js';
import { fileSha256 } from '../../src/build/cache.js';
import { epoch, example, referenceNode } from './node-image-suite.js';

const cannotBoot = cannotBuild ?? (['/usr/bin/qemu-system-x86_64', '/usr/share/OVMF/OVMF_CODE.fd'].every(existsSync) ? undefined : 'qemu-system-x86 and ovmf are not installed');

/**
 * The QEMU processes running now on a disk below one of `dirs`: this file's
 * own, whatever other test files (the Ansible build's boot check) run at the
 * same time.
 */
const qemusUsing = async (...dirs: string[]): Promise<string[]> => {
  const r = await execa('pgrep', ['-a', '-f', '^(timeout .*)?qemu-system-x86_64'], { reject: false });
  return r.stdout.split('\n').filter((l) => l && dirs.some((d) => l.includes(d)));
};

/** Every entry of a tarball as a line: its listing (mode, owner, size, time, name) and its content's sha256. */
const tarEntries = async (file: string): Promise<string[]> => {
  const listing = (await execa('tar', ['--zstd', '-tvf', file, '--full-time', '--numeric-owner'], { maxBuffer: 1 << 30 })).stdout.split('\n');
  const sums = (await execa('tar', ['--zstd', '-xf', file, '--to-command=sh -c \'printf "%s " "$TAR_FILENAME"; sha256sum\''], { maxBuffer: 1 << 30 })).stdout.split('\n');
  return [...listing, ...sums];
};

describe.skipIf(cannotBoot)('imgc build shell of examples/node-image-debian.ts, and its disks booted in QEMU', () => {
  const { out } = referenceNode('shell');
  // verify --boot's disk copies go here (TMPDIR), so a QEMU left behind on one is found.
  const scratch = outDir('boot-scratch');

  it('made a GPT disk with an EFI system partition and the root, and the qcow2 of it', async () => {
    const table = JSON.parse((await execa('sfdisk', ['--json', path.join(out, 'disk.raw')])).stdout).partitiontable;
    expect(table.label).toBe('gpt');
    expect(table.partitions.map((p: { type: string; name: string }) => [p.type, p.name])).toEqual([
      ['C12A7328-F81F-11D2-BA4B-00A0C93EC93B', 'ESP'],
      ['4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709', 'root'],
    ]);
    expect(statSync(path.join(out, 'disk.raw')).size).toBe(4 * 1024 ** 3);
    const esp = `${path.join(out, 'disk.raw')}@@1M`;
    const entry = (await execa('mtype', ['-i', esp, '::/loader/entries/imgc.conf'], { env: { MTOOLS_SKIP_CHECK: '1' } })).stdout;
    expect(entry).toContain(`root=PARTUUID=${table.partitions[1].uuid.toLowerCase()}`);
    const files = (await execa('mdir', ['-i', esp, '-b', '::/EFI/BOOT'], { env: { MTOOLS_SKIP_CHECK: '1' } })).stdout;
    expect(files).toMatch(/BOOTX64\.EFI/);
    const info = JSON.parse((await execa('qemu-img', ['info', '--output=json', path.join(out, 'disk.qcow2')])).stdout);
    expect([info.format, info['virtual-size']]).toEqual(['qcow2', 4 * 1024 ** 3]);
    // imgc verify reads the root partition of the disk as files too.
    const v = await imgcRun(['verify', example, '--no-typecheck', '--image', path.join(out, 'disk.qcow2')]);
    expect(v.exitCode, v.all).toBe(0);
  });

  it('the probe of the built node, tarball or disk, holds every fact the definition promised, and the definition checks against it', async () => {
    const dir = tempDir('boot-probe');
    const promised = path.join(dir, 'promised.json');
    const c = await imgcRun(['contract', example, '--no-typecheck', '--out', promised]);
    expect(c.exitCode, c.all).toBe(0);
    for (const image of ['rootfs.tar.zst', 'disk.qcow2']) {
      for (const phase of ['base', 'provision']) {
        const probed = path.join(dir, `${image}-${phase}.json`);
        const p = await imgcRun(['probe', '--image', path.join(out, image), '--phase', phase, '--expect', promised, '--out', probed]);
        expect(p.exitCode, p.all).toBe(0);
        const d = await imgcRun(['contract', 'diff', promised, probed]);
        expect(d.exitCode, d.all).toBe(0);
        expect(d.stdout).toMatch(/: 0 removed, 0 changed, \d+ added/);
        // As the state after the base, every phase fits the built node; after provision, the artifacts and verify do (the disk's boot files included).
        const k = await imgcRun(['check', example, '--no-typecheck', '--against', probed]);
        expect(k.exitCode, `${image} after ${phase}: ${k.all}`).toBe(0);
      }
    }
  }, 600_000);

  it('writes an SPDX SBOM of the root beside the manifest', () => {
    const sbom = JSON.parse(read(path.join(out, 'sbom.spdx.json')));
    expect(sbom.spdxVersion).toBe('SPDX-2.3');
    const status = read(path.join(out, 'rootfs', 'var/lib/dpkg/status'));
    const version = /^Package: containerd\n(?:[^\n]+\n)*?Version: (\S+)$/m.exec(status)![1];
    const pkg = sbom.packages.find((p: { name: string }) => p.name === 'containerd');
    expect(pkg.versionInfo).toBe(version);
    expect(pkg.externalRefs[0].referenceLocator).toMatch(/^pkg:deb\/debian\/containerd@/);
    expect(sbom.packages.length).toBe(status.split('\n').filter((l) => l === 'Status: install ok installed').length);
    expect(JSON.parse(read(path.join(out, 'manifest.json'))).sbom).toBe('sbom.spdx.json');
  });

  it('imgc verify --boot boots the qcow2 and checks every runtime fact (JSON)', async () => {
    const r = await imgcRun(['verify', example, '--no-typecheck', '--boot', path.join(out, 'disk.qcow2'), '--format', 'json', '--boot-timeout', '600'], { env: { TMPDIR: scratch } });
    expect(r.exitCode, r.all).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res.failed).toBe(0);
    expect(res.checked).toBeGreaterThan(15);
    expect(await qemusUsing(out, scratch)).toEqual([]);
  }, 900_000);

  it('a node whose containerd cannot start is reported with the step that enabled it', async () => {
    const broken = outDir('boot-broken');
    const r = await imgcRun(['build', 'test/build/fixtures/broken-boot.ts', '--no-typecheck', '--out', broken, '--from-tar', path.join(out, 'rootfs.tar.zst')]);
    expect(r.exitCode, r.all).toBe(1);
    expect(r.all).toMatch(/test\/build\/fixtures\/broken-boot\.ts:13:8 - verify failed provision\.\d+\.service: service 'containerd' active: is (activating|failed), not active/);
    // Why, in containerd's own words, not systemd's restart lines.
    expect(r.all).toMatch(/not active: [^\n]*failed to load TOML/);
    expect(r.all).toMatch(/runtime facts do not hold on the booted node/);
    expect(existsSync(path.join(broken, 'disk.qcow2'))).toBe(false);
    expect(read(path.join(failedLogs(broken), 'boot.txt'))).toMatch(/provision\.\d+\.service: service/);
    expect(await qemusUsing(broken)).toEqual([]);
  }, 1_200_000);

  it('Ctrl-C during imgc verify --boot stops QEMU and removes its copy of the disk', async () => {
    const own = tempDir('boot-interrupted');
    const sub = imgcRun(['verify', example, '--no-typecheck', '--boot', path.join(out, 'disk.qcow2')], { env: { TMPDIR: own } });
    try {
      // Wait until QEMU runs (under `timeout`: two processes name it), then interrupt.
      for (let i = 0; i < 600 && (await qemusUsing(own)).length === 0; i++) await new Promise((res) => setTimeout(res, 200));
      expect(await qemusUsing(own)).not.toEqual([]);
      sub.kill('SIGINT');
      const r = await sub;
      expect(r.exitCode === 130 || r.signal === 'SIGINT', r.all).toBe(true);
      expect(await qemusUsing(own)).toEqual([]);
      expect(readdirSync(own)).toEqual([]);
    } finally {
      // A failed expectation above must not leave this verify booting beside the next test's (SIGINT: it stops its QEMU).
      sub.kill('SIGINT');
      await sub;
    }
  }, 300_000);

  it('a boot that does not finish in time is reported, its console kept and named, and leaves no QEMU', async () => {
    const buildConsole = read(path.join(out, 'logs', 'boot-console.log'));
    const r = await imgcRun(['verify', example, '--no-typecheck', '--boot', path.join(out, 'disk.qcow2'), '--boot-timeout', '5'], { env: { TMPDIR: scratch } });
    expect(r.exitCode, r.all).toBe(1);
    expect(r.stdout).toMatch(/the node boots to multi-user: did not finish within 5s/);
    const kept = /^imgc: the node's console: (\S+)$/m.exec(r.stderr)?.[1];
    expect(kept, r.all).toMatch(/imgc-verify-console-[^/]+\/boot-console\.log$/);
    expect(existsSync(path.resolve(repoRoot, kept!))).toBe(true);
    // Not written into the build's folder: its logs/ are the build's own.
    expect(read(path.join(out, 'logs', 'boot-console.log'))).toBe(buildConsole);
    expect(await qemusUsing(out, scratch)).toEqual([]);
  }, 300_000);

  it('a second --no-cache build of the node under the same SOURCE_DATE_EPOCH gives the same tarball, disks, manifest and SBOM', async () => {
    const again = outDir('node-repro');
    const r = await imgcRun(['build', example, '--no-typecheck', '--out', again, '--no-cache'], { env: epoch });
    expect(r.exitCode, r.all).toBe(0);
    const [t1, t2] = [out, again].map((d) => path.join(d, 'rootfs.tar.zst')) as [string, string];
    if ((await fileSha256(t1)) !== (await fileSha256(t2))) {
      // Which entries differ, so a failure says what was not reproducible.
      const [l1, l2] = (await Promise.all([t1, t2].map(tarEntries))) as [string[], string[]];
      expect(l2.filter((l) => !l1.includes(l)), `entries of ${t2} not in ${t1} (and the other way: ${l1.filter((l) => !l2.includes(l)).join('; ')})`).toEqual([]);
    }
    for (const f of ['rootfs.tar.zst', 'disk.raw', 'disk.qcow2', 'manifest.json', 'sbom.spdx.json']) {
      const [a, b] = await Promise.all([out, again].map((d) => fileSha256(path.join(d, f))));
      expect(a, f).toBe(b);
    }
    // The steps saw the epoch: useradd wrote its day as the password's last change, not the build's day.
    const shadow = (await execa('tar', ['--zstd', '-xOf', t1, './etc/shadow'])).stdout;
    expect(shadow).toMatch(new RegExp(`^ops:[^:]*:${Math.floor(Number(epoch.SOURCE_DATE_EPOCH) / 86400)}:`, 'm'));
    expect(JSON.parse(read(path.join(out, 'manifest.json'))).created).toBe('2023-11-14T22:13:20Z');
  }, 1_800_000);
});
