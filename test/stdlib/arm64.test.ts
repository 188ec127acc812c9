// An arm64 base (issue 38): its facts are an arm64 root's, its catalog and
// archive are arm64's, and bootable() of the other architecture is caught by
// the checker, not by a build that fails to boot.
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { image } from '../../src/index.js';
import { bootFiles } from '../../src/core/boot.js';
import { debian12 } from '../../stdlib/bases.js';
import { aptCatalog, aptCatalogArm64 } from '../../stdlib/catalog.js';
import { bootable, containerd, crictl, kubernetes, kubernetesCni } from '../../stdlib/modules.js';

const include = ['systemd', 'systemd-sysv', 'kmod'] as const;
// Each base with each bootable(): literal architectures, as a definition writes them.
const raw = { size: '2G', bootable: true } as const;
const disks = {
  'arm64/arm64': () => image('a').base(debian12({ arch: 'arm64', include: [...include] })).provision((p) => p.use(bootable({ arch: 'arm64' }))).artifact((a) => a.raw('disk.raw', raw)),
  'amd64/amd64': () => image('b').base(debian12({ arch: 'amd64', include: [...include] })).provision((p) => p.use(bootable({ arch: 'amd64' }))).artifact((a) => a.raw('disk.raw', raw)),
  'arm64/amd64': () => image('c').base(debian12({ arch: 'arm64', include: [...include] })).provision((p) => p.use(bootable())).artifact((a) => a.raw('disk.raw', raw)),
  'amd64/arm64': () => image('d').base(debian12({ include: [...include] })).provision((p) => p.use(bootable({ arch: 'arm64' }))).artifact((a) => a.raw('disk.raw', raw)),
};
const disk = (which: keyof typeof disks) => disks[which]().toIR('n.ts');

describe('an arm64 Debian 12 base', () => {
  it("has an arm64 root's facts, read from one (npm run gen:bases), and says its architecture in the IR", () => {
    const ir = debian12({ arch: 'arm64' }).ir;
    const paths = new Set(ir.provides.filter((f) => f.kind === 'path').map((f) => f.key));
    expect(ir.arch).toBe('arm64');
    expect(paths.has('/usr/lib/aarch64-linux-gnu')).toBe(true);
    expect(paths.has('/usr/lib/x86_64-linux-gnu')).toBe(false);
    expect(paths.has('/usr/lib64')).toBe(false);
    // amd64 is what a base without an architecture has always been: the IR says nothing.
    expect(debian12().ir.arch).toBeUndefined();
    expect(debian12({ arch: 'amd64' }).ir).toEqual(debian12().ir);
  });

  it("knows each architecture's kernel and systemd-boot binary, the ones a bootable disk requires", () => {
    expect(aptCatalogArm64['systemd-boot-efi'].paths).toEqual([bootFiles('arm64').loader]);
    expect(aptCatalog['systemd-boot-efi'].paths).toEqual([bootFiles('amd64').loader]);
    expect(aptCatalogArm64['linux-image-arm64'].paths).toContain(bootFiles('arm64').kernel);
    expect('linux-image-amd64' in aptCatalogArm64).toBe(false);
  });

  it('a bootable disk of the base architecture checks clean on both', () => {
    expect(checkImage(disk('arm64/arm64'))).toEqual([]);
    expect(checkImage(disk('amd64/amd64'))).toEqual([]);
  });

  it("bootable() of the other architecture is IMGC0017 at its kernel package, with the base's own as the suggestion", () => {
    const onArm = checkImage(disk('arm64/amd64'));
    expect(onArm.map((d) => d.code)).toContain('IMGC0017');
    const kernel = onArm.find((d) => d.code === 'IMGC0017')!;
    expect(kernel.message).toMatch(/linux-image-amd64.*arm64/);
    expect(`${kernel.message} ${kernel.hint ?? ''}`).toContain('linux-image-arm64');
    const onAmd = checkImage(disk('amd64/arm64'));
    expect(onAmd.find((d) => d.code === 'IMGC0017')?.message).toMatch(/linux-image-arm64/);
  });
});

