// Kubernetes node modules: what kubernetes-sigs/image-builder's node roles do,
// as imgc modules. Each is `p.use(name(options))` in a phase.
import { defineModuleFor, type EitherModule } from '../src/dsl/module.js';
import { Variable } from '../src/dsl/variables.js';
import { DefinitionError } from '../src/core/definition-error.js';
import { ESP_LABEL, ESP_MOUNT, espFiles, loaderEntry } from '../src/core/boot.js';
import type { AptCatalog, AptCatalogArm64 } from './catalog.js';
import type { Arch } from '../src/core/arch.js';

// The stdlib's modules know the apt catalog, so what their packages bring
// (containerd's service, kubelet's command) reaches the caller's types.
const defineModule = defineModuleFor<AptCatalog>();
const defineModuleArm64 = defineModuleFor<AptCatalogArm64>();

/** Sysctls a Kubernetes node needs for pod networking. */
export const kubernetesSysctls = {
  'net.ipv4.ip_forward': '1',
  'net.bridge.bridge-nf-call-iptables': '1',
  'net.bridge.bridge-nf-call-ip6tables': '1',
} as const;

/**
 * The rest of the kernel parameters kubernetes-sigs/image-builder sets on every
 * node: IPv6 forwarding (and IPv6 left on), BBR congestion control, memory
 * overcommit as kubelet expects, reboot 10 s after a panic or an oops, and
 * room for many inotify watchers.
 */
export const nodeTuningSysctls = {
  'net.ipv6.conf.all.forwarding': '1',
  'net.ipv6.conf.all.disable_ipv6': '0',
  'net.ipv4.tcp_congestion_control': 'bbr',
  'vm.overcommit_memory': '1',
  'kernel.panic': '10',
  'kernel.panic_on_oops': '1',
  'fs.inotify.max_user_instances': '8192',
  'fs.inotify.max_user_watches': '524288',
} as const;

/** Kernel modules the container runtime and kube-proxy rely on. */
export const kubernetesKernelModules = ['overlay', 'br_netfilter'] as const;

/**
 * Kernel modules loaded at boot and sysctls for pod networking, in their own
 * files; `tuning: true` adds the node tuning image-builder sets too.
 */
export const kubernetesNetworking = (opts: { tuning?: boolean } = {}) =>
  defineModule((p) => {
    const withModules = kubernetesKernelModules.reduce((b, m) => b.kernelModule(m, { file: '/etc/modules-load.d/k8s.conf' }), p);
    const sysctls: Record<string, string> = { ...kubernetesSysctls, ...(opts.tuning ? nodeTuningSysctls : {}) };
    return Object.entries(sysctls).reduce((b, [k, v]) => b.sysctl(k, v, { file: '/etc/sysctl.d/99-kubernetes.conf' }), withModules);
  });

/** What `containerdConfig` writes. */
export interface ContainerdConfigOptions {
  /** 2 for containerd 1.x (Debian 12's), 3 for containerd 2.x (upstream releases). */
  version: 2 | 3;
  /** The pause image kubelet's pods start from; pinned so it is never garbage-collected. */
  sandboxImage?: string;
  /** Where the CNI plugins are (Debian's package puts them in /usr/lib/cni; kubernetes-cni in /opt/cni/bin, containerd's default). */
  cniBinDir?: string;
  /** Registry hosts configuration (hosts.toml per registry), and `imports` of extra files from conf.d: as image-builder sets them. */
  registryDirs?: boolean;
}

