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

  it('is an arm64 root: its binaries and dpkg say aarch64/arm64', async () => {
    const root = path.join(out, 'rootfs');
    const file = (await execa('file', ['-L', path.join(root, 'usr/bin/bash')], { reject: false })).stdout;
    if (file) expect(file).toMatch(/ARM aarch64/);
    expect(readFileSync(path.join(root, 'var/lib/dpkg/arch'), 'utf8').trim().split('\n')[0] ?? 'arm64').toBe('arm64');
  });

  it('booted under qemu-system-aarch64 and every promised fact held on the running node', () => {
    const s = summaryOf(out);
    expect(s.boot, JSON.stringify(s.boot)).toMatchObject({ failed: 0 });
    expect(s.boot?.checked).toBeGreaterThanOrEqual(8);
    const console = readFileSync(path.join(out, 'logs', 'boot-console.log'), 'utf8');
    expect(console).toMatch(/Linux version .*aarch64|Linux version .*arm64/);
    expect(console).toMatch(/Booting `?arm64-node|systemd-boot/i);
  });
});
