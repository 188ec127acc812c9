// In-process parts of bootable disks and boot verification: the partition
// layout and its identifiers, the runtime checks a definition promises (and
// the script the node runs, through shellcheck), and the SBOM's reading of
// dpkg's status; and that the same root gives the same disk bytes under
// SOURCE_DATE_EPOCH, however and whenever its files were written.
import { execa } from 'execa';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootable, cloudInit, containerd, debian12, image, kubernetes, kubernetesNetworking, network, sysprep } from 'imgc';
import { derivedUuid, diskLayout, kernelCmdline, makeBootableDisk, makeExt4, sfdiskScript } from '../../src/build/disk.js';
import { fileSha256 } from '../../src/build/cache.js';
import { checkImage } from '../../src/check/checker.js';
import { installedPackages } from '../../src/build/sbom.js';
import { bootChecksOf, bootScript } from '../../src/verify/boot.js';
import { tempDir } from '../helpers/temp.js';

const node = image('boot-unit')
  .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps'] }))
  .customize((p) => p.group('admins').user('ops', { groups: ['admins'] }))
  .provision((p) => p.use(bootable()).use(kubernetesNetworking()).swapOff().use(containerd()).use(kubernetes({ source: 'debian' })))
  .artifact((a) => a.qcow2('disk.qcow2', { bootable: true }))
  .verify((v) => v.boot())
  .toIR('boot-unit.ts');

describe('bootable disk layout', () => {
  it('puts the ESP at 1 MiB and the root after it, aligned, before the backup GPT', () => {
    const l = diskLayout('img', 'disk.raw', '4G');
    expect(l.esp).toMatchObject({ start: 2048, sectors: 524288 });
    expect(l.root.start).toBe(2048 + 524288);
    expect(l.root.sectors % 2048).toBe(0);
    expect((l.root.start + l.root.sectors) * 512).toBeLessThanOrEqual(4 * 1024 ** 3 - 33 * 512);
    expect(sfdiskScript(l)).toContain(`start=526336, size=${l.root.sectors}, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=${l.root.partUuid}, name="root"`);
    expect(kernelCmdline(l)).toContain(`root=PARTUUID=${l.root.partUuid}`);
    expect(kernelCmdline(l)).toContain('console=ttyS0,115200');
  });

  it("an arm64 disk's root has the spec's ARM64 root type and its console is the virt machine's PL011", () => {
    const l = diskLayout('img', 'disk.raw', '4G');
    expect(sfdiskScript(l, 'arm64')).toContain(`type=B921B045-1DF0-41C3-AF44-4C6F280D3FAE, uuid=${l.root.partUuid}, name="root"`);
    expect(kernelCmdline(l, 'arm64')).toMatch(/console=ttyAMA0,115200$/);
  });

  it('derives every identifier from the image and output, the same each time and different per disk', () => {
    const a = diskLayout('img', 'disk.raw', '4G');
    expect(diskLayout('img', 'disk.raw', '8G')).toMatchObject({ diskGuid: a.diskGuid, root: { partUuid: a.root.partUuid } });
    expect(diskLayout('img', 'other.raw', '4G').diskGuid).not.toBe(a.diskGuid);
    for (const u of [a.diskGuid, a.esp.partUuid, a.root.partUuid, a.root.fsUuid]) expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set([a.diskGuid, a.esp.partUuid, a.root.partUuid, a.root.fsUuid]).size).toBe(4);
    expect(a.esp.volumeId).toMatch(/^[0-9a-f]{8}$/);
    expect(derivedUuid('x')).toBe(derivedUuid('x'));
  });

  it("a Packer qemu source can start from the bootable disk (cloudImage's disk), which it requires", () => {
    const withVm = (disk: string) =>
      image('boot-vm')
        .base(debian12({ include: ['systemd', 'kmod'] }))
        .provision((p) => p.use(bootable()))
        .artifact((a) => a.qcow2('disk.qcow2', { bootable: true }).cloudImage('qemu', 'vm', { headless: true }, { disk }))
        .toIR('boot-vm.ts');
    const ir = withVm('disk.qcow2');
    const vm = ir.phases.flatMap((p) => p.steps).find((s) => s.kind === 'cloudImage')!;
    expect(vm).toMatchObject({ disk: 'disk.qcow2', requires: [{ kind: 'artifact', key: 'disk.qcow2' }] });
    expect(checkImage(ir).filter((d) => d.severity === 'error')).toEqual([]);
    expect(checkImage(withVm('other.qcow2')).map((d) => d.code)).toContain('IMGC0001');
  });

  it('refuses a disk too small for the ESP and a root', () => {
    expect(() => diskLayout('img', 'disk.raw', '512M')).toThrow(/leaves no room for the root: give at least 768M/);
  });
});

