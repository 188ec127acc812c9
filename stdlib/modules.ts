// Kubernetes node modules: what kubernetes-sigs/image-builder's node roles do,
// as imgc modules. Each is `p.use(name(options))` in a phase.
import { defineModule } from '../src/dsl/module.js';
import type { Variable } from '../src/dsl/variables.js';

/** Sysctls a Kubernetes node needs for pod networking. */
export const kubernetesSysctls = {
  'net.ipv4.ip_forward': '1',
  'net.bridge.bridge-nf-call-iptables': '1',
  'net.bridge.bridge-nf-call-ip6tables': '1',
} as const;

/** Kernel modules the container runtime and kube-proxy rely on. */
export const kubernetesKernelModules = ['overlay', 'br_netfilter'] as const;

/** Kernel modules loaded at boot and sysctls for pod networking, in their own files. */
export const kubernetesNetworking = () =>
  defineModule((p) => {
    const withModules = kubernetesKernelModules.reduce((b, m) => b.kernelModule(m, { file: '/etc/modules-load.d/k8s.conf' }), p);
    return Object.entries(kubernetesSysctls).reduce((b, [k, v]) => b.sysctl(k, v, { file: '/etc/sysctl.d/99-kubernetes.conf' }), withModules);
  });

/** containerd configured for kubelet (systemd cgroups, Debian's CNI plugin path), enabled at boot. */
export const containerd = (opts: { sandboxImage?: string } = {}) =>
  defineModule<{ package: 'containerd' | 'runc' | 'containernetworking-plugins'; service: 'containerd'; path: '/etc/containerd/config.toml' }>((p) =>
    p
      .packages(['containerd', 'runc', 'containernetworking-plugins'])
      .file('/etc/containerd/config.toml', {
        mode: '0644',
        content: [
          'version = 2',
          '',
          '[plugins."io.containerd.grpc.v1.cri"]',
          ...(opts.sandboxImage ? [`  sandbox_image = ${JSON.stringify(opts.sandboxImage)}`] : []),
          '',
          '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
          '  runtime_type = "io.containerd.runc.v2"',
          '',
          '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
          '  SystemdCgroup = true',
          '',
          '[plugins."io.containerd.grpc.v1.cri".cni]',
          '  bin_dir = "/usr/lib/cni"',
          '  conf_dir = "/etc/cni/net.d"',
          '',
        ].join('\n'),
      })
      .enableService('containerd'),
  );

export type KubernetesSource =
  /** Debian's own packages: kubectl only (Debian ships no kubelet/kubeadm). */
  | { source: 'debian' }
  /** The upstream apt repository at pkgs.k8s.io for one minor version. */
  | { source: 'upstream'; minor: `${number}.${number}` | Variable<string> };

/** kubelet, kubeadm and kubectl (or kubectl alone from Debian), plus the tools kubeadm preflight wants. */
export const kubernetes = (k8s: KubernetesSource) =>
  defineModule<{ package: 'kubelet' | 'kubeadm' | 'kubectl' | 'kubernetes-client' | 'conntrack' | 'socat'; service: 'kubelet'; command: 'kubectl' }>((p) => {
    const tools = p.packages(['conntrack', 'socat']);
    if (k8s.source === 'debian') return tools.packages(['kubernetes-client']);
    const uri = `https://pkgs.k8s.io/core:/stable:/v${k8s.minor}/deb/`;
    return tools
      .packages(['ca-certificates', 'curl'])
      .aptRepository('kubernetes', { uri, suites: ['/'], keyUrl: `${uri}Release.key` })
      .packages(['kubelet', 'kubeadm', 'kubectl'])
      .enableService('kubelet');
  });

/** sshd without passwords or root logins, as a drop-in. */
export const sshHardening = () =>
  defineModule<{ package: 'openssh-server'; service: 'ssh'; path: '/etc/ssh/sshd_config.d/50-imgc-hardening.conf' }>((p) =>
    p
      .packages(['openssh-server'])
      .file('/etc/ssh/sshd_config.d/50-imgc-hardening.conf', {
        mode: '0644',
        content: ['PermitRootLogin no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'X11Forwarding no', ''].join('\n'),
      })
      .enableService('ssh'),
  );

/** A journald drop-in capping the journal's disk use. */
export const journald = (opts: { systemMaxUse?: string } = {}) =>
  defineModule<{ path: '/etc/systemd/journald.conf.d' | '/etc/systemd/journald.conf.d/50-imgc.conf' }>((p) =>
    p
      .directory('/etc/systemd/journald.conf.d', { mode: '0755' })
      .file('/etc/systemd/journald.conf.d/50-imgc.conf', {
        mode: '0644',
        content: ['[Journal]', `SystemMaxUse=${opts.systemMaxUse ?? '500M'}`, 'Storage=persistent', ''].join('\n'),
      }),
  );

/**
 * What a bootable disk needs in its root: Debian's kernel with an initramfs,
 * systemd-boot's EFI binary (imgc makes the EFI system partition from them;
 * nothing is installed to a boot partition inside the chroot) and an fstab that
 * mounts the root by its label. UEFI only.
 */
export const bootable = () =>
  defineModule<{
    package: 'linux-image-amd64' | 'initramfs-tools' | 'systemd-boot-efi';
    path: '/vmlinuz' | '/initrd.img' | '/usr/lib/systemd/boot/efi/systemd-bootx64.efi' | '/etc/fstab';
  }>((p) =>
    p
      .packages(['initramfs-tools', 'linux-image-amd64', 'systemd-boot-efi'])
      // The root partition's filesystem is labelled `rootfs` by imgc; the kernel finds it by PARTUUID.
      .file('/etc/fstab', { mode: '0644', content: '# <file system> <mount point> <type> <options> <dump> <pass>\nLABEL=rootfs / ext4 defaults,errors=remount-ro 0 1\n' }),
  );
