// What a bootable disk takes from its root: imgc makes the EFI system
// partition from these files (systemd-boot as the removable-media loader, the
// kernel and initramfs the root's kernel package installed), so a bootable
// artifact requires them as facts and the checker proves a step provides them.
import { archInfo, type Arch } from './arch.js';

export const bootFiles = (arch: Arch) =>
  ({
    kernel: '/vmlinuz',
    initrd: '/initrd.img',
    loader: `/usr/lib/systemd/boot/efi/systemd-boot${archInfo[arch].efi}.efi`,
  }) as const;

/** Where imgc's ESP holds the kernel and initramfs it boots, and its loader entry (paths on the ESP). */
export const espFiles = {
  kernel: '/imgc/vmlinuz',
  initrd: '/imgc/initrd.img',
  entry: '/loader/entries/imgc.conf',
} as const;

/** The ESP's label (the FAT volume label imgc gives it): the running system mounts it by this. */
export const ESP_LABEL = 'ESP';

/** Where the running system mounts the ESP. */
export const ESP_MOUNT = '/boot/efi';

/**
 * systemd-boot's loader entry for the ESP's kernel and initramfs: written by
 * imgc when it makes the disk, and again by the node's kernel hook (with
 * shell variables for the values) when a kernel is installed there.
 */
export const loaderEntry = (e: { title: string; version: string; options: string }): string =>
  `title ${e.title}\nversion ${e.version}\nlinux ${espFiles.kernel}\ninitrd ${espFiles.initrd}\noptions ${e.options}\n`;
