// What installing a package provides, per base. Debian 12's is generated from
// its archive (./archive/debian-12.ts, `npm run gen:packages`) for the
// packages the builder's types know, with the few facts below that the
// archive cannot say; every other Debian package the checker reads from the
// archive itself. The Ubuntu bases' catalog stays hand-listed until an Ubuntu
// mirror is reachable here to generate one from. The builder's types read
// these objects through `typeof`, so editor completion agrees with the checker.
// Only list what the package really ships: `imgc verify` checks these on disk.
import type { PackageCatalog } from '../src/dsl/types.js';
import { debian12Typed } from './archive/debian-12.js';

/** What the archive's indexes cannot say, each with its reason, on every architecture. */
const debian12ListedCommon = {
  // From the Kubernetes project's own apt repository (pkgs.k8s.io), not Debian's archive.
  'cri-tools': { commands: ['crictl'], repo: 'kubernetes' },
  kubeadm: { commands: ['kubeadm'], repo: 'kubernetes' },
  kubectl: { commands: ['kubectl'], repo: 'kubernetes' },
  kubelet: { services: ['kubelet'], commands: ['kubelet'], repo: 'kubernetes' },
  'kubernetes-cni': { paths: ['/opt/cni/bin'], repo: 'kubernetes' },
  // Outside /etc and /opt, the trees the generated data covers: what the boot and CNI steps rely on.
  'initramfs-tools': { paths: ['/initrd.img'] },
  'containernetworking-plugins': { paths: ['/usr/lib/cni'] },
} as const satisfies PackageCatalog;

/** What the archive's indexes cannot say, each with its reason, and amd64's kernel and systemd-boot loader (what bootable disks rely on: src/core/boot.ts's bootFiles). */
export const debian12Listed = {
  ...debian12ListedCommon,
  'linux-image-amd64': { paths: ['/vmlinuz', '/boot'] },
  'systemd-boot-efi': { paths: ['/usr/lib/systemd/boot/efi/systemd-bootx64.efi'] },
} as const satisfies PackageCatalog;
/** The same for an arm64 base: its kernel and loader. */
export const debian12ListedArm64 = {
  ...debian12ListedCommon,
  'linux-image-arm64': { paths: ['/vmlinuz', '/boot'] },
  'systemd-boot-efi': { paths: ['/usr/lib/systemd/boot/efi/systemd-bootaa64.efi'] },
} as const satisfies PackageCatalog;

type Field = 'services' | 'commands' | 'paths' | 'users' | 'groups';
type Of<E, F extends Field> = E extends { readonly [K in F]: readonly (infer S)[] } ? S : never;
/** One package's generated and listed facts together. */
type Both<G, L> = { readonly [F in Field]: readonly (Of<G, F> | Of<L, F>)[] } & (L extends { readonly repo: infer R } ? { readonly repo: R } : unknown);
type Merged<Generated, Listed> = { readonly [P in keyof Generated | keyof Listed]: Both<P extends keyof Generated ? Generated[P] : unknown, P extends keyof Listed ? Listed[P] : unknown> };

const merge = (generated: PackageCatalog, listed: PackageCatalog): PackageCatalog =>
  Object.fromEntries(
    [...new Set([...Object.keys(generated), ...Object.keys(listed)])].sort().map((name) => {
      const g = generated[name] ?? {};
      const l = listed[name] ?? {};
      const fields = (['services', 'commands', 'paths', 'users', 'groups'] as const).map((f) => [f, [...new Set([...(g[f] ?? []), ...(l[f] ?? [])])]] as const);
      return [name, { ...Object.fromEntries(fields.filter(([, v]) => v.length)), ...(l.repo ? { repo: l.repo } : {}) }];
    }),
  );

/** What installing each Debian 12 package the builder's types know provides; the checker knows every other archive package too (`debian12Archive`). */
export const aptCatalog = merge(debian12Typed, debian12Listed) as Merged<typeof debian12Typed, typeof debian12Listed>;
export type AptCatalog = typeof aptCatalog;

// amd64's install facts serve arm64 (/etc, /opt, commands and services are the same: docs/packages.md), without amd64's kernel.
const { 'linux-image-amd64': _amd64Kernel, ...debian12TypedAnyArch } = debian12Typed;
/** What installing each typed Debian 12 package provides on an arm64 base: amd64's install facts, its own kernel and loader; the checker knows every other arm64 package (`debian12Arm64Archive`). */
export const aptCatalogArm64 = merge(debian12TypedAnyArch, debian12ListedArm64) as Merged<typeof debian12TypedAnyArch, typeof debian12ListedArm64>;
export type AptCatalogArm64 = typeof aptCatalogArm64;

/** What installing each apt package provides on the Ubuntu bases, listed by hand (no Ubuntu mirror is reachable here to read one from). */
export const ubuntuCatalog = {
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
export type UbuntuCatalog = typeof ubuntuCatalog;
