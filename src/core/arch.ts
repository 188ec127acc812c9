// What differs between the CPU architectures a base may have: the names the
// kernel, the firmware and QEMU give them, and where a bootable disk's
// loader and console are. Debian's names (amd64, arm64) are the keys.

export const arches = ['amd64', 'arm64'] as const;
export type Arch = (typeof arches)[number];

interface ArchInfo {
  /** The suffix of UEFI's removable-media loader and of systemd-boot's binary (BOOTX64.EFI, systemd-bootx64.efi). */
  readonly efi: 'x64' | 'aa64';
  /** The Discoverable Partitions Specification's GPT type of its root partition. */
  readonly gptRoot: string;
  /** The serial console a QEMU guest of it has (q35's 16550, virt's PL011). */
  readonly serial: 'ttyS0' | 'ttyAMA0';
  /** QEMU's system emulator, and the user-mode emulator qemu-user-static registers with binfmt_misc. */
  readonly qemuSystem: 'qemu-system-x86_64' | 'qemu-system-aarch64';
  /** The QEMU machine imgc boots a node of it on: q35 (UEFI with OVMF), virt (UEFI with AAVMF). */
  readonly qemuMachine: 'q35' | 'virt';
  readonly binfmt: 'qemu-x86_64' | 'qemu-aarch64';
  /** The Debian package of the system emulator and the UEFI firmware's code and variables. */
  readonly qemuPackage: 'qemu-system-x86' | 'qemu-system-arm';
  readonly firmwarePackage: 'ovmf' | 'qemu-efi-aarch64';
  readonly firmware: { readonly code: readonly string[]; readonly vars: readonly string[] };
}

export const archInfo: Readonly<Record<Arch, ArchInfo>> = {
  amd64: {
    efi: 'x64',
    gptRoot: '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
    serial: 'ttyS0',
    qemuSystem: 'qemu-system-x86_64',
    qemuMachine: 'q35',
    binfmt: 'qemu-x86_64',
    qemuPackage: 'qemu-system-x86',
    firmwarePackage: 'ovmf',
    firmware: { code: ['/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_CODE_4M.fd'], vars: ['/usr/share/OVMF/OVMF_VARS.fd', '/usr/share/OVMF/OVMF_VARS_4M.fd'] },
  },
  arm64: {
    efi: 'aa64',
    gptRoot: 'B921B045-1DF0-41C3-AF44-4C6F280D3FAE',
    serial: 'ttyAMA0',
    qemuSystem: 'qemu-system-aarch64',
    qemuMachine: 'virt',
    binfmt: 'qemu-aarch64',
    qemuPackage: 'qemu-system-arm',
    firmwarePackage: 'qemu-efi-aarch64',
    firmware: { code: ['/usr/share/AAVMF/AAVMF_CODE.fd'], vars: ['/usr/share/AAVMF/AAVMF_VARS.fd'] },
  },
};

/** A base's architecture: absent in the IR means amd64. */
export const archOf = (base: { readonly arch?: Arch | undefined }): Arch => base.arch ?? 'amd64';
