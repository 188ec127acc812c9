// A Kubernetes node image on Debian 12: the reference example.
// `npx imgc check examples/node-image.ts` proves its phase contracts;
// `npx imgc compile examples/node-image.ts --target packer|ansible|shell` emits it.
import {
  containerd,
  debian12,
  event,
  image,
  journald,
  kubernetes,
  kubernetesNetworking,
  sshHardening,
  type KubernetesSource,
} from 'imgc';

/** The node, parameterised by where kubelet/kubeadm/kubectl come from. */
export const nodeImage = (name: string, k8s: KubernetesSource) =>
  image(name)
    .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] }))
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
        .directory('/etc/cni/net.d', { mode: '0755' })
        .post(event('stdout')),
    )
    .artifact((a) =>
      a
        .dir('rootfs')
        .tar('rootfs.tar.zst')
        .raw('disk.raw', { size: '4G' })
        .qcow2('disk.qcow2', { size: '4G' })
        // Packer-only targets: a VM image built with QEMU and an AMI.
        .cloudImage('qemu', 'qemu', { disk_size: '8G', format: 'qcow2', headless: true })
        .cloudImage('amazon-ebs', 'aws', { region: 'eu-west-1', instance_type: 't3.large', ami_name: 'k8s-node-debian-12' }),
    )
    .verify((v) => v.facts().checksums().manifest());

export default nodeImage('k8s-node', { source: 'upstream', minor: '1.30' });