/** containerd's config.toml for kubelet (runc with systemd cgroups), in the schema version the containerd release reads. */
export const containerdConfig = (o: ContainerdConfigOptions): string => {
  const q = JSON.stringify;
  if (o.version === 2)
    return [
      'version = 2',
      ...(o.registryDirs ? ['imports = ["/etc/containerd/conf.d/*.toml"]'] : []),
      '',
      '[plugins."io.containerd.grpc.v1.cri"]',
      ...(o.sandboxImage ? [`  sandbox_image = ${q(o.sandboxImage)}`] : []),
      '',
      ...(o.registryDirs ? ['[plugins."io.containerd.grpc.v1.cri".registry]', '  config_path = "/etc/containerd/certs.d"', ''] : []),
      '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
      '  runtime_type = "io.containerd.runc.v2"',
      '',
      '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
      '  SystemdCgroup = true',
      '',
      ...(o.cniBinDir ? ['[plugins."io.containerd.grpc.v1.cri".cni]', `  bin_dir = ${q(o.cniBinDir)}`, '  conf_dir = "/etc/cni/net.d"', ''] : []),
    ].join('\n');
  // Version 3 splits the CRI plugin into images and runtime plugins.
  return [
    'version = 3',
    ...(o.registryDirs ? ['imports = ["/etc/containerd/conf.d/*.toml"]'] : []),
    '',
    ...(o.sandboxImage ? ["[plugins.'io.containerd.cri.v1.images'.pinned_images]", `  sandbox = ${q(o.sandboxImage)}`, ''] : []),
    ...(o.registryDirs ? ["[plugins.'io.containerd.cri.v1.images'.registry]", '  config_path = "/etc/containerd/certs.d"', ''] : []),
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]",
    '  runtime_type = "io.containerd.runc.v2"',
    '',
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
    '  SystemdCgroup = true',
    '',
    ...(o.cniBinDir ? ["[plugins.'io.containerd.cri.v1.runtime'.cni]", `  bin_dir = ${q(o.cniBinDir)}`, '  conf_dir = "/etc/cni/net.d"', ''] : []),
  ].join('\n');
};

/** The systemd drop-ins image-builder gives containerd: never OOM-killed before pods, no task limit. */
export const containerdDropIns = {
  'memory-pressure.conf': '[Service]\nOOMScoreAdjust=-999\n',
  'max-tasks.conf': '[Service]\nTasksMax=infinity\n',
} as const;

/** A URL or a sha256: a literal, or a `variable(...)` (interpolated in a template string or given as is). */
export type StringValue = string | Variable<string>;

/**
 * One value for every architecture: a release has a tarball, and so a URL and a sum, per architecture. With the
 * module's `arch` (a matrix's `v.arch`), the architecture's entry is taken; a missing one is refused at the call.
 */
export type PerArch<T> = { readonly [A in Arch]?: T };

/** A URL or a sha256, the same for every architecture or one per architecture. */
export type ArchValue = StringValue | PerArch<StringValue>;

/**
 * A file fetched by URL, checked against its sha256. The steps that fetch
 * need curl in the root (Packer and cloud-init fetch there; a chroot build
 * hands the file over): the caller installs it once, before.
 */
export interface Fetched {
  readonly url: ArchValue;
  readonly sha256: ArchValue;
}

/** `value` for `arch` (amd64 when not given): itself, or its entry for that architecture. */
const forArch = (module: string, field: string, value: ArchValue, arch: Arch = 'amd64'): StringValue => {
  if (typeof value === 'string' || value instanceof Variable) return value;
  const own = value[arch];
  if (own !== undefined) return own;
  const given = Object.keys(value);
  throw new DefinitionError(`${module}: ${field} has no entry for ${arch}${given.length ? ` (it has ${given.join(', ')})` : ''}; give one per architecture the image is built for`);
};

/** A download's URL and sha256 for `arch`. */
const fetchedFor = (module: string, field: string, f: Fetched, arch?: Arch) => ({
  url: forArch(module, `${field}url`, f.url, arch),
  sha256: forArch(module, `${field}sha256`, f.sha256, arch),
});

/**
 * containerd's own unit for a release install, as its repository ships it:
 * overlay loaded first, notify-type, never OOM-killed before its pods and no
 * limits whose accounting costs more than cgroups do.
 */
