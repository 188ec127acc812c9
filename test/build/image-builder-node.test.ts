// examples/image-builder-node.ts built for real in a chroot (shell target),
// its downloads served from 127.0.0.1: no upstream host is reachable here.
// The served files are Debian's own builds of the same programs, repacked in
// the upstream release layouts (containerd's tarball of bin/, runc as one
// binary, the CNI plugins' flat tgz); kubelet, kubeadm and crictl, which
// Debian does not ship, are small stand-ins answering what the build runs
// (`completion bash`). Then `imgc verify`, and facts read off the root.
import { execa } from 'execa';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { serveFiles, type FileServer } from '../helpers/file-server.js';
import { tempDir } from '../helpers/temp.js';
import { cannotBuild, imgcRun, mountsContaining, outDir, privateCache, read, summaryOf } from './helpers.js';

const example = path.join(repoRoot, 'examples/image-builder-node.ts');
/** The example's default Kubernetes version: the served tree has its path. */
const k8s = 'release/v1.36.1/bin/linux/amd64';

/**
 * A stand-in for an upstream binary this machine cannot download (Debian has
 * no kubelet, kubeadm or crictl): it prints a completion script when the build
 * asks for one, and its name otherwise.
 */
const standIn = (name: string) =>
  [
    '#!/bin/sh',
    `# Stands in for the upstream ${name}, which this machine cannot download.`,
    `if [ "$1 $2" = "completion bash" ]; then echo "complete -o default ${name}"; else echo "${name} (stand-in)"; fi`,
    '',
  ].join('\n');

/** The served files, built from Debian's packages where Debian has them. */
const servedFiles = async (): Promise<Record<string, Buffer | string>> => {
  const dir = tempDir('ibnode-src');
  const debs = path.join(dir, 'debs');
  const x = path.join(dir, 'x');
  mkdirSync(debs);
  mkdirSync(x);
  await execa('apt-get', ['download', '-q', 'containerd', 'runc', 'containernetworking-plugins', 'kubernetes-client'], { cwd: debs });
  for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) await execa('dpkg-deb', ['-x', path.join(debs, deb), x]);
  // containerd's release tarball holds bin/: unpacked into /usr/local.
  const stage = path.join(dir, 'containerd');
  mkdirSync(path.join(stage, 'bin'), { recursive: true });
  await execa('cp', ['-p', ...['containerd', 'containerd-shim-runc-v2', 'ctr'].map((b) => path.join(x, 'usr/bin', b)), path.join(stage, 'bin')]);
  await execa('tar', ['-czf', path.join(dir, 'containerd.tar.gz'), '--owner=0', '--group=0', '-C', stage, 'bin']);
  // The CNI plugins' tgz is flat: ./bridge, ./loopback, …
  await execa('tar', ['-czf', path.join(dir, 'cni.tgz'), '--owner=0', '--group=0', '-C', path.join(x, 'usr/lib/cni'), '.']);
  // crictl's tarball holds the one binary.
  mkdirSync(path.join(dir, 'crictl'));
  writeFileSync(path.join(dir, 'crictl', 'crictl'), standIn('crictl'), { mode: 0o755 });
  await execa('tar', ['-czf', path.join(dir, 'crictl.tar.gz'), '--owner=0', '--group=0', '-C', path.join(dir, 'crictl'), 'crictl']);
  return {
    'containerd.tar.gz': readFileSync(path.join(dir, 'containerd.tar.gz')),
    'runc.amd64': readFileSync(path.join(x, 'usr/sbin/runc')),
    'cni.tgz': readFileSync(path.join(dir, 'cni.tgz')),
    'crictl.tar.gz': readFileSync(path.join(dir, 'crictl.tar.gz')),
    [`${k8s}/kubectl`]: readFileSync(path.join(x, 'usr/bin/kubectl')),
    [`${k8s}/kubeadm`]: standIn('kubeadm'),
    [`${k8s}/kubelet`]: standIn('kubelet'),
  };
};

