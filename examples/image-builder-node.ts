// kubernetes-sigs/image-builder's Kubernetes node (its Ubuntu/Debian QEMU
// path: roles setup, node, providers, containerd, kubernetes, sysprep), said
// as imgc steps and stdlib modules on Debian 12. docs/image-builder.md maps
// each role to what says it here. `npx imgc check examples/image-builder-node.ts`
import {
  cloudInit,
  containerdConfig,
  containerdDropIns,
  crictl,
  debian12,
  image,
  kubernetes,
  kubernetesNetworking,
  variable,
  z,
} from 'imgc';

const k8sMinor = variable('k8s_minor', z.string().regex(/^\d+\.\d+$/), { default: '1.31', description: 'Kubernetes minor version (pkgs.k8s.io repository)' });
const imageBuilderVersion = variable('image_builder_version', z.string(), { default: 'imgc', description: 'written to /etc/image-builder-release' });

/** image-builder's `common_debs`, as Debian 12 names them; conntrack, curl and socat come with kubernetes(). */
const commonDebs = [
  'auditd',
  'apt-transport-https',
  'chrony',
  'ebtables',
  'jq',
  'gnupg',
  'libnetfilter-acct1',
  'libnetfilter-cttimeout1',
  'libnetfilter-log1',
  'python3-netifaces',
  'python3-pip',
] as const;

const chronyDispatcher = (state: 'routable' | 'off' | 'no-carrier') =>
  [
    '#!/bin/sh',
    '# Tell chronyd whether the network is up, so it switches its sources online or offline.',
    'export LC_ALL=C',
    ...(state === 'routable' ? ['chronyc onoffline >/dev/null 2>&1 || :'] : ['chronyc onoffline >/dev/null 2>&1 || :']),
    'exit 0',
    '',
  ].join('\n');