describe('runtime checks of a booted node', () => {
  const checks = bootChecksOf(node);
  const by = (what: string) => checks.find((c) => c.what === what);

  it('has one per promised runtime fact, each with the step that promised it', () => {
    const containerdStep = node.phases[1]!.steps.find((s) => s.kind === 'service' && s.name === 'containerd')!;
    expect(by("service 'containerd' active")).toMatchObject({ stepId: containerdStep.id, loc: containerdStep.loc });
    expect(by("service 'containerd' active")!.script).toContain('ctr version');
    for (const w of ["kernel module 'overlay' loaded", "kernel module 'br_netfilter' loaded", 'sysctl net.ipv4.ip_forward = 1', 'swap off', "user 'ops'", "group 'admins'", "command 'kubectl version --client' runs", "command 'ctr version' runs"]) {
      expect(by(w), w).toBeDefined();
    }
    expect(by("user 'ops'")!.stepId).toBe('customize.2.user');
  });

  it('drops what a later step removes', () => {
    const removed = image('boot-unit-removed')
      .base(debian12({ include: ['systemd', 'kmod', 'procps'] }))
      .provision((p) => p.use(containerd()).removePackages(['containerd']))
      .toIR('x.ts');
    expect(bootChecksOf(removed).map((c) => c.what)).not.toContain("command 'ctr version' runs");
  });

  it("a node's network and cloud-init are checked on the booted node: an IPv4 address, cloud-init's status", () => {
    const shipped = image('boot-network')
      .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps'] }))
      .provision((p) => p.use(bootable()).use(containerd()).use(network()).use(cloudInit()).use(sysprep()))
      .toIR('boot-network.ts');
    const all = bootChecksOf(shipped);
    const of = (what: string) => all.find((c) => c.what === what)?.script ?? '';
    expect(of("service 'systemd-networkd' active")).toMatch(/ip -4 -o addr show scope global/);
    expect(of("service 'cloud-final' active")).toMatch(/cloud-init status --wait --long/);
    expect(of("service 'imgc-ssh-host-keys' active")).not.toBe('');
  });

  it('the node\'s kernel hook passes shellcheck and writes the loader entry\'s shape', async () => {
    const dir = tempDir('boot-hooks');
    const shipped = image('boot-hooks')
      .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps'] }))
      .provision((p) => p.use(bootable()).use(sysprep()))
      .toIR('boot-hooks.ts');
    const steps = shipped.phases.flatMap((ph) => ph.steps);
    const hook = steps.find((s) => s.kind === 'file' && s.path === '/etc/kernel/postinst.d/zz-imgc-esp') as { content: string } | undefined;
    expect(hook?.content).toMatch(/^#!\/bin\/sh\n/);
    writeFileSync(path.join(dir, 'hook.sh'), hook!.content);
    const r = await execa('shellcheck', ['-s', 'sh', path.join(dir, 'hook.sh')], { reject: false, all: true });
    expect(r.exitCode, r.all).toBe(0);
    // The entry it writes is the shape imgc writes: the same lines, with the values in shell variables.
    expect(hook!.content).toContain('text="title $title\nversion $version\nlinux /imgc/vmlinuz\ninitrd /imgc/initrd.img\noptions $options\n"');
  });

  it('the script the node runs passes shellcheck', async () => {
    const file = path.join(tempDir('boot-script'), 'check.sh');
    writeFileSync(file, bootScript(checks));
    const r = await execa('shellcheck', ['-s', 'sh', file], { reject: false, all: true });
    expect(r.exitCode, r.all).toBe(0);
    for (const c of checks) {
      const r2 = await execa('sh', ['-n', '-c', c.script], { reject: false, all: true });
      expect(r2.exitCode, `${c.what}: ${r2.all}`).toBe(0);
    }
  });
});

describe('SBOM', () => {
  it('lists installed packages with versions from dpkg status, not removed or half-installed ones', () => {
    const status = [
      'Package: zlib1g\nStatus: install ok installed\nArchitecture: amd64\nSource: zlib\nVersion: 1:1.2.13.dfsg-1\n',
      'Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1.0\n',
      'Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.36-9+deb12u4\n',
    ].join('\n');
    expect(installedPackages(status)).toEqual([
      { name: 'libc6', version: '2.36-9+deb12u4', architecture: 'amd64' },
      { name: 'zlib1g', version: '1:1.2.13.dfsg-1', architecture: 'amd64', source: 'zlib' },
    ]);
  });
});

describe('reproducible disks under SOURCE_DATE_EPOCH', () => {
  const epoch = 1_700_000_000;
  /** The same tree, written in a different order (and with a file made and removed) each time. */
  const tree = (dir: string, reverse: boolean): string => {
    const entries: Array<[string, string]> = [];
    for (let d = 0; d < 12; d++) for (let f = 0; f < 40; f++) entries.push([`etc/d${d}`, `f${f}`]);
    if (reverse) entries.reverse();
    for (const [d, f] of entries) {
      mkdirSync(path.join(dir, d), { recursive: true });
      writeFileSync(path.join(dir, d, f), `${d}/${f}\n`.repeat(50 + f.length));
      if (reverse) {
        writeFileSync(path.join(dir, d, `${f}.tmp`), 'x');
        rmSync(path.join(dir, d, `${f}.tmp`));
      }
    }
    mkdirSync(path.join(dir, 'usr/lib/systemd/boot/efi'), { recursive: true });
    writeFileSync(path.join(dir, 'usr/lib/systemd/boot/efi/systemd-bootx64.efi'), 'loader\n');
    writeFileSync(path.join(dir, 'boot-vmlinuz'), 'kernel\n');
    writeFileSync(path.join(dir, 'initrd.img'), 'initramfs\n');
    symlinkSync('boot-vmlinuz', path.join(dir, 'vmlinuz'));
    return dir;
  };

  it('two roots with the same files give byte-identical ext4 images and bootable disks', async () => {
    const dir = tempDir('repro-disk');
    const roots = [tree(path.join(dir, 'a'), false), tree(path.join(dir, 'b'), true)];
    const sums = { ext4: [] as string[], disk: [] as string[] };
    for (const [i, root] of roots.entries()) {
      const ext4 = path.join(dir, `${i}.ext4`);
      await makeExt4(root, ext4, { bytes: 64 * 1024 ** 2, offset: 0, uuid: derivedUuid('t'), run: {}, epoch });
      sums.ext4.push(await fileSha256(ext4));
      const disk = path.join(dir, `${i}.raw`);
      await makeBootableDisk(root, disk, { image: 'repro', output: 'disk.raw', size: '768M', arch: 'amd64', scratch: dir, run: {}, epoch });
      sums.disk.push(await fileSha256(disk));
    }
    expect(sums.ext4[0]).toBe(sums.ext4[1]);
    expect(sums.disk[0]).toBe(sums.disk[1]);
  }, 60_000);
});
