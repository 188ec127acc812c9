// What a bootable disk takes from its root: imgc makes the EFI system
// partition from these files (systemd-boot as the removable-media loader, the
// kernel and initramfs the root's kernel package installed), so a bootable
// artifact requires them as facts and the checker proves a step provides them.
export const bootFiles = {
  kernel: '/vmlinuz',
  initrd: '/initrd.img',
  loader: '/usr/lib/systemd/boot/efi/systemd-bootx64.efi',
} as const;