export default image('image-builder-node')
  .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables', 'ca-certificates'] }))
  // role setup: the baseline packages.
  .customize((p) =>
    p
      .packages(commonDebs)
      .packages(['libseccomp2'])
      // Not in the catalog: the install says what it brings, for the checker and the types.
      .packages(['udev'], { provides: { path: ['/etc/udev', '/etc/udev/rules.d'], service: ['systemd-udevd'], command: ['udevadm'] } }),
  )
  .provision((p) =>
    p
      // role node
      .use(kubernetesNetworking({ tuning: true }))
      .swapOff()
      .enableService('auditd')
      .file('/etc/audit/rules.d/containerd.rules', {
        owner: 'root',
        group: 'root',
        mode: '0644',
        content: ['-w /var/lib/containerd/ -p rwxa -k containerd', '-w /etc/containerd/ -p rwxa -k containerd', '-w /etc/systemd/system/containerd.service.d/ -p rwxa -k containerd', '-w /run/containerd/ -p rwxa -k containerd', ''].join('\n'),
      })
      .file('/etc/udev/rules.d/90-etcd-tuning.rules', {
        mode: '0644',
        content: 'ACTION=="add", SUBSYSTEM=="net", SUBSYSTEMS=="pci|xen|vmbus" RUN+="/usr/local/bin/etcd-network-tuning.sh $name"\n',
      })
      .file('/usr/local/bin/etcd-network-tuning.sh', {
        mode: '0755',
        content: [
          '#!/bin/sh',
          '# Puts etcd peer (2380) and client (2379) traffic in the highest-priority band of the interface.',
          'set -eu',
          'dev=$1',
          'tc qdisc add dev "$dev" root handle 1: prio bands 3',
          'for port in 2380 2379; do',
          '  tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 match ip sport "$port" 0xffff flowid 1:1',
          '  tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 match ip dport "$port" 0xffff flowid 1:1',
          'done',
          '',
        ].join('\n'),
      })
      .file('/etc/image-builder-release', { mode: '0644', content: `IMAGE_BUILDER_VERSION=${imageBuilderVersion}\nKUBERNETES_VERSION=v${k8sMinor}\n` })
      // role providers, qemu
      .use(cloudInit())
      .directory('/var/lib/dhcp', { mode: '0755' })
      .directory('/etc/networkd-dispatcher', { mode: '0755' })
      .directory('/etc/networkd-dispatcher/routable.d', { mode: '0755' })
      .file('/etc/networkd-dispatcher/routable.d/20-chrony', { mode: '0755', content: chronyDispatcher('routable') })
      .directory('/etc/networkd-dispatcher/off.d', { mode: '0755' })
      .file('/etc/networkd-dispatcher/off.d/20-chrony', { mode: '0755', content: chronyDispatcher('off') })
      .directory('/etc/networkd-dispatcher/no-carrier.d', { mode: '0755' })
      .file('/etc/networkd-dispatcher/no-carrier.d/20-chrony', { mode: '0755', content: chronyDispatcher('no-carrier') })
      .enableService('chrony')
      // role containerd (Debian's containerd 1.6: config version 2)
      .packages(['containerd', 'runc'])
      .directory('/etc/containerd/conf.d', { mode: '0755' })
      .directory('/etc/containerd/certs.d', { mode: '0755' })
      .file('/etc/containerd/config.toml', { mode: '0644', content: containerdConfig({ version: 2, sandboxImage: 'registry.k8s.io/pause:3.10', registryDirs: true }) })
      .directory('/etc/systemd/system/containerd.service.d', { mode: '0755' })
      .file('/etc/systemd/system/containerd.service.d/memory-pressure.conf', { mode: '0644', content: containerdDropIns['memory-pressure.conf'] })
      .file('/etc/systemd/system/containerd.service.d/max-tasks.conf', { mode: '0644', content: containerdDropIns['max-tasks.conf'] })
      .use(crictl())
      .enableService('containerd')
      // role kubernetes
      .use(kubernetes({ source: 'upstream', minor: k8sMinor, version: '1.31.4-1.1' }))
      .directory('/usr/libexec/kubernetes', { owner: 'root', group: 'root', mode: '0755' })
      .directory('/etc/profile.d', { mode: '0755' })
      .file('/etc/profile.d/kubernetes.sh', {
        owner: 'root',
        group: 'root',
        mode: '0644',
        content: [
          '# kubectl for interactive shells: the admin kubeconfig when the node has one, and `k`.',
          'if [ -n "${BASH_VERSION-}" ] && [ -n "${PS1-}" ]; then',
          '  for conf in /etc/kubernetes/super-admin.conf /etc/kubernetes/admin.conf; do',
          '    if [ -r "$conf" ]; then export KUBECONFIG="$conf"; break; fi',
          '  done',
          '  alias k=kubectl',
          'fi',
          '',
        ].join('\n'),
      }),
  )
  // role sysprep: what makes one built root a template for many nodes.
  .phase('sysprep', (p) =>
    p
      .disableService('apt-daily.timer')
      .disableService('apt-daily-upgrade.timer')
      .file('/etc/hosts', { owner: 'root', group: 'root', mode: '0644', content: '127.0.0.1 localhost localhost.local\n::1 localhost ip6-localhost ip6-loopback\n' })
      .directory('/etc/default/grub.d', { mode: '0755' })
      .file('/etc/default/grub.d/50-cloudimg-settings.cfg', {
        owner: 'root',
        group: 'root',
        mode: '0644',
        content: 'GRUB_RECORDFAIL_TIMEOUT=0\nGRUB_TIMEOUT=0\nGRUB_CMDLINE_LINUX_DEFAULT="console=tty1 console=ttyS0"\nGRUB_TERMINAL=console\n',
      }),
  )
  .artifact((a) => a.tar('rootfs.tar.zst').qcow2('disk.qcow2', { size: '8G' }).cloudImage('qemu', 'qemu', { disk_size: '20G', format: 'qcow2', headless: true }))
  .verify((v) => v.facts().checksums().manifest());
