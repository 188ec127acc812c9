// kubernetes-sigs/image-builder's Kubernetes node (its Ubuntu/Debian QEMU
// path: roles setup, node, providers, containerd, kubernetes, sysprep), said
// as imgc steps and stdlib modules on Debian 12. docs/image-builder.md maps
// each role to what says it here. `npx imgc check examples/image-builder-node.ts`
import { cloudInit, containerd, crictl, debian12, image, kubernetes, kubernetesCni, kubernetesNetworking, network, sysprep, variable, z } from 'imgc';

// What image-builder fetches, one variable per URL and sha256. The defaults
// are image-builder's default versions (packer/config: containerd 2.3.2,
// runc 1.4.3, crictl 1.36.0, Kubernetes v1.36.1, CNI plugins v1.2.0) at their
// upstream URLs for amd64, with the upstream sums as kubespray's
// checksums.yml lists them (this machine cannot fetch the .sha256 files).
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const url = z.string().url();
const containerdUrl = variable('containerd_url', url, { default: 'https://github.com/containerd/containerd/releases/download/v2.3.2/containerd-2.3.2-linux-amd64.tar.gz', description: 'the containerd release tarball' });
const containerdSha256 = variable('containerd_sha256', sha256, { default: '75625e6f6595bb95f3fb9c8123a60534af4a8d9b52d7617065967bcefe71a17a' });
const runcUrl = variable('runc_url', url, { default: 'https://github.com/opencontainers/runc/releases/download/v1.4.3/runc.amd64', description: 'the runc binary' });
const runcSha256 = variable('runc_sha256', sha256, { default: 'f6ae8efc0fa40079e1475e97cbe9d1bd3f106a28d6af78a11d9f1bd565515e60' });
const k8sVersion = variable('kubernetes_version', z.string().regex(/^\d+\.\d+\.\d+$/), { default: '1.36.1', description: 'Kubernetes release (kubeadm, kubelet, kubectl)' });
const k8sHttpSource = variable('kubernetes_http_source', url, { default: 'https://dl.k8s.io/release', description: 'where the Kubernetes release binaries are (BASE/vVERSION/bin/linux/amd64/NAME)' });
const kubeadmSha256 = variable('kubeadm_sha256', sha256, { default: 'f35980333a4dae753807345ae359eca03f48f9945855e6a6a6708fe8b3b24038' });
const kubeletSha256 = variable('kubelet_sha256', sha256, { default: '7efa1780c73d9fb3a464002864e582eb2d15aa691e475eaae323093d08feae14' });
const kubectlSha256 = variable('kubectl_sha256', sha256, { default: '629d3f410e09bf49b64ae7079f7f0bda1191efed311f7d37fdbab0ad5b0ec2b7' });
const cniUrl = variable('cni_url', url, { default: 'https://github.com/containernetworking/plugins/releases/download/v1.2.0/cni-plugins-linux-amd64-v1.2.0.tgz', description: 'the CNI plugins tarball' });
const cniSha256 = variable('cni_sha256', sha256, { default: 'f3a841324845ca6bf0d4091b4fc7f97e18a623172158b72fc3fdcdb9d42d2d37' });
const crictlUrl = variable('crictl_url', url, { default: 'https://github.com/kubernetes-sigs/cri-tools/releases/download/v1.36.0/crictl-v1.36.0-linux-amd64.tar.gz', description: 'the crictl tarball' });
const crictlSha256 = variable('crictl_sha256', sha256, { default: '83855e114566a8a8c44c548d515670f51de3a5e1da8b2effb59870e2f10c25a3' });
const imageBuilderVersion = variable('image_builder_version', z.string(), { default: 'imgc', description: 'written to /etc/image-builder-release' });
const aptProxy = variable('apt_proxy', z.string(), { default: '', description: "an HTTP proxy for apt while the image is built ('' for none), as image-builder's http_proxy" });
const extraDebs = variable('extra_debs', z.array(z.string()), { default: [], description: "image-builder's extra_debs: more packages to install, as a list or a string of words" });

/** image-builder's `common_debs`, as Debian 12 names them; conntrack and socat come with kubernetes(), libseccomp2 with containerd(). */
const commonDebs = [
  'auditd',
  'apt-transport-https',
  'ca-certificates',
  'chrony',
  'curl',
  'ebtables',
  'jq',
  'gnupg',
  'libnetfilter-acct1',
  'libnetfilter-cttimeout1',
  'libnetfilter-log1',
  'python3-netifaces',
  'python3-pip',
] as const;

/** One script for every networkd-dispatcher state: `chronyc onoffline` reads the routes itself. */
const chronyDispatcher = ['#!/bin/sh', '# Tell chronyd whether the network is up, so it switches its sources online or offline.', 'export LC_ALL=C', 'chronyc onoffline >/dev/null 2>&1 || :', 'exit 0', ''].join('\n');

