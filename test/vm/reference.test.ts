// The reference example, once for real: `packer build` (Debian's packer
// 1.6.6, the qemu source: the AMI needs AWS) of the template `imgc compile
// --target packer` writes for examples/node-image-debian.ts, given only the
// variables the template marks required, and qemu_iso_url: its default,
// Debian's generic cloud image, is not reachable from these machines, so the
// VM tests' source disk stands in for it (imgc's Debian 12 with cloud-init and
// sshd, fixtures/source.ts). The image ships no build user, key or seed, and
// passes `imgc verify --image` and `--boot` against the same definition. The
// build's wall and CPU time are printed for docs/performance.md.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildKey } from '../compilers/packer-support.js';
import { accelerator, buildSourceDisk, cannotVm, imgcRun, isosIn, listInImage, mountsContaining, packerBuild, qemusUsing, readFromImage, tempDir, type PackerRun } from './packer-support.js';

const example = 'examples/node-image-debian.ts';

describe.skipIf(cannotVm)(`packer build of the reference example (${example})`, () => {
  let dir: string;
  let tmp: string;
  let run: PackerRun;
  let image: string;

  beforeAll(async () => {
    const disk = await buildSourceDisk();
    dir = tempDir('vm-reference');
    const c = await imgcRun(['compile', example, '--target', 'packer', '--packer-version', '1.6', '--out', dir]);
    if (c.exitCode !== 0) throw new Error(`imgc compile failed:\n${c.all}`);
    tmp = tempDir('vm-reference-tmp');
    run = await packerBuild(
      dir,
      {
        // What the template marks required…
        qemu_iso_checksum: `sha256:${disk.sha256}`,
        qemu_ssh_private_key_file: buildKey(),
        // …and a source disk this machine has (the default is on cloud.debian.org).
        qemu_iso_url: disk.file,
        qemu_accelerator: accelerator(),
      },
      tmp,
      { only: 'qemu.qemu' },
    );
    image = path.join(dir, 'output-qemu', 'k8s-node-debian.qcow2');
    console.log(`packer build of ${example} (${accelerator()}): wall ${run.wall.toFixed(0)} s, CPU ${run.cpu.toFixed(0)} s, exit ${run.code}`);
  }, 5_400_000);

  it('builds with the required variables only (and a reachable source disk), through every phase', () => {
    expect(run.code, run.out).toBe(0);
    expect(existsSync(image), run.out).toBe(true);
    // The AMI's source was left out by -only; each phase's event hooks printed their edges.
    expect(run.out).not.toMatch(/amazon-ebs/);
    expect(run.out).toMatch(/"phase":"provision","edge":\{"from":"customized","to":"provisioned"\},"when":"post"/);
  });

  it('ships no build user, key or seed: only the definition\u2019s user and key', async () => {
    const files = await readFromImage(image, ['etc/passwd', 'etc/group', 'etc/shadow', 'home/ops/.ssh/authorized_keys', 'etc/sudoers.d/90-cloud-init-users']);
    expect(files['etc/passwd']).toMatch(/^ops:/m);
    for (const f of ['etc/passwd', 'etc/group', 'etc/shadow']) expect(files[f], f).not.toMatch(/imgc-build/);
    expect(files['home/ops/.ssh/authorized_keys']).toMatch(/^ssh-ed25519 \S+ ops@example\n$/);
    expect(files['etc/sudoers.d/90-cloud-init-users']).toBeUndefined();
    const dirs = await listInImage(image, ['home', 'root/.ssh', 'var/lib/cloud', 'var/lib/imgc-build']);
    expect(dirs['home']).toEqual(['ops']);
    expect(dirs['root/.ssh'] ?? []).not.toContain('authorized_keys');
    expect(dirs['var/lib/cloud']).toBeUndefined();
    expect(dirs['var/lib/imgc-build']).toBeUndefined();
  }, 600_000);

  it('passes imgc verify --image and --boot against the same definition', async () => {
    const onDisk = await imgcRun(['verify', example, '--image', image]);
    expect(onDisk.exitCode, onDisk.all).toBe(0);
    const boot = await imgcRun(['verify', example, '--boot', image, '--boot-timeout', '1200']);
    expect(boot.exitCode, boot.all).toBe(0);
  }, 1_800_000);

  it('leaves no QEMU, mount or seed ISO', async () => {
    expect(isosIn(tmp)).toEqual([]);
    expect(mountsContaining(dir)).toEqual([]);
    expect(await qemusUsing(tmp, dir)).toEqual([]);
  });
});