describe.skipIf(cannotBuild)('imgc build of examples/image-builder-node.ts, downloads from 127.0.0.1', () => {
  let server: FileServer;
  const env: Record<string, string> = {};
  const out = outDir('ibnode');
  // The example publishes its root as rootfs.tar.zst (and a disk): unpacked here to be read and verified.
  const root = outDir('ibnode-root');
  let build: Awaited<ReturnType<typeof imgcRun>>;
  let seconds = 0;

  const vars = () =>
    Object.entries({
      containerd_url: server.urlOf('containerd.tar.gz'),
      containerd_sha256: server.sha256Of('containerd.tar.gz'),
      runc_url: server.urlOf('runc.amd64'),
      runc_sha256: server.sha256Of('runc.amd64'),
      cni_url: server.urlOf('cni.tgz'),
      cni_sha256: server.sha256Of('cni.tgz'),
      crictl_url: server.urlOf('crictl.tar.gz'),
      crictl_sha256: server.sha256Of('crictl.tar.gz'),
      kubernetes_http_source: `${server.url}/release`,
      kubeadm_sha256: server.sha256Of(`${k8s}/kubeadm`),
      kubelet_sha256: server.sha256Of(`${k8s}/kubelet`),
      kubectl_sha256: server.sha256Of(`${k8s}/kubectl`),
    }).flatMap(([k, v]) => ['--var', `${k}=${v}`]);

  beforeAll(async () => {
    server = await serveFiles(await servedFiles());
    env['IMGC_CACHE'] = privateCache('ibnode');
    const started = Date.now();
    build = await imgcRun(['build', example, '--no-typecheck', '--target', 'shell', '--out', out, ...vars()], { env });
    seconds = Math.round((Date.now() - started) / 1000);
    process.stderr.write(`image-builder-node chroot build: ${seconds} s\n`);
    if (build.exitCode === 0) await execa('tar', ['--zstd', '-xpf', path.join(out, 'rootfs.tar.zst'), '--numeric-owner', '-C', root]);
  }, 1_800_000);
  afterAll(() => server?.close());

  it('builds, each file fetched once by imgc, and verify passes', async () => {
    expect(build.exitCode, build.all).toBe(0);
    expect(summaryOf(out).ok).toBe(true);
    expect(summaryOf(out).verify?.failed).toBe(0);
    expect(mountsContaining('.imgc-work-image-builder-node-')).toEqual([]);
    const wanted = ['containerd.tar.gz', 'runc.amd64', 'cni.tgz', 'crictl.tar.gz', ...['kubeadm', 'kubelet', 'kubectl'].map((b) => `${k8s}/${b}`)];
    expect([...server.requests].sort()).toEqual(wanted.map((f) => `/${f}`).sort());
    const verified = await imgcRun(['verify', example, '--no-typecheck', '--root', root, ...vars()], { env });
    expect(verified.exitCode, verified.all).toBe(0);
  });

  it('has containerd 2.x laid out as upstream ships it, with a version 3 config, runc and the CNI plugins', () => {
    for (const b of ['usr/local/bin/containerd', 'usr/local/bin/containerd-shim-runc-v2', 'usr/local/bin/ctr', 'usr/local/sbin/runc', 'opt/cni/bin/bridge', 'opt/cni/bin/loopback'])
      expect(existsSync(path.join(root, b)), b).toBe(true);
    expect(read(path.join(root, 'etc/containerd/config.toml'))).toMatch(/^version = 3\n/);
    expect(read(path.join(root, 'etc/containerd/config.toml'))).toContain("[plugins.'io.containerd.cri.v1.images'.pinned_images]");
    expect(read(path.join(root, 'etc/systemd/system/containerd.service'))).toContain('ExecStart=/usr/local/bin/containerd\n');
    expect(read(path.join(root, 'etc/systemd/system/containerd.service.d/max-tasks.conf'))).toBe('[Service]\nTasksMax=infinity\n');
    expect(readlinkSync(path.join(root, 'usr/bin/crictl'))).toBe('/usr/local/bin/crictl');
  });

  it('has kubelet, kubeadm and kubectl with their units, enabled, and the completions they printed', () => {
    expect(readFileSync(path.join(root, 'usr/bin/kubeadm'), 'utf8')).toBe(standIn('kubeadm'));
    expect(read(path.join(root, 'etc/kubernetes-version'))).toBe('v1.36.1\n');
    expect(read(path.join(root, 'etc/systemd/system/kubelet.service.d/10-kubeadm.conf'))).toContain('ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS');
    for (const unit of ['containerd.service', 'kubelet.service', 'chrony.service', 'auditd.service'])
      // The links are absolute, to paths in the root: lstat, not exists (which follows them on this machine).
      expect(lstatSync(path.join(root, 'etc/systemd/system/multi-user.target.wants', unit)).isSymbolicLink(), unit).toBe(true);
    expect(readlinkSync(path.join(root, 'etc/systemd/system/apt-daily.timer'))).toBe('/dev/null');
    // kubectl is Debian's real one: its completion script is the real thing.
    expect(read(path.join(root, 'usr/share/bash-completion/completions/kubectl'))).toContain('__start_kubectl');
    expect(read(path.join(root, 'usr/share/bash-completion/completions/crictl'))).toBe('complete -o default crictl\n');
  });

  it("sets image-builder's sysctls and modules, holds its packages and leaves the root sysprepped", () => {
    const sysctls = read(path.join(root, 'etc/sysctl.d/99-kubernetes.conf'));
    for (const line of ['net.ipv4.ip_forward = 1', 'net.bridge.bridge-nf-call-iptables = 1', 'kernel.panic = 10', 'fs.inotify.max_user_watches = 524288']) expect(sysctls).toContain(line);
    expect(read(path.join(root, 'etc/modules-load.d/k8s.conf')).split('\n').filter(Boolean)).toEqual(['overlay', 'br_netfilter']);
    const status = read(path.join(root, 'var/lib/dpkg/status'));
    for (const pkg of ['chrony', 'libseccomp2', 'cloud-init']) expect(status, pkg).toMatch(new RegExp(`^Package: ${pkg}\\n(?:[^\\n]+\\n)*?Status: hold ok installed$`, 'm'));
    expect(read(path.join(root, 'etc/machine-id'))).toBe('');
    // No list apt fetched is left; apt's own lock, partial/ and auxfiles/ stay (the base promises partial/).
    expect(readdirSync(path.join(root, 'var/lib/apt/lists')).filter((f) => !['partial', 'auxfiles', 'lock'].includes(f))).toEqual([]);
    expect(existsSync(path.join(root, 'var/lib/cloud'))).toBe(false);
    const ssh = path.join(root, 'etc/ssh');
    expect(existsSync(ssh) ? readdirSync(ssh).filter((f) => f.startsWith('ssh_host_')) : []).toEqual([]);
  });
});
