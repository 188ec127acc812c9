// The reference example, a Kubernetes node on Debian 12, as a matrix (docs/variants.md): `npx imgc check examples/node-image.ts`
// proves every combination's contracts; `npx imgc compile examples/node-image.ts --target packer|ansible|shell` emits one.
import {
  containerd,
  debian12,
  event,
  image,
  journald,
  kubernetes,
  kubernetesNetworking,
  sshHardening,
  type Arch, type KubernetesSource,
  bootable, cloudInit, defineModule, network, sysprep, variable, variants, z,
} from 'imgc';

/** The node, parameterised by where kubelet/kubeadm/kubectl come from, its disk size and its architecture. */
export const nodeImage = (name: string, k8s: KubernetesSource, diskSize: `${number}G` = '4G', arch: Arch = 'amd64') =>
  image(name)
    .base(debian12({ arch, include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] }))
    .customize((p) =>
      p
        .pre(event('stdout'))
        .group('admins')
        .user('ops', { groups: ['admins', 'sudo'], shell: '/bin/bash' })
        .directory('/home/ops/.ssh', { owner: 'ops', group: 'ops', mode: '0700' })
        .file('/home/ops/.ssh/authorized_keys', {
          owner: 'ops',
          group: 'ops',
          mode: '0600',
          content: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDt3Yq0rYkq3c9JjvYd6Q9Hw1nY0s0mJ8m0u7nU5k0Zx ops@example\n',
        })
        .file('/etc/sudoers.d/admins', { mode: '0440', content: '%admins ALL=(ALL:ALL) NOPASSWD: ALL\n' })
        .use(sshHardening())
        .use(journald({ systemMaxUse: '1G' }))
        .post(event('stdout')),
    )
    .provision((p) =>
      p
        .pre(event('stdout'))
        .use(kubernetesNetworking())
        .swapOff()
        .use(containerd())
        .use(kubernetes(k8s))
        .directory('/etc/cni', { mode: '0755' })
        .directory('/etc/cni/net.d', { mode: '0755' }).use(joinToken(k8s))
        // DHCP on the NIC; cloud-init (NoCloud seed, cloud metadata) gives each clone its hostname, keys
        // and join configuration and grows the root to its disk. Before bootable(): the kernel's initramfs
        // is then made once, with cloud-init's growroot hook in it. sysprep leaves no machine identity behind.
        .use(network())
        .use(cloudInit())
        .use(bootable({ arch }))
        .use(sysprep())
        .post(event('stdout')),
    )
    .artifact((a) =>
      a
        .dir('rootfs')
        .tar('rootfs.tar.zst')
        .raw('disk.raw', { size: diskSize, bootable: true })
        .qcow2('disk.qcow2', { size: diskSize, bootable: true })
        // Packer-only targets: a VM image built with QEMU and an AMI.
        .cloudImage('qemu', 'qemu', { disk_size: '8G', format: 'qcow2', headless: true })
        .cloudImage('amazon-ebs', 'aws', { region: 'eu-west-1', instance_type: arch === 'arm64' ? 't4g.large' : 't3.large', ami_name: name }),
    )
    .verify((v) => v.facts().boot().checksums().manifest());

/**
 * A variable (imgc.toml's [vars], IMGC_VAR_<NAME> or --var), and a sensitive one: never in the IR or an output;
 * the build takes it at run time (IMGC_VAR_JOIN_TOKEN, -e, -var).
 */
const bootstrapToken = variable('join_token', z.string().regex(/^[a-z0-9]{6}\.[a-z0-9]{16}$/), {
  sensitive: true,
  description: 'kubeadm bootstrap token (abcdef.0123456789abcdef) the node joins its cluster with',
});

/** The bootstrap token for `kubeadm join`, on nodes with the upstream packages (kubeadm) only. */
const joinToken = (k8s: KubernetesSource) =>
  defineModule<{ path: '/etc/kubernetes' | '/etc/kubernetes/bootstrap-token' }>((p) =>
    k8s.source === 'upstream'
      ? p
          .directory('/etc/kubernetes', { mode: '0755' })
          .file('/etc/kubernetes/bootstrap-token', { mode: '0600', content: `${bootstrapToken}\n` })
      : p,
  );

/**
 * One image per combination, named from its values. Debian's packages have one version per release, so the
 * older minor has no Debian combination. Without --variant, a command takes the newest upstream amd64 node.
 */
export default variants(
  { k8s: ['1.30', '1.31'], source: ['upstream', 'debian'], arch: ['amd64', 'arm64'] },
  (v) => nodeImage(`k8s-node-${v.k8s}-${v.source}-${v.arch}`, v.source === 'upstream' ? { source: 'upstream', minor: v.k8s } : { source: 'debian' }, '4G', v.arch),
  { exclude: [{ k8s: '1.30', source: 'debian' }], default: { k8s: '1.31', source: 'upstream', arch: 'amd64' } },
);
