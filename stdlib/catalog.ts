// What installing a package provides, per package-manager family. The checker
// uses it to know that `containerd` brings service 'containerd'; the builder's
// types use the same object (via `typeof`) so editor completion agrees with it.
// Only list what the package really ships: `imgc verify` checks these on disk.
import type { PackageCatalog } from '../src/dsl/types.js';

/** What installing each apt package provides, as the checker and `imgc verify` know it. */
export const aptCatalog = {
  apt: { commands: ['apt-get'], paths: ['/etc/apt', '/etc/apt/sources.list.d', '/etc/apt/keyrings'] },
  'apt-transport-https': {},
  auditd: { services: ['auditd'], commands: ['auditctl'], paths: ['/etc/audit/rules.d'] },
  'ca-certificates': { paths: ['/etc/ssl/certs'] },
  chrony: { services: ['chrony'], commands: ['chronyc'], paths: ['/etc/chrony'] },
  'cloud-guest-utils': { commands: ['growpart'] },
  'cloud-init': {
    services: ['cloud-init-local', 'cloud-init', 'cloud-config', 'cloud-final'],
    commands: ['cloud-init'],
    paths: ['/etc/cloud', '/etc/cloud/cloud.cfg.d'],
  },
  'cloud-initramfs-growroot': {},
  conntrack: { commands: ['conntrack'] },
  containerd: { services: ['containerd'], commands: ['containerd', 'ctr'], paths: ['/etc/containerd'] },
  'containernetworking-plugins': { paths: ['/usr/lib/cni'] },
  'cri-tools': { commands: ['crictl'], repo: 'kubernetes' },
  curl: { commands: ['curl'] },
  ebtables: { commands: ['ebtables'] },
  ethtool: { commands: ['ethtool'] },
  gnupg: { commands: ['gpg'] },
  iproute2: { commands: ['ip'] },
  jq: { commands: ['jq'] },
  iptables: { commands: ['iptables'] },
  'linux-image-amd64': { paths: ['/vmlinuz', '/boot'] },
  'initramfs-tools': { commands: ['update-initramfs'], paths: ['/initrd.img', '/etc/initramfs-tools'] },
  kmod: { commands: ['modprobe'], paths: ['/etc/modules-load.d'] },
  kubeadm: { commands: ['kubeadm'], repo: 'kubernetes' },
  kubectl: { commands: ['kubectl'], repo: 'kubernetes' },
  kubelet: { services: ['kubelet'], commands: ['kubelet'], repo: 'kubernetes' },
  'kubernetes-client': { commands: ['kubectl'] },
  'kubernetes-cni': { paths: ['/opt/cni/bin'], repo: 'kubernetes' },
  libseccomp2: {},
  'openssh-server': { services: ['ssh'], commands: ['sshd'], paths: ['/etc/ssh', '/etc/ssh/sshd_config.d'], users: ['sshd'] },
  procps: { commands: ['sysctl', 'ps'], paths: ['/etc/sysctl.d'] },
  python3: { commands: ['python3'] },
  runc: { commands: ['runc'] },
  socat: { commands: ['socat'] },
  'systemd-boot-efi': { paths: ['/usr/lib/systemd/boot/efi/systemd-bootx64.efi'] },
  sudo: { commands: ['sudo'], paths: ['/etc/sudoers.d'] },
  systemd: {
    services: ['systemd-journald', 'systemd-networkd'],
    commands: ['systemctl', 'journalctl'],
    paths: ['/etc/systemd', '/etc/systemd/system', '/etc/systemd/network'],
    groups: ['systemd-journal'],
  },
  'systemd-sysv': { commands: ['init'] },
  'systemd-timesyncd': { services: ['systemd-timesyncd'] },
} as const satisfies PackageCatalog;

export type AptCatalog = typeof aptCatalog;