const containerdUnit = (binary: string): string =>
  [
    '[Unit]',
    'Description=containerd container runtime',
    'Documentation=https://containerd.io',
    'After=network.target dbus.service',
    '',
    '[Service]',
    'ExecStartPre=-/sbin/modprobe overlay',
    `ExecStart=${binary}`,
    'Type=notify',
    'Delegate=yes',
    'KillMode=process',
    'Restart=always',
    'RestartSec=5',
    'LimitNPROC=infinity',
    'LimitCORE=infinity',
    'TasksMax=infinity',
    'OOMScoreAdjust=-999',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');

export type ContainerdSource =
  /** Debian's containerd 1.x package with runc and its CNI plugins (in /usr/lib/cni): config version 2. */
  | { readonly source?: 'debian'; readonly sandboxImage?: string }
  /**
   * The upstream release as image-builder installs it: the containerd
   * tarball unpacked into /usr/local, runc into /usr/local/sbin, containerd's
   * unit and image-builder's drop-ins, /etc/containerd with conf.d and
   * certs.d, and a version 3 config (containerd 2.x). CNI plugins are
   * kubernetesCni()'s, in /opt/cni/bin, where containerd looks by default.
   */
  | (Fetched & { readonly source: 'release'; readonly runc: Fetched; readonly sandboxImage?: string; readonly arch?: Arch });

const containerdFromDebian = (sandboxImage?: string) =>
  defineModule((p) =>
    p
      .packages(['containerd', 'runc', 'containernetworking-plugins'])
      .file('/etc/containerd/config.toml', {
        mode: '0644',
        content: containerdConfig({ version: 2, cniBinDir: '/usr/lib/cni', ...(sandboxImage ? { sandboxImage } : {}) }),
      })
      .enableService('containerd'),
  );

const containerdRelease = (o: Fetched & { readonly runc: Fetched; readonly sandboxImage?: string; readonly arch?: Arch }) => {
  const tarball = fetchedFor('containerd()', '', o, o.arch);
  const runc = fetchedFor('containerd()', 'runc.', o.runc, o.arch);
  return defineModule((p) =>
    p
      .packages(['libseccomp2'])
      .archive(`${tarball.url}`, '/usr/local', {
        sha256: `${tarball.sha256}`,
        format: 'tar.gz',
        creates: ['/usr/local/bin/containerd', '/usr/local/bin/containerd-shim-runc-v2', '/usr/local/bin/ctr'],
      })
      .download(`${runc.url}`, '/usr/local/sbin/runc', { sha256: `${runc.sha256}`, mode: '0755' })
      .unit('containerd.service', containerdUnit('/usr/local/bin/containerd'))
      .dropIn('containerd', 'memory-pressure.conf', containerdDropIns['memory-pressure.conf'])
      .dropIn('containerd', 'max-tasks.conf', containerdDropIns['max-tasks.conf'])
      .directory('/etc/containerd', { mode: '0755' })
      .directory('/etc/containerd/conf.d', { mode: '0755' })
      .directory('/etc/containerd/certs.d', { mode: '0755' })
      .file('/etc/containerd/config.toml', {
        mode: '0644',
        content: containerdConfig({ version: 3, registryDirs: true, ...(o.sandboxImage ? { sandboxImage: o.sandboxImage } : {}) }),
      })
      .enableService('containerd'),
  );
};

/** The module of a source: what one source installs reaches the types, not what another would. */
type ContainerdModule<O> = O extends { source: 'release' } ? ReturnType<typeof containerdRelease> : ReturnType<typeof containerdFromDebian>;

/** containerd configured for kubelet (runc with systemd cgroups), from Debian or from the upstream release, enabled at boot. */
export const containerd = <const O extends ContainerdSource = {}>(opts?: O): EitherModule<ContainerdModule<O>> => {
  const o = (opts ?? {}) as ContainerdSource;
  return (o.source === 'release' ? containerdRelease(o) : containerdFromDebian(o.sandboxImage)) as unknown as EitherModule<ContainerdModule<O>>;
};

/** /etc/crictl.yaml's text: crictl talks to containerd's CRI socket. */
const crictlYaml = (endpoint = 'unix:///run/containerd/containerd.sock'): string => `runtime-endpoint: ${endpoint}\n`;

const crictlConfig = (endpoint?: string) => defineModule((p) => p.file('/etc/crictl.yaml', { mode: '0644', content: crictlYaml(endpoint) }));

const crictlRelease = (o: Fetched & { endpoint?: string; arch?: Arch }) => {
  const tarball = fetchedFor('crictl()', '', o, o.arch);
  return defineModule((p) =>
    p
      .archive(`${tarball.url}`, '/usr/local/bin', { sha256: `${tarball.sha256}`, format: 'tar.gz', creates: ['/usr/local/bin/crictl'] })
      .file('/etc/crictl.yaml', { mode: '0644', content: crictlYaml(o.endpoint) }),
  );
};

/** Where crictl talks to containerd; with `url` and `sha256`, where its tarball is (`arch` picks a per-architecture one). */
export type CrictlOptions = { endpoint?: string } | (Fetched & { endpoint?: string; arch?: Arch });

type CrictlModule<O> = O extends { url: unknown } ? ReturnType<typeof crictlRelease> : ReturnType<typeof crictlConfig>;

/**
 * /etc/crictl.yaml, and with `url` and `sha256` crictl itself from its
 * release tarball (cri-tools' crictl-vX-linux-ARCH.tar.gz) into /usr/local/bin;
 * either may be one per architecture, picked by `arch`.
 */
export const crictl = <const O extends CrictlOptions = {}>(opts?: O): EitherModule<CrictlModule<O>> => {
  const o = (opts ?? {}) as CrictlOptions;
  return ('url' in o ? crictlRelease(o) : crictlConfig(o.endpoint)) as unknown as EitherModule<CrictlModule<O>>;
};

/** The CNI plugins kubelet's pod networks call first; the tarball has more. */
const cniPlugins = ['bridge', 'host-local', 'loopback', 'portmap'] as const;

/**
 * The CNI plugins from their release tarball (containernetworking/plugins' cni-plugins-linux-ARCH-vX.tgz) into
 * /opt/cni/bin, as image-builder's kubernetes-cni; `url` and `sha256` may be one per architecture, picked by `arch`.
 */
export const kubernetesCni = (opts: Fetched & { arch?: Arch }) => {
  const tarball = fetchedFor('kubernetesCni()', '', opts, opts.arch);
  return defineModule((p) =>
    p
      .directory('/opt/cni', { owner: 'root', group: 'root', mode: '0755' })
      .archive(`${tarball.url}`, '/opt/cni/bin', {
        sha256: `${tarball.sha256}`,
        format: 'tar.gz',
        owner: 'root',
        group: 'root',
        mode: '0755',
        creates: cniPlugins.map((n) => `/opt/cni/bin/${n}` as const),
      }),
  );
};

/** kubelet's unit as image-builder writes it for binaries from a URL; kubeadm's drop-in gives it its flags. */
const kubeletUnit = (binary: string): string =>
  [
    '[Unit]',
    'Description=kubelet: The Kubernetes Node Agent',
    'Documentation=https://kubernetes.io/docs/home/',
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    `ExecStart=${binary}`,
    'Restart=always',
    'StartLimitInterval=0',
    'RestartSec=10',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');

/** kubeadm's drop-in for kubelet: the kubeconfigs and config file kubeadm init/join write, and the flags files. */
const kubeadmDropIn = (binary: string): string =>
  [
    '# kubeadm init and join write the kubeconfigs, config.yaml and kubeadm-flags.env this reads.',
    '[Service]',
    'Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"',
    'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"',
    'EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env',
    'EnvironmentFile=-/etc/default/kubelet',
    'ExecStart=',
    `ExecStart=${binary} $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS`,
    '',
  ].join('\n');

export type KubernetesSource =
  /** Debian's own packages: kubectl only (Debian ships no kubelet/kubeadm). */
  | { source: 'debian' }
  /**
   * The upstream apt repository at pkgs.k8s.io for one minor version. With
   * `version` (a Debian version of that minor, `1.30.2-1.1`) kubelet, kubeadm
   * and kubectl are pinned to it and held there, kubernetes-cni and cri-tools come too, and
   * /etc/kubernetes-version and /etc/default/kubelet are written, as
   * image-builder does.
   */
  | { source: 'upstream'; minor: `${number}.${number}` | Variable<string>; version?: `${number}.${number}.${number}-${string}`; kubeletExtraArgs?: string }
  /**
   * The release binaries, as image-builder's `kubernetes_source_type: http`:
   * kubeadm, kubelet and kubectl from `BASEURL/vVERSION/bin/linux/ARCH/NAME`
   * (dl.k8s.io/release upstream) into /usr/bin, each checked against its
   * sha256; kubelet's unit and kubeadm's drop-in; /etc/kubernetes-version
   * and /etc/default/kubelet. No package to pin or hold: the sums pin them.
   */
  | {
      source: 'release';
      baseUrl?: StringValue;
      version: `${number}.${number}.${number}` | Variable<string>;
      arch?: Arch;
      sha256: { readonly kubeadm: ArchValue; readonly kubelet: ArchValue; readonly kubectl: ArchValue };
      kubeletExtraArgs?: string;
    };

type KubernetesFrom<S extends KubernetesSource['source']> = Extract<KubernetesSource, { source: S }>;

/** kubeadm preflight's tools, with every source. */
const kubeadmTools = ['conntrack', 'socat'] as const;

const kubernetesFromDebian = () => defineModule((p) => p.packages(kubeadmTools).packages(['kubernetes-client']));

const kubernetesFromRepository = (k8s: KubernetesFrom<'upstream'>) =>
  defineModule((p) => {
    const uri = `https://pkgs.k8s.io/core:/stable:/v${k8s.minor}/deb/`;
    const repo = p.packages(kubeadmTools).packages(['ca-certificates', 'curl']).aptRepository('kubernetes', { uri, suites: ['/'], keyUrl: `${uri}Release.key` });
    if (k8s.version === undefined) return repo.packages(['kubelet', 'kubeadm', 'kubectl']).enableService('kubelet');
    const v = k8s.version;
    return repo
      .packages([`kubelet=${v}`, `kubeadm=${v}`, `kubectl=${v}`, 'kubernetes-cni', 'cri-tools'])
      .hold(['kubelet', 'kubeadm', 'kubectl'])
      .file('/etc/default/kubelet', { mode: '0644', content: `KUBELET_EXTRA_ARGS=${k8s.kubeletExtraArgs ?? ''}\n` })
      .file('/etc/kubernetes-version', { mode: '0644', content: `v${v.slice(0, v.indexOf('-'))}\n` })
      .enableService('kubelet');
  });

const kubernetesRelease = (k8s: KubernetesFrom<'release'>) => {
  const bin = `${k8s.baseUrl ?? 'https://dl.k8s.io/release'}/v${k8s.version}/bin/linux/${k8s.arch ?? 'amd64'}`;
  const sum = (name: keyof typeof k8s.sha256) => forArch('kubernetes()', `sha256.${name}`, k8s.sha256[name], k8s.arch);
  const sums = { kubeadm: sum('kubeadm'), kubelet: sum('kubelet'), kubectl: sum('kubectl') };
  return defineModule((p) => {
    const exe = { owner: 'root', group: 'root', mode: '0755' } as const;
    return p
      .packages(kubeadmTools)
      .download(`${bin}/kubeadm`, '/usr/bin/kubeadm', { sha256: `${sums.kubeadm}`, ...exe })
      .download(`${bin}/kubelet`, '/usr/bin/kubelet', { sha256: `${sums.kubelet}`, ...exe })
      .download(`${bin}/kubectl`, '/usr/bin/kubectl', { sha256: `${sums.kubectl}`, ...exe })
      .unit('kubelet.service', kubeletUnit('/usr/bin/kubelet'))
      .dropIn('kubelet', '10-kubeadm.conf', kubeadmDropIn('/usr/bin/kubelet'))
      .file('/etc/default/kubelet', { mode: '0644', content: `KUBELET_EXTRA_ARGS=${k8s.kubeletExtraArgs ?? ''}\n` })
      .file('/etc/kubernetes-version', { mode: '0644', content: `v${k8s.version}\n` })
      .enableService('kubelet');
  });
};

type KubernetesModule<K> = K extends { source: 'debian' }
  ? ReturnType<typeof kubernetesFromDebian>
  : K extends { source: 'release' }
    ? ReturnType<typeof kubernetesRelease>
    : ReturnType<typeof kubernetesFromRepository>;

/** kubelet, kubeadm and kubectl (or kubectl alone from Debian), plus the tools kubeadm preflight wants. */
export const kubernetes = <const K extends KubernetesSource>(k8s: K): EitherModule<KubernetesModule<K>> =>
  (k8s.source === 'debian' ? kubernetesFromDebian() : k8s.source === 'release' ? kubernetesRelease(k8s as KubernetesFrom<'release'>) : kubernetesFromRepository(k8s as KubernetesFrom<'upstream'>)) as unknown as EitherModule<KubernetesModule<K>>;

/** Where network() has systemd-networkd bring NICs up. */
const dhcpNetworkFile = '/etc/systemd/network/80-imgc-dhcp.network';

/**
 * The network of a bootable node: systemd-networkd (systemd's own, enabled)
 * brings every ethernet NIC up by DHCP (IPv4, and IPv6 router
 * advertisements), matched by the kernel's names for physical NICs (en*, eth*)
 * so the veths and bridges a CNI plugin makes are left to it. `verify --boot`
 * checks that an interface has an IPv4 address. With cloudInit(), cloud-init
 * leaves the network to this.
 */
export const network = () =>
  defineModule((p) =>
    p
      .file(dhcpNetworkFile, {
        mode: '0644',
        content: ['# imgc network(): DHCP on every physical ethernet NIC.', '[Match]', 'Type=ether', 'Name=en* eth*', '', '[Network]', 'DHCP=yes', ''].join('\n'),
      })
      .enableService('systemd-networkd'),
  );

/**
 * cloud-init for a cloud or QEMU base: the packages image-builder installs on
 * its qemu path (growpart, growroot in the initramfs: the root partition and
 * filesystem grow to the disk a clone is given), its four boot stages
 * enabled, the datasources to look for, and its config and final stages
 * ordered after the units in `after` (containerd's by default, so a
 * `kubeadm join` in user-data finds the container runtime up). cloud-init
 * writes no network configuration (network() has the NICs) and keeps the
 * image's locale: Debian's cloud-init would generate en_US.UTF-8, which
 * fails without the `locales` package and leaves `cloud-init status` in error.
 */
export const cloudInit = (opts: { datasources?: readonly string[]; after?: readonly string[] } = {}) =>
  defineModule((p) => {
    const after = (opts.after ?? ['containerd.service']).join(' ');
    const order = `[Unit]\nAfter=${after}\nWants=${after}\n`;
    return p
      .packages(['cloud-init', 'cloud-guest-utils', 'cloud-initramfs-growroot'])
      .file('/etc/cloud/cloud.cfg.d/90_dpkg.cfg', {
        mode: '0644',
        content: `datasource_list: [ ${[...(opts.datasources ?? ['NoCloud', 'ConfigDrive', 'OpenStack', 'Ec2', 'None'])].join(', ')} ]\n`,
      })
      .file('/etc/cloud/cloud.cfg.d/91_imgc.cfg', {
        mode: '0644',
        content: [
          '# imgc cloudInit(): network() brings the NICs up; cloud-init writes no network configuration.',
          'network: {config: disabled}',
          '# The image keeps its locale (C.UTF-8): generating another needs the locales package.',
          'locale: false',
          '',
        ].join('\n'),
      })
      .directory('/etc/systemd/system/cloud-config.service.d', { mode: '0755' })
      .file('/etc/systemd/system/cloud-config.service.d/boot-order.conf', { mode: '0644', content: order })
      .directory('/etc/systemd/system/cloud-final.service.d', { mode: '0755' })
      .file('/etc/systemd/system/cloud-final.service.d/boot-order.conf', { mode: '0644', content: order })
      .enableService('cloud-init-local')
      .enableService('cloud-init')
      .enableService('cloud-config')
      .enableService('cloud-final');
  });

/**
 * A first-boot unit making the SSH host keys sysprep() removed, when nothing
 * made them before sshd starts: cloud-init's ssh module makes them when
 * cloud-init is there (this runs after it and then finds them), this does
 * without cloud-init.
 */
const sshHostKeysUnit = [
  '[Unit]',
  'Description=Make the SSH host keys this machine has not got yet (imgc sysprep)',
  'After=cloud-init.service',
  'Before=ssh.service',
  'ConditionPathExists=/usr/bin/ssh-keygen',
  'ConditionPathExistsGlob=!/etc/ssh/ssh_host_*_key',
  '',
  '[Service]',
  'Type=oneshot',
  'ExecStart=/usr/bin/ssh-keygen -A',
  'RemainAfterExit=yes',
  '',
  '[Install]',
  'WantedBy=multi-user.target',
  '',
].join('\n');

/**
 * What makes one built root a template for many machines, as image-builder's
 * sysprep role does: an empty machine-id (systemd makes the machine's own
 * at its first boot; "uninitialized" would also make it a first boot, whose
 * systemd-firstboot prompts on the console and waits), no SSH host keys (made at first
 * boot: by cloud-init when it is there, else by sshHostKeysUnit; pass
 * `keepSshHostKeys` to keep the build's), no authorized keys, apt lists or
 * caches, no cloud-init state, empty logs, no rotated logs, temporary files or
 * shell history, no persistent network names.
 */
export const sysprep = (opts: { keepSshHostKeys?: boolean } = {}) =>
  defineModule((p) => {
    const cleaned = p
      .truncate(['/etc/machine-id', '/etc/hostname'])
      .remove([
        '/var/lib/dbus/machine-id',
        ...(opts.keepSshHostKeys ? [] : (['/etc/ssh/ssh_host_*'] as const)),
        '/root/.ssh/authorized_keys',
        // The lists apt fetched (host_path_dists_…), not apt's own partial/ and lock, which the base has.
        '/var/lib/apt/lists/*_*',
        '/var/cache/apt/*.bin',
        '/var/cache/apt/archives/*.deb',
        '/var/lib/cloud',
        '/var/log/cloud-init.log',
        '/var/log/cloud-init-output.log',
        '/etc/udev/rules.d/70-persistent-net.rules',
        '/tmp/*',
        '/var/tmp/*',
        '/root/.bash_history',
        '/var/log/*.gz',
        '/var/log/*.[0-9]',
        '/var/log/journal/*',
      ])
      .truncate(['/var/log/*.log', '/var/log/wtmp', '/var/log/lastlog', '/var/log/btmp', '/var/log/apt/*.log']);
    return opts.keepSshHostKeys ? cleaned : cleaned.unit('imgc-ssh-host-keys.service', sshHostKeysUnit).enableService('imgc-ssh-host-keys');
  });

/** sshd without passwords or root logins, as a drop-in. */
export const sshHardening = () =>
  defineModule((p) =>
    p
      .packages(['openssh-server'])
      .file('/etc/ssh/sshd_config.d/50-imgc-hardening.conf', {
        mode: '0644',
        content: ['PermitRootLogin no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'X11Forwarding no', ''].join('\n'),
      })
      .enableService('ssh'),
  );

/**
 * Break-glass console login: root's password from a sensitive variable
 * holding its crypt(3) hash (`mkpasswd -m sha-512`, `openssl passwd -6`), for
 * the serial or VGA console only (sshHardening() keeps root and passwords off
 * SSH). Off unless a definition uses it; the hash is given when the image is
 * built (`--var`, `IMGC_VAR_*`) and never written into an output or the cache.
 */
export const consolePassword = (hash: Variable<string>) =>
  defineModule((p) => p.command(`printf 'root:%s\\n' "${hash}" | chpasswd -e`, { description: "set root's console password (break-glass)" }));

/** A journald drop-in capping the journal's disk use. */
export const journald = (opts: { systemMaxUse?: string } = {}) =>
  defineModule((p) =>
    p
      .directory('/etc/systemd/journald.conf.d', { mode: '0755' })
      .file('/etc/systemd/journald.conf.d/50-imgc.conf', {
        mode: '0644',
        content: ['[Journal]', `SystemMaxUse=${opts.systemMaxUse ?? '500M'}`, 'Storage=persistent', ''].join('\n'),
      }),
  );

/**
 * The kernel hook of bootable(): copies a newly installed kernel and its
 * initramfs to the mounted ESP and points the loader entry at them, keeping
 * the entry's title and kernel command line. The kernel's postinst
 * (/etc/kernel/postinst.d) and update-initramfs (/etc/initramfs/post-update.d)
 * run it with the kernel's version; only the newest installed kernel is copied.
 */
const espKernelHook = [
  '#!/bin/sh',
  '# imgc bootable(): the node boots the kernel and initramfs on its EFI system partition.',
  'set -eu',
  'version=$1',
  `esp=${ESP_MOUNT}`,
  `entry=$esp${espFiles.entry}`,
  '# In a chroot build the ESP is not mounted: imgc makes it from the root afterwards.',
  'mountpoint -q "$esp" && [ -f "$entry" ] || exit 0',
  '[ "$version" = "$(linux-version list | linux-version sort | tail -n 1)" ] || exit 0',
  'kernel=/boot/vmlinuz-$version',
  'initrd=/boot/initrd.img-$version',
  "# A new kernel's postinst runs before its initramfs exists: update-initramfs runs this again once it does.",
  '[ -f "$kernel" ] && [ -f "$initrd" ] || exit 0',
  "title=$(sed -n 's/^title //p' \"$entry\")",
  "options=$(sed -n 's/^options //p' \"$entry\")",
  `cp "$kernel" "$esp${espFiles.kernel}.new"`,
  `cp "$initrd" "$esp${espFiles.initrd}.new"`,
  // The entry's shape has no quote, dollar or backslash of its own: the values expand in double quotes.
  `text="${loaderEntry({ title: '$title', version: '$version', options: '$options' })}"`,
  'printf %s "$text" >"$entry.new"',
  'sync',
  `mv -f "$esp${espFiles.kernel}.new" "$esp${espFiles.kernel}"`,
  `mv -f "$esp${espFiles.initrd}.new" "$esp${espFiles.initrd}"`,
  'mv -f "$entry.new" "$entry"',
  'sync',
  '',
].join('\n');

// Before the kernel's install makes the initramfs: initramfs-tools' fsck hook finds the root's type by its
// device, which a chroot has not got, and leaves fsck out unless FSTYPE names it.
const initramfsRootType = () =>
  defineModule((p) =>
    p
      .directory('/etc/initramfs-tools', { mode: '0755' })
      .directory('/etc/initramfs-tools/conf.d', { mode: '0755' })
      .file('/etc/initramfs-tools/conf.d/imgc-root-fstype', { mode: '0644', content: '# imgc bootable(): the root is ext4 (fsck.ext4 goes into the initramfs).\nFSTYPE=ext4\n' }),
  );

/** After the kernel's install: the fstab, the ESP's mount point and the kernel hook. */
const espMounts = () =>
  defineModule((p) =>
    p
      // The root partition's filesystem is labelled `rootfs` by imgc; the kernel finds it by PARTUUID.
      .file('/etc/fstab', {
        mode: '0644',
        content: [
          '# <file system> <mount point> <type> <options> <dump> <pass>',
          'LABEL=rootfs / ext4 defaults,errors=remount-ro 0 1',
          `LABEL=${ESP_LABEL} ${ESP_MOUNT} vfat umask=0077,nofail 0 0`,
          '',
        ].join('\n'),
      })
      .directory(ESP_MOUNT, { mode: '0700' })
      .directory('/etc/kernel/postinst.d', { mode: '0755' })
      .file('/etc/kernel/postinst.d/zz-imgc-esp', { mode: '0755', content: espKernelHook })
      .directory('/etc/initramfs', { mode: '0755' })
      .directory('/etc/initramfs/post-update.d', { mode: '0755' })
      .file('/etc/initramfs/post-update.d/zz-imgc-esp', { mode: '0755', content: espKernelHook }),
  );

const bootableAmd64 = () =>
  defineModule((p) => p.use(initramfsRootType()).packages(['initramfs-tools', 'linux-image-amd64', 'systemd-boot-efi', 'e2fsprogs', 'dbus']).use(espMounts()));

// The same for an arm64 base, whose catalog knows its kernel and loader.
const bootableArm64 = () =>
  defineModuleArm64((p) => p.use(initramfsRootType()).packages(['initramfs-tools', 'linux-image-arm64', 'systemd-boot-efi', 'e2fsprogs', 'dbus']).use(espMounts()));

/**
 * What a bootable disk needs in its root: Debian's kernel of the base's
 * architecture with an initramfs (fsck.ext4 in it: e2fsprogs, and
 * FSTYPE=ext4 for initramfs-tools' fsck hook), systemd-boot's EFI binary
 * (imgc makes the EFI system partition from them; nothing is installed to a
 * boot partition inside the chroot), dbus (hostnamectl, logind), an fstab
 * that mounts the root by its label and the ESP on /boot/efi by its, and
 * espKernelHook, so a kernel installed on the running node is the one it
 * boots next. UEFI only. `arch` is the base's (debian12({ arch })): the
 * checker refuses a disk whose loader is another architecture's.
 */
export const bootable = <const A extends Arch = 'amd64'>(opts: { arch?: A } = {}): BootableModule<A> => (opts.arch === 'arm64' ? bootableArm64() : bootableAmd64()) as never;

/** One architecture's module, or, for an architecture not known until the definition runs (a matrix's `v.arch`), either's facts. */
type BootableModule<A extends Arch> = [A] extends ['arm64']
  ? ReturnType<typeof bootableArm64>
  : [A] extends ['amd64']
    ? ReturnType<typeof bootableAmd64>
    : EitherModule<ReturnType<typeof bootableArm64> | ReturnType<typeof bootableAmd64>>;