describe('release downloads by architecture', () => {
  const sum = (c: string) => c.repeat(64);
  // Each architecture's tarball with its own sum, picked by the module's arch (a matrix's v.arch).
  const node = (arch: 'amd64' | 'arm64') =>
    image(`n-${arch}`)
      .base(debian12({ arch, include: ['curl', 'ca-certificates'] }))
      .provision((p) =>
        p
          .use(
            containerd({
              source: 'release',
              arch,
              url: { amd64: 'http://127.0.0.1/containerd-linux-amd64.tar.gz', arm64: 'http://127.0.0.1/containerd-linux-arm64.tar.gz' },
              sha256: { amd64: sum('a'), arm64: sum('b') },
              runc: { url: { amd64: 'http://127.0.0.1/runc.amd64', arm64: 'http://127.0.0.1/runc.arm64' }, sha256: { amd64: sum('c'), arm64: sum('d') } },
            }),
          )
          .use(crictl({ arch, url: `http://127.0.0.1/crictl-linux-${arch}.tar.gz`, sha256: { amd64: sum('e'), arm64: sum('f') } }))
          .use(kubernetesCni({ arch, url: `http://127.0.0.1/cni-plugins-linux-${arch}.tgz`, sha256: { amd64: sum('1'), arm64: sum('2') } }))
          .use(kubernetes({ source: 'release', arch, version: '1.31.0', baseUrl: 'http://127.0.0.1/release', sha256: { kubeadm: { amd64: sum('3'), arm64: sum('4') }, kubelet: sum('5'), kubectl: { amd64: sum('6'), arm64: sum('7') } } })),
      )
      .toIR('n.ts');
  const fetches = (arch: 'amd64' | 'arm64') =>
    node(arch)
      .phases.flatMap((ph) => ph.steps)
      .filter((s) => s.kind === 'archive' || s.kind === 'download')
      .map((s) => [(s as { url: string }).url, (s as { sha256: string }).sha256]);

  it("takes each architecture's URL and sum, and a value given once for both", () => {
    expect(fetches('amd64')).toEqual([
      ['http://127.0.0.1/containerd-linux-amd64.tar.gz', sum('a')],
      ['http://127.0.0.1/runc.amd64', sum('c')],
      ['http://127.0.0.1/crictl-linux-amd64.tar.gz', sum('e')],
      ['http://127.0.0.1/cni-plugins-linux-amd64.tgz', sum('1')],
      ['http://127.0.0.1/release/v1.31.0/bin/linux/amd64/kubeadm', sum('3')],
      ['http://127.0.0.1/release/v1.31.0/bin/linux/amd64/kubelet', sum('5')],
      ['http://127.0.0.1/release/v1.31.0/bin/linux/amd64/kubectl', sum('6')],
    ]);
    expect(fetches('arm64')).toEqual([
      ['http://127.0.0.1/containerd-linux-arm64.tar.gz', sum('b')],
      ['http://127.0.0.1/runc.arm64', sum('d')],
      ['http://127.0.0.1/crictl-linux-arm64.tar.gz', sum('f')],
      ['http://127.0.0.1/cni-plugins-linux-arm64.tgz', sum('2')],
      ['http://127.0.0.1/release/v1.31.0/bin/linux/arm64/kubeadm', sum('4')],
      ['http://127.0.0.1/release/v1.31.0/bin/linux/arm64/kubelet', sum('5')],
      ['http://127.0.0.1/release/v1.31.0/bin/linux/arm64/kubectl', sum('7')],
    ]);
  });

  it('refuses an architecture the table has no entry for, at the call, naming the module and the field', () => {
    const call = () => crictl({ arch: 'arm64', url: 'http://127.0.0.1/crictl.tar.gz', sha256: { amd64: sum('e') } });
    expect(call).toThrow("crictl(): sha256 has no entry for arm64 (it has amd64); give one per architecture the image is built for");
    expect(call).toThrow(expect.objectContaining({ name: 'DefinitionError' }));
    expect(() => containerd({ source: 'release', url: { arm64: 'http://x/c.tgz' }, sha256: sum('a'), runc: { url: 'http://x/runc', sha256: sum('c') } })).toThrow(/containerd\(\): url has no entry for amd64 \(it has arm64\)/);
  });
});
