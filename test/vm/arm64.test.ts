// An arm64 node built and booted on this (amd64) machine (issue 38): the base
// debootstrapped in two stages, the second through qemu-user-static; the
// phases run in the arm64 chroot the same way; the bootable disk carries
// systemd-boot's aa64 loader and Debian's arm64 kernel; `v.boot()` boots it
// under qemu-system-aarch64 (virt, TCG, AAVMF) and checks the promised facts
// on the running node. Slow under emulation: opt-in with the VM tests.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { cannotBuild, imgcRun, outDir, summaryOf } from '../build/helpers.js';
import { vmOptIn } from './packer-support.js';
import { archInfo } from '../../src/core/arch.js';

const fixture = 'test/vm/fixtures/arm64-node.ts';
const arm = archInfo.arm64;

const cannotBootArm64: string | undefined =
  cannotBuild ??
  (!existsSync(`/usr/bin/${arm.qemuSystem}`) || !arm.firmware.code.every(existsSync)
    ? `${arm.qemuPackage} and ${arm.firmwarePackage} are not installed`
    : !existsSync('/usr/lib/binfmt.d/qemu-aarch64.conf')
      ? 'qemu-user-static is not installed'
      : vmOptIn);
if (cannotBootArm64) console.warn(`arm64 VM test skipped: ${cannotBootArm64}`);

describe.skipIf(cannotBootArm64)('an arm64 node', () => {
  let out: string;
  let took: number;
  beforeAll(async () => {
    out = outDir('vm-arm64');
    const started = Date.now();
    const b = await imgcRun(['build', fixture, '--no-typecheck', '--out', out]);
    took = Date.now() - started;
    if (b.exitCode !== 0) throw new Error(`the build failed:\n${b.all}`);
    console.log(`arm64 build (base, phases, disk, boot) in ${(took / 1000).toFixed(0)}s`);
  }, 5_400_000);

  it("is an arm64 disk: the spec's ARM64 root partition type, and systemd-boot's aa64 binary as the removable-media loader", async () => {
    const disk = path.join(out, 'disk.raw');
    const table = JSON.parse((await execa('sfdisk', ['--json', disk])).stdout) as { partitiontable: { partitions: { start: number; type: string }[] } };
    const [esp, root] = table.partitiontable.partitions;
    expect(root?.type.toUpperCase()).toBe(arm.gptRoot);
    const listing = (await execa('mdir', ['-b', '-i', `${disk}@@${esp!.start * 512}`, '::/EFI/BOOT'], { env: { MTOOLS_SKIP_CHECK: '1' } })).stdout;
    expect(listing).toMatch(/BOOTAA64\.EFI/);
  });

  it('booted under qemu-system-aarch64 and every promised fact held on the running node', () => {
    const s = summaryOf(out);
    expect(s.boot, JSON.stringify(s.boot)).toMatchObject({ failed: 0 });
    expect(s.boot?.checked).toBeGreaterThanOrEqual(8);
    const log = readFileSync(path.join(out, 'logs', 'boot-console.log'), 'latin1');
    // Debian's arm64 kernel, booted by its EFI stub from systemd-boot, its console the virt machine's PL011.
    expect(log).toMatch(/Linux version \S+-arm64 /);
    expect(log).toContain('EFI stub: Booting Linux Kernel');
    expect(log).toMatch(/console \[ttyAMA0\] enabled/);
  });
});
