// The system tools a build runs, and the Debian package of each: the build's
// preflight refuses to start without them, and `imgc build --plan` lists them
// with whether each is present.
import type { Image } from '../ir/schema.js';
import { isBuildArtifact } from '../ir/phases.js';
import { bootTools } from './boot-step.js';
import { emulatorCommand, isForeign } from '../host/binfmt.js';
import { archOf } from '../core/arch.js';

/** A command whose package is named otherwise (the rest are their own package). */
export const toolPackages: Readonly<Record<string, string>> = {
  chroot: 'coreutils',
  cp: 'coreutils',
  truncate: 'coreutils',
  timeout: 'coreutils',
  flock: 'util-linux',
  umount: 'mount',
  'mkfs.ext4': 'e2fsprogs',
  debugfs: 'e2fsprogs',
  'mkfs.fat': 'dosfstools',
  mmd: 'mtools',
  mcopy: 'mtools',
  sfdisk: 'fdisk',
  'qemu-img': 'qemu-utils',
  'qemu-system-x86_64': 'qemu-system-x86',
  'qemu-system-aarch64': 'qemu-system-arm',
  'qemu-aarch64-static': 'qemu-user-static',
  'qemu-x86_64-static': 'qemu-user-static',
  'ansible-playbook': 'ansible',
};

export const debianPackage = (command: string): string => toolPackages[command] ?? command;

/** The commands a build of `ir` with `target` runs on this machine (debootstrap when the base is laid down fresh). */
export const requiredTools = (ir: Image, target: string, opts: { debootstrap?: boolean } = {}): string[] => {
  const artifacts = ir.phases.flatMap((p) => p.steps).filter(isBuildArtifact);
  return [
    ...new Set([
      ...(opts.debootstrap ? ['debootstrap'] : []),
      // Another architecture's root runs its binaries (debootstrap's second stage, every phase) through this emulator.
      ...(isForeign(archOf(ir.base)) ? [emulatorCommand(archOf(ir.base))] : []),
      'chroot',
      'flock',
      'mount',
      'umount',
      'tar',
      'zstd',
      'cp',
      ...(artifacts.some((a) => a.format === 'ext4' || a.format === 'raw' || a.format === 'qcow2') ? ['mkfs.ext4'] : []),
      ...bootTools(ir),
      ...(artifacts.some((a) => a.format === 'qcow2') ? ['qemu-img'] : []),
      ...(artifacts.some((a) => a.format === 'tar' && a.compression === 'gzip') ? ['gzip'] : []),
      ...(target === 'ansible' ? ['ansible-playbook'] : []),
    ]),
  ];
};

/** What the build says when `missing` tools are not installed, with the packages to install. */
export const missingToolsMessage = (missing: readonly string[]): string =>
  `missing tools on this machine: ${missing.join(', ')} (apt-get install ${[...new Set(missing.map(debianPackage))].join(' ')})`;
