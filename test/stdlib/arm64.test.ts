// An arm64 base (issue 38): its facts are an arm64 root's, its catalog and
// archive are arm64's, and bootable() of the other architecture is caught by
// the checker, not by a build that fails to boot.
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { image } from '../../src/index.js';
import { bootFiles } from '../../src/core/boot.js';
import { debian12 } from '../../stdlib/bases.js';
import { aptCatalog, aptCatalogArm64 } from '../../stdlib/catalog.js';
import { bootable } from '../../stdlib/modules.js';

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
