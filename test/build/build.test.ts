// Real builds of small definitions (shell target): the phase cache, a failing
// step, an interrupt, and verify catching a tampered root. They share the
// cached debootstrap with the node-image test (same package set).
import { execa } from 'execa';
import { appendFileSync, chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { cannotBuild, failedLogs, imgcRun, mountsContaining, outDir, read, summaryOf } from './helpers.js';

const small = 'test/build/fixtures/small.ts';

describe.skipIf(cannotBuild)('imgc build (shell target, small definitions)', () => {
  const out = outDir('small');
  let first: Awaited<ReturnType<typeof imgcRun>>;

  beforeAll(async () => {
    // --no-cache: the root phases run for real even when an earlier run cached them.
    first = await imgcRun(['build', small, '--no-typecheck', '--out', out, '--no-cache']);
  }, 1_200_000);

  it('builds, runs every step, and publishes the artifacts with a manifest', () => {
    expect(first.exitCode, first.all).toBe(0);
    const s = summaryOf(out);
    expect(s.ok).toBe(true);
    expect(s.phases.map((p) => [p.name, p.cached])).toEqual([
      ['customize', false],
      ['provision', false],
      ['artifact', false],
      ['verify', false],
    ]);
    expect(s.phases[0]!.steps.map((x) => x.status)).toEqual(Array(6).fill('changed'));
    // The verify phase's raw check ran in the root, besides imgc's own checks.
    expect(s.phases[3]!.steps.map((x) => x.id).sort()).toEqual(['verify.1.verify', 'verify.2.verify', 'verify.3.verify', 'verify.4.command']);
    for (const f of ['rootfs/etc/passwd', 'rootfs.tar.gz', 'disk.raw', 'manifest.json', 'SHA256SUMS', 'logs/01-customize.log', 'logs/01-customize/customize.2.user.log', 'compiled/phases/01-customize.sh']) {
      expect(existsSync(path.join(out, f)), f).toBe(true);
    }
    // Nothing staged is left; what the next build may reuse is recorded.
    expect(readdirSync(out).filter((f) => f.startsWith('.imgc-')).sort()).toEqual(['.imgc-artifacts.json']);
    // This image's own: imgc-test-small-reuse (test/build/plan.test.ts) may be building beside it at the same time.
    expect(readdirSync(path.dirname(out)).filter((f) => /^\.imgc-work-imgc-test-small-[A-Za-z0-9]{6}$/.test(f))).toEqual([]);
    const manifest = JSON.parse(read(path.join(out, 'manifest.json')));
    expect(manifest.artifacts.map((a: { output: string }) => a.output)).toEqual(['rootfs', 'rootfs.tar.gz', 'disk.raw']);
    expect(manifest.definition.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.facts).toContainEqual({ kind: 'user', key: 'ops' });
    expect(manifest.verify).toEqual({ checked: expect.any(Number), failed: 0 });
    expect(read(path.join(out, 'SHA256SUMS'))).toMatch(/^[0-9a-f]{64} {2}rootfs\.tar\.gz\n[0-9a-f]{64} {2}disk\.raw\n$/);
  });

  it('lays the files down exactly: owners, modes, content, links, the script hook', () => {
    const root = path.join(out, 'rootfs');
    const passwd = read(path.join(root, 'etc/passwd'));
    expect(passwd).toMatch(/^ops:x:\d+:\d+::\/home\/ops:\/bin\/bash$/m);
    expect(read(path.join(root, 'etc/group'))).toMatch(/^admins:x:\d+:ops$/m);
    expect(readFileSync(path.join(root, 'srv/app/config'), 'utf8')).toBe('a "quoted" $value `tick` ${x}\nno trailing newline');
    expect(read(path.join(root, 'etc/sysctl.d/99-test.conf'))).toBe('net.ipv4.ip_forward = 1\n');
    expect(read(path.join(root, 'etc/modules-load.d/test.conf'))).toBe('overlay\n');
    expect(existsSync(path.join(root, 'var/tmp/imgc-pre-hook'))).toBe(true);
    // Nothing of the build is left in the root.
    for (const gone of ['usr/sbin/policy-rc.d', 'etc/resolv.conf', 'run/imgc']) expect(existsSync(path.join(root, gone)), gone).toBe(false);
  });

  it('verify passes on the dir artifact and on the raw image', async () => {
    const dir = await imgcRun(['verify', small, '--no-typecheck', '--root', path.join(out, 'rootfs')]);
    expect(dir.exitCode, dir.all).toBe(0);
    expect(dir.stdout).toMatch(/\d+ facts checked, all hold/);
    const raw = await imgcRun(['verify', small, '--no-typecheck', '--image', path.join(out, 'disk.raw')]);
    expect(raw.exitCode, raw.all).toBe(0);
  });

  it('--from-tar starts from the tar artifact: owners and modes survive, and every step is unchanged', async () => {
    const again = outDir('small-from-tar');
    const r = await imgcRun(['build', 'test/build/fixtures/small-tar.ts', '--no-typecheck', '--out', again, '--from-tar', path.join(out, 'rootfs.tar.gz'), '--no-cache']);
    expect(r.exitCode, r.all).toBe(0);
    const s = summaryOf(again);
    expect(s.base.source).toMatch(/^from .*rootfs\.tar\.gz$/);
    const steps = s.phases.filter((p) => p.kind === 'root').flatMap((p) => p.steps);
    expect(steps).toHaveLength(10);
    expect(steps.filter((x) => x.status !== 'unchanged')).toEqual([]);
    expect(s.verify?.failed).toBe(0);
  }, 600_000);

  it('--until artifact: the artifacts, and a manifest that says where the build stopped (no verify ran)', async () => {
    const cut = outDir('small-until-artifact');
    const r = await imgcRun(['build', small, '--no-typecheck', '--out', cut, '--until', 'artifact']);
    expect(r.exitCode, r.all).toBe(0);
    expect(summaryOf(cut).phases.map((p) => p.name)).toEqual(['customize', 'provision', 'artifact']);
    const manifest = JSON.parse(read(path.join(cut, 'manifest.json'))) as { until?: string; verify: unknown; artifacts: { output: string }[] };
    expect(manifest).toMatchObject({ until: 'artifact', verify: null });
    expect(manifest.artifacts.map((a) => a.output)).toEqual(['rootfs', 'rootfs.tar.gz', 'disk.raw']);
    // The whole build's manifest says nothing of --until.
    expect(JSON.parse(read(path.join(out, 'manifest.json')))).not.toHaveProperty('until');
  }, 600_000);

  it("the ansible target on a root whose python3 cannot import apt's binding installs it before the play", async () => {
    // A root with python3 but not python3-apt (cloud-init brings python3): package_facts failed there,
    // "Could not detect a supported package manager". Here python3 is a stand-in that imports nothing.
    const root = path.join(outDir('small-python-no-apt'), 'root');
    await execa('cp', ['-a', path.join(out, 'rootfs'), root]);
    writeFileSync(path.join(root, 'usr/bin/python3'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const again = outDir('small-ansible-on-python');
    const r = await imgcRun(['build', small, '--no-typecheck', '--target', 'ansible', '--out', again, '--from-dir', root, '--no-cache', '--until', 'customize']);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('ansible-playbook: installing python3, python3-apt into the root with apt');
    const s = summaryOf(again);
    expect(s.ok).toBe(true);
    expect(s.phases.map((p) => [p.name, p.recap?.failed])).toEqual([['customize', 0]]);
  }, 600_000);

  it('verify names the fact and the step when the root was tampered with', async () => {
    const root = path.join(out, 'rootfs');
    const passwd = path.join(root, 'etc/passwd');
    writeFileSync(passwd, read(passwd).replace(/^ops:.*\n/m, ''));
    chmodSync(path.join(root, 'srv/app/config'), 0o644);
    const r = await imgcRun(['verify', small, '--no-typecheck', '--root', root]);
    expect(r.exitCode, r.all).toBe(1);
    expect(r.stdout).toMatch(/fixtures\/small\.ts:13:\d+ - verify failed customize\.2\.user: user 'ops': no line for 'ops' in \/etc\/passwd/);
    expect(r.stdout).toMatch(/fixtures\/small\.ts:15:\d+ - verify failed customize\.4\.file: file \/srv\/app\/config: \/srv\/app\/config: mode is 0644, not 0640/);
    // Owned by a user that no longer exists: the directory's owner fails too.
    expect(r.stdout).toMatch(/customize\.3\.directory: directory \/srv\/app: .*owner 'ops' has no \/etc\/passwd entry/);
    const json = JSON.parse((await imgcRun(['verify', small, '--no-typecheck', '--root', root, '--format', 'json'])).stdout);
    expect(json.failures.map((f: { stepId: string }) => f.stepId)).toEqual(expect.arrayContaining(['customize.2.user', 'customize.4.file']));
  });

  it('changing only the artifact phase rebuilds only the artifact phase', async () => {
    const other = outDir('small-tar');
    const r = await imgcRun(['build', 'test/build/fixtures/small-tar.ts', '--no-typecheck', '--out', other]);
    expect(r.exitCode, r.all).toBe(0);
    const s = summaryOf(other);
    expect(s.base.cached).toBe(true);
    expect(s.phases.map((p) => [p.name, p.cached])).toEqual([
      ['customize', true],
      ['provision', true],
      ['artifact', false],
      ['verify', false],
    ]);
    expect(existsSync(path.join(other, 'other.tar.zst'))).toBe(true);
  }, 600_000);

  it('a rebuild into the same directory takes the unpacked root from the cache and keeps the artifacts whose input did not change', async () => {
    const out = outDir('small-reuse');
    const build = async (fixture: string) => {
      const r = await imgcRun(['build', `test/build/fixtures/${fixture}`, '--no-typecheck', '--out', out]);
      expect(r.exitCode, r.all).toBe(0);
      const s = summaryOf(out);
      return { all: r.all, baseLog: read(path.join(out, 'logs/00-base.log')), status: Object.fromEntries(s.phases[2]!.steps.map((x) => [x.id, x.status])) };
    };
    const first = await build('small-reuse.ts');
    expect(first.all).toMatch(/kept the root unpacked in the cache/);
    expect(Object.values(first.status)).toEqual(['changed', 'changed', 'changed']);
    const inodes = () => ['rootfs', 'rootfs.tar.gz'].map((f) => statSync(path.join(out, f)).ino);
    const madeFirst = inodes();

    // Only the raw image's size changed: the root is taken unpacked, rootfs and the tarball are kept.
    const second = await build('small-reuse-2g.ts');
    expect(second.baseLog).toMatch(/took the unpacked root after provision from the cache/);
    expect(second.status).toEqual({ 'artifact.1.artifact': 'unchanged', 'artifact.2.artifact': 'unchanged', 'artifact.3.artifact': 'changed' });
    expect(inodes(), 'the kept artifacts were left in place, not copied or linked anew').toEqual(madeFirst);
    const sums = await execa('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out, reject: false });
    expect(sums.exitCode, sums.stdout + sums.stderr).toBe(0);
    expect(statSync(path.join(out, 'disk.raw')).size).toBe(2 * 1024 ** 3);
    const manifest = JSON.parse(read(path.join(out, 'manifest.json')));
    expect(manifest.artifacts.map((a: { output: string; size?: string }) => [a.output, a.size])).toEqual([['rootfs', undefined], ['rootfs.tar.gz', undefined], ['disk.raw', '2G']]);
    const verified = await imgcRun(['verify', 'test/build/fixtures/small-reuse-2g.ts', '--no-typecheck', '--root', path.join(out, 'rootfs')]);
    expect(verified.exitCode, verified.all).toBe(0);

    // A written artifact is made again, not kept.
    const config = path.join(out, 'rootfs/srv/app/config');
    appendFileSync(config, 'tampered');
    const third = await build('small-reuse-2g.ts');
    expect(third.status).toEqual({ 'artifact.1.artifact': 'changed', 'artifact.2.artifact': 'unchanged', 'artifact.3.artifact': 'unchanged' });
    expect(readFileSync(config, 'utf8')).not.toMatch(/tampered$/);
    expect(readdirSync(out).filter((f) => f.startsWith('.imgc-staging-') || f.includes('.old-'))).toEqual([]);
  }, 600_000);
});

describe.skipIf(cannotBuild)('imgc build of a failing step', () => {
  it('unmounts everything, removes the work root, and publishes no artifact', async () => {
    const out = outDir('failing');
    const r = await imgcRun(['build', 'test/build/fixtures/failing.ts', '--no-typecheck', '--out', out, '--no-cache']);
    expect(r.exitCode, r.all).toBe(1);
    expect(r.all).toMatch(/fixtures\/failing\.ts:10:\d+ - phase customize: step customize\.2\.command failed \(exit 3\)/);
    // Its logs stay in a folder of its own (runs/ID), named in the message; logs/ is for a published build's.
    const logs = failedLogs(out);
    expect(r.all).toContain(`log: ${path.relative(repoRoot, logs)}/01-customize/customize.2.command.log`);
    // The step ran with /proc, /sys, /dev mounted (needsMounts): none of it is left.
    expect(read(path.join(logs, '01-customize.log'))).toMatch(/mounted .*\/root\/proc/);
    expect(mountsContaining('.imgc-work-imgc-test-failing-')).toEqual([]);
    expect(readdirSync(path.dirname(out)).filter((f) => f.startsWith('.imgc-work-imgc-test-failing-'))).toEqual([]);
    const left = readdirSync(out).sort();
    expect(left, 'a failed build publishes nothing, and keeps its logs in runs/').toEqual(['runs']);
    const s = summaryOf(out);
    expect(s.ok).toBe(false);
    expect(s.phases[0]!.steps).toEqual([
      { id: 'customize.1.file', status: 'changed', ms: expect.any(Number) },
      { id: 'customize.2.command', status: 'failed', ms: expect.any(Number) },
    ]);
  }, 600_000);

  it('refuses a SOURCE_DATE_EPOCH that is not a number of seconds before it starts, naming it', async () => {
    const out = outDir('bad-epoch');
    const r = await imgcRun(['build', 'test/build/fixtures/failing.ts', '--no-typecheck', '--out', out], { env: { SOURCE_DATE_EPOCH: 'yesterday' } });
    expect(r.exitCode, r.all).toBe(1);
    expect(r.all).toMatch(/SOURCE_DATE_EPOCH must be a number of seconds \(got 'yesterday'\)/);
    expect(r.all).not.toMatch(/    at |Please report this/);
    expect(readdirSync(out)).toEqual([]);
  }, 120_000);

  it('unmounts everything when interrupted with SIGINT mid-step', async () => {
    const out = outDir('slow');
    const child = imgcRun(['build', 'test/build/fixtures/slow.ts', '--no-typecheck', '--out', out, '--no-cache']);
    const deadline = Date.now() + 300_000;
    while (mountsContaining('.imgc-work-imgc-test-slow-').length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(mountsContaining('.imgc-work-imgc-test-slow-').length).toBe(4);
    // The node driver process (execa's child) gets the signal, as from Ctrl-C or a CI cancel.
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, r.all).toBe(130);
    expect(r.all).toMatch(/interrupted by SIGINT; nothing is left mounted/);
    expect(mountsContaining('.imgc-work-imgc-test-slow-')).toEqual([]);
    expect(readdirSync(path.dirname(out)).filter((f) => f.startsWith('.imgc-work-imgc-test-slow-'))).toEqual([]);
    expect(readdirSync(out).filter((f) => f.endsWith('.tar.gz'))).toEqual([]);
  }, 600_000);
});