export default image('image-builder-node')
  .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] }))
  // role setup: the baseline packages.
  .customize((p) =>
    p
      // role node, first: apt's timers and unattended upgrades never run on the node by themselves.
      .maskService('apt-daily.timer')
      .maskService('apt-daily-upgrade.timer')
      .maskService('apt-daily.service')
      .maskService('apt-daily-upgrade.service')
      .maskService('unattended-upgrades')
      // role setup: apt through a proxy when one is given (sysprep removes the file again).
      .when(aptProxy.isNot(''), (p) => p.file('/etc/apt/apt.conf.d/90proxy', { mode: '0644', content: `Acquire::http::Proxy "${aptProxy}";\n` }))
      .upgrade({ dist: true }) // role setup: a dist-upgrade before the installs
      .packages(commonDebs)
      .packages(extraDebs) // role setup: the packages a site adds (extra_debs)
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
      .file('/etc/image-builder-release', { mode: '0644', content: `IMAGE_BUILDER_VERSION=${imageBuilderVersion}\nKUBERNETES_VERSION=v${k8sVersion}\n` })
      // role providers, qemu
      .use(network())
      .use(cloudInit())
      .file('/etc/cloud/cloud.cfg.d/05_logging.cfg', {
        owner: 'root',
        group: 'root',
        mode: '0644',
        content: '# cloud-init logs to its files and, from warnings up, to the console.\noutput: { all: "| tee -a /var/log/cloud-init-output.log" }\n',
      })
      .directory('/var/lib/dhcp', { mode: '0755' })
      .directory('/etc/networkd-dispatcher', { mode: '0755' })
      .directory('/etc/networkd-dispatcher/routable.d', { mode: '0755' })
      .file('/etc/networkd-dispatcher/routable.d/20-chrony', { mode: '0755', content: chronyDispatcher })
      .directory('/etc/networkd-dispatcher/off.d', { mode: '0755' })
      .file('/etc/networkd-dispatcher/off.d/20-chrony', { mode: '0755', content: chronyDispatcher })
      .directory('/etc/networkd-dispatcher/no-carrier.d', { mode: '0755' })
      .file('/etc/networkd-dispatcher/no-carrier.d/20-chrony', { mode: '0755', content: chronyDispatcher })
      .enableService('chrony')
      // role containerd: the upstream release (containerd 2.x, config version 3), runc, containerd's unit and drop-ins.
      .use(containerd({ source: 'release', url: containerdUrl, sha256: containerdSha256, runc: { url: runcUrl, sha256: runcSha256 }, sandboxImage: 'registry.k8s.io/pause:3.10' }))
      .use(crictl({ url: crictlUrl, sha256: crictlSha256 }))
      // image-builder links the CRI tools into /usr/bin too.
      .symlink('/usr/bin/ctr', '/usr/local/bin/ctr')
      .symlink('/usr/bin/crictl', '/usr/local/bin/crictl')
      // role kubernetes: its http source (release binaries by sha256) and the CNI plugins' tarball.
      .use(kubernetesCni({ url: cniUrl, sha256: cniSha256 }))
      .use(kubernetes({ source: 'release', baseUrl: k8sHttpSource, version: k8sVersion, sha256: { kubeadm: kubeadmSha256, kubelet: kubeletSha256, kubectl: kubectlSha256 } }))
      .directory('/etc/kubernetes', { mode: '0755' })
      .directory('/etc/kubernetes/manifests', { mode: '0755' })
      .directory('/usr/libexec/kubernetes', { owner: 'root', group: 'root', mode: '0755' })
      .directory('/usr/share/bash-completion', { mode: '0755' })
      .directory('/usr/share/bash-completion/completions', { mode: '0755' })
      // Raw: a completion script is what the installed binary prints; no step kind writes a command's output to a file.
      .command('kubectl completion bash >/usr/share/bash-completion/completions/kubectl', {
        creates: '/usr/share/bash-completion/completions/kubectl',
        requires: { command: ['kubectl'] },
        provides: { path: ['/usr/share/bash-completion/completions/kubectl'] },
      })
      // Raw, for the same reason: kubeadm prints its completion script.
      .command('kubeadm completion bash >/usr/share/bash-completion/completions/kubeadm', {
        creates: '/usr/share/bash-completion/completions/kubeadm',
        requires: { command: ['kubeadm'] },
        provides: { path: ['/usr/share/bash-completion/completions/kubeadm'] },
      })
      // Raw, for the same reason: crictl prints its completion script.
      .command('crictl completion bash >/usr/share/bash-completion/completions/crictl', {
        creates: '/usr/share/bash-completion/completions/crictl',
        requires: { command: ['crictl'] },
        provides: { path: ['/usr/share/bash-completion/completions/crictl'] },
      })
      .file('/etc/profile.d/kubernetes.sh', {
        owner: 'root',
        group: 'root',
        mode: '0644',
        content: [
          '# kubectl for interactive shells: k as its alias, and the admin kubeconfig when the node has one.',
          'alias k=kubectl',
          'if [ -r /etc/kubernetes/admin.conf ]; then export KUBECONFIG=/etc/kubernetes/admin.conf; fi',
          '',
        ].join('\n'),
      }),
  )
  // role sysprep: what makes one built root a template for many nodes.
  .phase('sysprep', (p) =>
    p
      // Holds first: apt-mark rebuilds apt's caches, which sysprep() then removes.
      .hold([...commonDebs, 'libseccomp2', 'cloud-init'])
      .use(sysprep())
      // What image-builder also clears on its Ubuntu path: installer leftovers, netplan files, proxy settings.
      .remove([
        '/etc/cloud/cloud.cfg.d/subiquity-disable-cloudinit-networking.cfg',
        '/etc/cloud/cloud.cfg.d/99-installer.cfg',
        '/etc/cloud/cloud.cfg.d/curtin-preserve-sources.cfg',
        '/etc/cloud/ds-identify.cfg',
        '/etc/netplan/*.yaml',
        '/etc/apt/apt.conf.d/90proxy',
        '/etc/pip.conf',
        '/swapfile',
        '/swap.img',
      ])
      .remove(['/etc/cloud/cloud-init.disabled'])
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
