// cloud-init at a real first boot: the source disk (fixtures/source.ts, with
// cloud-init) boots with a NoCloud seed made of `imgc compile --target
// cloud-init`'s user-data and meta-data (fixtures/first-boot.ts). Every step
// runs in the booted node (packages from the mirror through QEMU's user
// network), each webhook reaches a server on the host's 127.0.0.1 (10.0.2.2
// in the guest) with its phase's lifecycle edge, and `verify --boot`'s checks
// of the same definition hold; a step that fails stops runcmd, its phase's
// post hook says result failed, and the boot check names cloud-init's failure.
import { execa } from 'execa';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBoot, type BootResult } from '../../src/verify/boot.js';
import type { Image } from '../../src/ir/schema.js';
import { buildSourceDisk, cannotVm, definitionFile, fixture, hookServer, imgcRun, qemusUsing, tempDir, type SourceDisk } from './packer-support.js';
import { cloneDisk, probe } from './node-support.js';

/** TCG on a loaded 2-core machine: cloud-init's first boot with apt takes minutes. */
const BOOT_SECONDS = 1500;

describe.skipIf(cannotVm)('cloud-init at a first boot: the seed of --target cloud-init on a disk with cloud-init', () => {
  // Made in beforeAll: a skipped file runs no hook that would remove it.
  let work: string;
  let disk: SourceDisk;
  let server: Awaited<ReturnType<typeof hookServer>>;
  const boots: Record<string, { ir: Image; r: BootResult; userData: string }> = {};

  /** Compiles the fixture as `name`, seeds a clone of the source disk with it and boots it with verify --boot's checks. */
  const firstBoot = async (name: string, fail: boolean) => {
    const def = definitionFile(
      work,
      name,
      `import { firstBoot } from ${JSON.stringify(fixture('first-boot.ts'))};\nexport default firstBoot(${JSON.stringify(name)}, { url: ${JSON.stringify(`http://10.0.2.2:${server.port}/hook`)}, fail: ${fail} });\n`,
    );
    const out = path.join(work, `${name}-seed`);
    const c = await imgcRun(['compile', def, '--no-typecheck', '--target', 'cloud-init', '--out', out]);
    if (c.exitCode !== 0) throw new Error(`imgc compile failed:\n${c.all}`);
    const seed = path.join(work, `${name}-seed.iso`);
    await execa('cloud-localds', [seed, path.join(out, 'user-data'), path.join(out, 'meta-data')]);
    const ir = JSON.parse((await imgcRun(['ir', '--no-typecheck', def])).stdout) as Image;
    const clone = path.join(work, `${name}.raw`);
    await cloneDisk(disk.file, clone, '3G');
    const checks = [probe('runcmd-output', "grep -c '\"phase\":\"customize\"' /var/log/cloud-init-output.log"), probe('marker', 'cat /opt/first-boot/marker.json 2>/dev/null || echo none')];
    const started = Date.now();
    const r = await verifyBoot(ir, clone, { timeoutSeconds: BOOT_SECONDS, consoleLog: path.join(work, `${name}-console.log`), scratch: work, inPlace: true, seed, checks, openNetwork: true });
    console.log(`${name}: first boot checked in ${((Date.now() - started) / 1000).toFixed(0)}s (${r.accel})`);
    boots[name] = { ir, r, userData: path.join(out, 'user-data') };
  };

  beforeAll(async () => {
    work = tempDir('vm-cloud-init');
    server = await hookServer();
    disk = await buildSourceDisk();
    // One after the other: each takes a core under TCG, and the builds of other files need the other.
    await firstBoot('imgc-first-boot', false);
    await firstBoot('imgc-first-boot-fail', true);
  }, 3_600_000);

  afterAll(async () => {
    await server?.close();
  });

  it("every step ran at the first boot and verify --boot's checks of the definition hold", () => {
    const { r } = boots['imgc-first-boot']!;
    expect(r.failures, JSON.stringify(r.failures)).toEqual([]);
    // The definition's runtime facts (user, group, jq's command, the sysctl and the module in effect, …) were checked, and
    // cloud-init's status: the sysctl and the module held (runcmd applies them now: before, they waited for the next boot).
    expect(r.checked).toBeGreaterThanOrEqual(10);
    expect(JSON.parse(r.printed['marker']!)).toEqual({ ok: true });
    // The event hook printed its JSON line to cloud-init's output log.
    expect(Number(r.printed['runcmd-output'])).toBeGreaterThanOrEqual(1);
  });

  it("the webhooks reached the host's server with provision's lifecycle edge", () => {
    const mine = server.requests.map((q) => q.body).filter((b) => b['image'] === 'imgc-first-boot');
    expect(mine.map((b) => `${b['phase']} ${b['when']} ${b['result']}`), JSON.stringify(server.requests)).toEqual(['provision pre starting', 'provision post ok']);
    for (const b of mine) expect(b).toMatchObject({ edge: { from: 'customized', to: 'provisioned' } });
  });

  it("a failing step stops runcmd: provision's post hook says failed, and the boot check names cloud-init", () => {
    const { r } = boots['imgc-first-boot-fail']!;
    const mine = server.requests.map((q) => q.body).filter((b) => b['image'] === 'imgc-first-boot-fail');
    expect(mine.map((b) => `${b['phase']} ${b['when']} ${b['result']}`), JSON.stringify(server.requests)).toEqual(['provision pre starting', 'provision post failed']);
    expect(mine[1]!['message']).toMatch(/a step of phase provision failed/);
    expect(r.failures.length, JSON.stringify(r)).toBeGreaterThan(0);
    // cloud-init's last stage, whose runcmd stopped: cloud-final.service failed at boot.
    expect(JSON.stringify(r.failures)).toMatch(/cloud-final\.service/);
    // The step after the failure never ran.
    expect(r.printed['marker']).toBe('none');
  });

  it('leaves no QEMU behind', async () => {
    expect(await qemusUsing(work)).toEqual([]);
  });
});
