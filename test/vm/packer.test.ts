// `packer build` for real (Debian's packer 1.6.6, its qemu builder; KVM when
// it works, else TCG) of imgc's Packer output, from one source disk imgc
// builds once (fixtures/source.ts): Packer gets in through imgc's NoCloud seed
// with a key pair made for the test, runs every phase (with the shell
// provisioner across a reboot, and sysprep() before verify; with the ansible
// one; both start and stop a service in the VM), and its qcow2 passes `imgc verify --image` and `--boot` against the
// same definition, with no build user, key or seed left in it. A phase that
// fails makes Packer fail with the step's id and message; success, failure
// and Ctrl-C leave no QEMU, mount or seed ISO behind.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cannotVm,
  buildSourceDisk,
  definitionFile,
  fixture,
  hookServer,
  imgcRun,
  isosIn,
  listInImage,
  mountsContaining,
  packerBuild,
  qemusUsing,
  readFromImage,
  seedVars,
  tempDir,
  type PackerRun,
  type SourceDisk,
} from './packer-support.js';

type Build = PackerRun & { dir: string; def: string; image: string; tmp: string };

describe.skipIf(cannotVm)('packer build in a VM from imgc’s disk (qemu builder, NoCloud seed)', () => {
  let disk: SourceDisk;
  let server: Awaited<ReturnType<typeof hookServer>>;
  // Made in beforeAll: a skipped file runs no hook that would remove it.
  let work: string;
  const builds: Record<string, Build> = {};

  /** Compiles the fixture with `opts` (a JS object literal) and runs packer build on it. */
  const build = async (name: string, opts: string, compileFlags: string[], signal?: AbortSignal): Promise<Build> => {
    const def = definitionFile(work, name, `import { vmNode } from ${JSON.stringify(fixture('packer-node.ts'))};\nexport default vmNode(${JSON.stringify(name)}, ${opts});\n`);
    const dir = path.join(work, `${name}-out`);
    const c = await imgcRun(['compile', def, '--no-typecheck', '--target', 'packer', '--packer-version', '1.6', '--out', dir, ...compileFlags]);
    if (c.exitCode !== 0) throw new Error(`imgc compile failed:\n${c.all}`);
    const tmp = tempDir(`vm-packer-tmp-${name}`);
    const r = await packerBuild(dir, seedVars('vm', disk), tmp, signal ? { signal } : {});
    return { dir, def, ...r, image: path.join(dir, 'output-vm', `${name}.qcow2`), tmp };
  };

  beforeAll(async () => {
    work = tempDir('vm-packer');
    server = await hookServer();
    disk = await buildSourceDisk();
    const url = server.url('/hook');
    builds['shell'] = await build('imgc-vm-shell', `{ url: ${JSON.stringify(url)}, reboot: true }`, []);
    builds['ansible'] = await build('imgc-vm-ansible', `{ url: ${JSON.stringify(url)} }`, ['--provisioner', 'ansible']);
  }, 3_600_000);

  afterAll(async () => {
    await server?.close();
  });

  for (const provisioner of ['shell', 'ansible'] as const) {
    describe(`--provisioner ${provisioner}`, () => {
      it('packer build goes through every phase and writes the qcow2', () => {
        const b = builds[provisioner]!;
        expect(b.code, b.out).toBe(0);
        expect(existsSync(b.image), b.out).toBe(true);
        // Packer's own steps show the way in and the firmware.
        expect(b.out).toMatch(/Creating CD disk/);
        // The machine came back from the reboot between provision's two parts: another boot id.
        if (provisioner === 'shell') {
          const before = /imgc: rebooting \(boot ([0-9a-f-]{36})\)/.exec(b.out)?.[1];
          const after = /imgc: back \(boot ([0-9a-f-]{36})\)/.exec(b.out)?.[1];
          expect(before, b.out).toBeDefined();
          expect(after, b.out).toBeDefined();
          expect(after).not.toBe(before);
        }
      });

      it('the image passes imgc verify --image and --boot against the same definition', async () => {
        const b = builds[provisioner]!;
        const image = await imgcRun(['verify', b.def, '--no-typecheck', '--image', b.image]);
        expect(image.exitCode, image.all).toBe(0);
        const boot = await imgcRun(['verify', b.def, '--no-typecheck', '--boot', b.image, '--boot-timeout', '900']);
        expect(boot.exitCode, boot.all).toBe(0);
      }, 1_200_000);

      it('ships no build user, key, seed, cloud-init state or build directory', async () => {
        const b = builds[provisioner]!;
        const files = await readFromImage(b.image, ['etc/passwd', 'etc/group', 'etc/shadow', 'etc/sudoers.d/90-cloud-init-users', 'var/log/cloud-init.log']);
        expect(files['etc/passwd']).toMatch(/^vmuser:/m);
        expect(files['etc/passwd']).not.toMatch(/imgc-build/);
        expect(files['etc/group']).not.toMatch(/imgc-build/);
        expect(files['etc/shadow']).not.toMatch(/imgc-build/);
        expect(files['etc/sudoers.d/90-cloud-init-users']).toBeUndefined();
        expect(files['var/log/cloud-init.log']).toBeUndefined();
        const dirs = await listInImage(b.image, ['home', 'var/lib/cloud', 'var/lib/imgc-build', 'root/.ssh']);
        expect(dirs['home']).toEqual(['vmuser']);
        expect(dirs['var/lib/cloud']).toBeUndefined();
        expect(dirs['var/lib/imgc-build']).toBeUndefined();
        expect(dirs['root/.ssh'] ?? []).not.toContain('authorized_keys');
      }, 600_000);
    });
  }

  it('a service was started and stopped in the VM (startService, stopService), and neither runs at boot', async () => {
    for (const b of Object.values(builds)) {
      const files = await readFromImage(b.image, ['var/lib/imgc-vm-started', 'var/lib/imgc-vm-stopped']);
      expect(files['var/lib/imgc-vm-started'], b.dir).toMatch(/^[0-9a-f-]{36}\n$/);
      expect(files['var/lib/imgc-vm-stopped'], b.dir).toBe('');
      const wants = await listInImage(b.image, ['etc/systemd/system/multi-user.target.wants']);
      expect(wants['etc/systemd/system/multi-user.target.wants'] ?? [], b.dir).not.toContain('imgc-vm-stamp.service');
    }
  }, 600_000);

  it("the hooks' requests reached the server on 127.0.0.1, with their phases' lifecycle edges", () => {
    const seen = server.requests.map((r) => r.body);
    for (const image of ['imgc-vm-shell', 'imgc-vm-ansible']) {
      const mine = seen.filter((b) => b['image'] === image);
      expect(mine.map((b) => `${b['phase']} ${b['when']} ${b['result']}`), JSON.stringify(seen)).toEqual(['customize pre starting', 'customize post ok', 'provision post ok']);
      expect(mine[0]).toMatchObject({ edge: { from: 'base', to: 'customized' } });
      expect(mine[2]).toMatchObject({ edge: { from: 'customized', to: 'provisioned' } });
      for (const b of mine) expect(b).not.toHaveProperty('hosts');
    }
    // The event went to Packer's output, the script hook ran in the VM (verify --image checks its file).
    expect(builds['shell']!.out).toMatch(/"phase":"provision","edge":\{"from":"customized","to":"provisioned"\},"when":"pre"/);
  });

  it('a phase that fails makes packer build fail with the step id and message; Ctrl-C stops a build; neither leaves QEMU, a mount or a seed ISO', async () => {
    const failed = await build('imgc-vm-fail', `{ url: ${JSON.stringify(server.url('/hook'))}, fail: true }`, []);
    expect(failed.code, failed.out).not.toBe(0);
    expect(failed.out).toMatch(/customize\.1\.command/);
    expect(failed.out).toMatch(/this step fails on purpose/);

    const stop = new AbortController();
    const running = build('imgc-vm-interrupted', `{ url: ${JSON.stringify(server.url('/hook'))} }`, [], stop.signal);
    // Stop it once QEMU runs (Packer is waiting for SSH).
    for (let i = 0; i < 600 && (await qemusUsing('vm-packer-tmp-imgc-vm-interrupted')).length === 0; i++) await new Promise((r) => setTimeout(r, 1000));
    stop.abort();
    const interrupted = await running;
    expect(interrupted.code, interrupted.out).not.toBe(0);

    for (const b of [...Object.values(builds), failed, interrupted]) {
      expect(isosIn(b.tmp), b.dir).toEqual([]);
      expect(mountsContaining(b.dir)).toEqual([]);
    }
    // Packer's QEMU boots with its seed ISO from the build's own temp dir: none of this file's is left.
    expect(await qemusUsing('vm-packer-tmp-')).toEqual([]);
    // Nothing of QEMU's left in the directories either (no stale lock on a disk).
    expect((await execa('sh', ['-c', `ls ${work} | grep -c '\\.iso$' || true`])).stdout.trim()).toBe('0');
  }, 1_800_000);
});
