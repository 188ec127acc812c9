// The stdlib modules that say what kubernetes-sigs/image-builder's roles do
// (docs/image-builder.md): their files parse, and they check clean on Debian 12.
import TOML from '@iarna/toml';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { image } from '../../src/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { cloudInit, containerd, containerdConfig, crictl, kubernetes, kubernetesCni, kubernetesNetworking, nodeTuningSysctls } from '../../stdlib/modules.js';

describe('containerdConfig', () => {
  it('writes schema version 3 for containerd 2.x: CRI split into images and runtime plugins', () => {
    const t = TOML.parse(containerdConfig({ version: 3, sandboxImage: 'registry.k8s.io/pause:3.10', registryDirs: true })) as Record<string, unknown>;
    expect(t['version']).toBe(3);
    expect(t['imports']).toEqual(['/etc/containerd/conf.d/*.toml']);
    const plugins = t['plugins'] as Record<string, Record<string, unknown>>;
    expect(plugins['io.containerd.cri.v1.images']).toEqual({ pinned_images: { sandbox: 'registry.k8s.io/pause:3.10' }, registry: { config_path: '/etc/containerd/certs.d' } });
    expect(plugins['io.containerd.cri.v1.runtime']).toEqual({ containerd: { runtimes: { runc: { runtime_type: 'io.containerd.runc.v2', options: { SystemdCgroup: true } } } } });
    expect(plugins['io.containerd.grpc.v1.cri']).toBeUndefined();
  });

  it('writes schema version 2 for containerd 1.x (Debian 12 ships 1.6)', () => {
    const t = TOML.parse(containerdConfig({ version: 2, sandboxImage: 'registry.k8s.io/pause:3.10', cniBinDir: '/usr/lib/cni' })) as Record<string, unknown>;
    expect(t['version']).toBe(2);
    const cri = (t['plugins'] as Record<string, Record<string, unknown>>)['io.containerd.grpc.v1.cri']!;
    expect(cri['sandbox_image']).toBe('registry.k8s.io/pause:3.10');
    expect(cri['cni']).toEqual({ bin_dir: '/usr/lib/cni', conf_dir: '/etc/cni/net.d' });
  });
});

describe("image-builder's node as stdlib modules", () => {
  const ir = image('t')
    .base(debian12({ include: ['systemd', 'kmod', 'procps'] }))
    .provision((p) =>
      p
        .use(kubernetesNetworking({ tuning: true }))
        .use(kubernetes({ source: 'upstream', minor: '1.31', version: '1.31.4-1.1', kubeletExtraArgs: '--node-ip=10.0.0.2' }))
        .use(crictl())
        .use(cloudInit()),
    )
    .toIR();
  const steps = ir.phases[0]!.steps;

  it('checks clean', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('sets all eleven of image-builder’s sysctls', () => {
    const keys = steps.flatMap((s) => (s.kind === 'sysctl' ? [s.key] : []));
    expect(keys).toHaveLength(11);
    expect(keys).toEqual(expect.arrayContaining(Object.keys(nodeTuningSysctls)));
  });

  it('pins kubelet, kubeadm and kubectl to one version, with kubernetes-cni and cri-tools', () => {
    const names = steps.flatMap((s) => (s.kind === 'packages' ? s.names : []));
    expect(names).toEqual(expect.arrayContaining(['kubelet=1.31.4-1.1', 'kubeadm=1.31.4-1.1', 'kubectl=1.31.4-1.1', 'kubernetes-cni', 'cri-tools']));
    const files = Object.fromEntries(steps.flatMap((s) => (s.kind === 'file' ? [[s.path, s.content]] : [])));
    expect(files['/etc/kubernetes-version']).toBe('v1.31.4\n');
    expect(files['/etc/default/kubelet']).toBe('KUBELET_EXTRA_ARGS=--node-ip=10.0.0.2\n');
    expect(files['/etc/crictl.yaml']).toBe('runtime-endpoint: unix:///run/containerd/containerd.sock\n');
  });
});

describe("image-builder's release sources (containerd, runc, crictl, CNI plugins, Kubernetes binaries)", () => {
  const sum = 'a'.repeat(64);
  const ir = image('t')
    .base(debian12({ include: ['systemd', 'kmod', 'procps'] }))
    .provision((p) =>
      p
        .packages(['curl'])
        .use(containerd({ source: 'release', url: 'https://example.org/containerd-2.3.2-linux-amd64.tar.gz', sha256: sum, runc: { url: 'https://example.org/runc.amd64', sha256: sum } }))
        .use(crictl({ url: 'https://example.org/crictl.tar.gz', sha256: sum }))
        .use(kubernetesCni({ url: 'https://example.org/cni.tgz', sha256: sum }))
        .use(kubernetes({ source: 'release', version: '1.36.1', sha256: { kubeadm: sum, kubelet: sum, kubectl: sum } })),
    )
    .toIR();
  const steps = ir.phases[0]!.steps;
  const provided = new Set(steps.flatMap((s) => s.provides.map((f) => `${f.kind}:${f.key}`)));

  it('checks clean', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('unpacks into /usr/local, /usr/local/bin and /opt/cni/bin and downloads the binaries, each with its sum', () => {
    expect(steps.flatMap((s) => (s.kind === 'archive' ? [[s.dest, s.format, s.sha256]] : []))).toEqual([
      ['/usr/local', 'tar.gz', sum],
      ['/usr/local/bin', 'tar.gz', sum],
      ['/opt/cni/bin', 'tar.gz', sum],
    ]);
    expect(steps.flatMap((s) => (s.kind === 'download' ? [s.path] : []))).toEqual(['/usr/local/sbin/runc', '/usr/bin/kubeadm', '/usr/bin/kubelet', '/usr/bin/kubectl']);
    expect(steps.find((s) => s.kind === 'download' && s.path === '/usr/bin/kubeadm')).toMatchObject({ url: 'https://dl.k8s.io/release/v1.36.1/bin/linux/amd64/kubeadm' });
  });

  it('provides the services from unit steps and the commands from what lands on the PATH', () => {
    for (const f of ['service:containerd', 'service:kubelet', 'command:containerd', 'command:ctr', 'command:runc', 'command:crictl', 'command:kubeadm', 'command:kubelet', 'command:kubectl', 'path:/opt/cni/bin/bridge'])
      expect(provided, f).toContain(f);
    const units = steps.flatMap((s) => (s.kind === 'unit' ? [`${s.unit}${s.dropIn ? `/${s.dropIn}` : ''}`] : []));
    expect(units).toEqual(['containerd.service', 'containerd.service/memory-pressure.conf', 'containerd.service/max-tasks.conf', 'kubelet.service', 'kubelet.service/10-kubeadm.conf']);
  });

  it('writes a version 3 config for containerd 2.x, and the version file', () => {
    const files = Object.fromEntries(steps.flatMap((s) => (s.kind === 'file' ? [[s.path, s.content]] : [])));
    expect((TOML.parse(files['/etc/containerd/config.toml']!) as Record<string, unknown>)['version']).toBe(3);
    expect(files['/etc/kubernetes-version']).toBe('v1.36.1\n');
  });
});
