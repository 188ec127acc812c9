// `imgc build --plan`: what a build would do, said without doing it. Without
// root: a plan against an empty cache (everything to make), its JSON valid
// against `imgc schema --build-plan`, nothing created; bases made of facts. As root: after one real
// build, plans of changed definitions name the phase and artifacts that would
// be made and the input that changed, and leave the output and cache as they were.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPlanJsonSchema, type BuildPlan } from '../../src/build/plan.js';
import { compileImageSchema } from '../helpers/ajv.js';
import { imgc, imgcProcess, tempDir } from '../helpers/cli.js';
import { cannotBuild, imgcRun, outDir, privateCache, snapshot } from './helpers.js';

const validate = compileImageSchema(buildPlanJsonSchema());
const fixture = (name: string) => `test/build/fixtures/${name}`;

/** Build entries of a cache (the loader keeps its own caches there too: those a plan may write). */
const buildEntries = (name: string) => /^(base|phase|root)-/.test(name);

const planOf = (stdout: string): BuildPlan => {
  const plan = JSON.parse(stdout) as BuildPlan;
  expect(validate(plan), JSON.stringify(validate.errors)).toBe(true);
  return plan;
};

describe('imgc build --plan, against an empty cache', () => {
  const cache = tempDir('plan-cache');
  const out = path.join(tempDir('plan-out'), 'never-made');
  let plan: BuildPlan;
  let exitCode: number | undefined;

  beforeAll(async () => {
    const r = await imgc(['build', fixture('small-reuse.ts'), '--no-typecheck', '--plan', '--format', 'json', '--out', out], { env: { IMGC_CACHE: cache } });
    exitCode = r.exitCode;
    plan = planOf(r.stdout);
  });

  it('is valid against imgc schema --build-plan, which refuses what is not a plan', async () => {
    const r = await imgc(['schema', '--build-plan']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(buildPlanJsonSchema());
    expect(validate({ ...plan, phases: [{ name: 'x', kind: 'root', status: 'maybe', reasons: [], steps: [] }] })).toBe(false);
    // Exit 0 when the build could start, 1 when it would stop before its first phase (not root, a tool missing).
    expect(exitCode).toBe(plan.blockers.length ? 1 : 0);
  });

  it('says the base is laid down fresh and every phase runs, with its steps, artifacts and tools', () => {
    expect(plan).toMatchObject({ image: 'imgc-test-small-reuse', target: 'shell', out, cache });
    expect(plan.base).toMatchObject({ status: 'build', reason: expect.stringMatching(/^no base tarball for this suite, variant, package list and mirror/) });
    expect(plan.phases.map((p) => [p.name, p.kind, p.status])).toEqual([
      ['customize', 'root', 'run'],
      ['provision', 'root', 'run'],
      ['artifact', 'artifact', 'run'],
      ['verify', 'verify', 'run'],
    ]);
    expect(plan.phases[0]!.reasons).toEqual(['the base is laid down fresh: the phases after it are keyed from its tarball once it is made']);
    expect(plan.phases[0]!.steps.map((s) => s.id)).toEqual(['customize.1.group', 'customize.2.user', 'customize.3.directory', 'customize.4.file', 'customize.5.symlink', 'customize.6.file']);
    expect(plan.phases[2]!.artifacts?.map((a) => [a.output, a.status])).toEqual([
      ['rootfs', 'make'],
      ['rootfs.tar.gz', 'make'],
      ['disk.raw', 'make'],
    ]);
    expect(plan.writes).toEqual(['compiled/', 'logs/', 'rootfs/', 'rootfs.tar.gz', 'disk.raw', 'manifest.json', 'sbom.spdx.json', 'SHA256SUMS']);
    expect(plan.caches).toEqual([expect.stringMatching(/^the base tarball/)]);
    expect(plan.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['debootstrap', 'chroot', 'mkfs.ext4', 'gzip']));
    expect(plan.tools.find((t) => t.name === 'mkfs.ext4')?.package).toBe('e2fsprogs');
  });

  it('creates neither the output directory nor anything in the cache', () => {
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(cache).filter(buildEntries)).toEqual([]);
  });

  it('the CLI prints it as text, one line per phase', async () => {
    const r = await imgcProcess(['build', fixture('small-reuse.ts'), '--no-typecheck', '--plan', '--out', out], { env: { IMGC_CACHE: cache, PATH: process.env['PATH'] ?? '' } });
    expect(r.exitCode, r.all).toBe(plan.blockers.length ? 1 : 0);
    expect(r.stdout).toMatch(/^plan: build imgc-test-small-reuse with shell into /);
    expect(r.stdout).toMatch(/\n {2}phase 1 customize: RUN: the base is laid down fresh/);
    expect(r.stdout).toMatch(/\n {6}make disk\.raw \(raw\): /);
    expect(r.stdout).toMatch(/\nnothing was built, mounted or written/);
    expect(existsSync(out)).toBe(false);
  });

  it('--until PHASE: the phases through it and nothing after (no artifact, no tool for one); a phase it lacks, or one for existing hosts, is a usage error', async () => {
    const r = await imgc(['build', fixture('small-reuse.ts'), '--no-typecheck', '--plan', '--format', 'json', '--out', out, '--until', 'provision'], { env: { IMGC_CACHE: cache } });
    const cut = planOf(r.stdout);
    expect(cut.phases.map((p) => [p.name, p.status])).toEqual([
      ['customize', 'run'],
      ['provision', 'run'],
    ]);
    // The same keys as the whole build's: a later full build takes these phases from the cache.
    expect(cut.phases.map((p) => p.key)).toEqual(plan.phases.slice(0, 2).map((p) => p.key));
    expect(cut.writes).toEqual(['compiled/', 'logs/']);
    expect(cut.tools.map((t) => t.name)).not.toContain('mkfs.ext4');
    const typo = await imgc(['build', fixture('small-reuse.ts'), '--no-typecheck', '--plan', '--until', 'provison']);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain("--until: imgc-test-small-reuse has no phase 'provison' (did you mean 'provision'?); its phases: customize, provision, artifact, verify");
    const drain = await imgc(['build', 'test/fixtures/runtime/drain.ts', '--no-typecheck', '--plan', '--until', 'drain']);
    expect(drain.exitCode).toBe(2);
    expect(drain.stderr).toContain("--until: phase 'drain' runs on existing hosts only (imgc compile --runtime), never in imgc build");
  });
});

describe('imgc build --plan of a base made of facts', () => {
  it("another definition's phase: says the build makes that root first; a contract: the build would stop, saying what to give", async () => {
    const dir = tempDir('plan-facts');
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(path.join(dir, 'team.ts'), "import { debian12, image } from 'imgc';\nexport default image('team').base(debian12()).customize((p) => p.group('admins'));\n");
    writeFileSync(
      path.join(dir, 'on-team.ts'),
      "import { fromDefinition, image } from 'imgc';\nimport team from './team.js';\nexport default image('on-team').base(fromDefinition(team, { phase: 'customize' })).provision((p) => p.group('ops'));\n",
    );
    const r = await imgc(['build', 'on-team.ts', '--no-typecheck', '--plan', '--format', 'json', '--out', path.join(dir, 'out')], { cwd: dir, env: { IMGC_CACHE: path.join(dir, 'cache') } });
    const plan = planOf(r.stdout);
    expect(plan.base).toMatchObject({ status: 'build', reason: expect.stringMatching(/^the build makes the root of .*team\.ts after its phase 'customize' first \(its own plan: imgc build --plan /) });
    expect(plan.phases.map((p) => [p.name, p.status, p.reasons])).toEqual([['provision', 'run', ["the base is made first (another definition's root): the phases after it are keyed from it once it is made"]]]);
    expect(plan.blockers.filter((b) => !/needs root/.test(b))).toEqual([]);
    expect(existsSync(path.join(dir, 'out'))).toBe(false);

    const contract = await imgc(['contract', 'team.ts', '--no-typecheck', '--phase', 'customize', '--out', 'team.contract.json'], { cwd: dir });
    expect(contract.exitCode, contract.all).toBe(0);
    writeFileSync(path.join(dir, 'on-contract.ts'), "import { fromContract, image } from 'imgc';\nexport default image('on-contract').base(fromContract('team.contract.json')).provision((p) => p.group('ops'));\n");
    const c = await imgc(['build', 'on-contract.ts', '--no-typecheck', '--plan', '--format', 'json', '--out', path.join(dir, 'out')], { cwd: dir, env: { IMGC_CACHE: path.join(dir, 'cache') } });
    expect(c.exitCode).toBe(1);
    expect(planOf(c.stdout).blockers).toContainEqual(expect.stringMatching(/it holds facts, not a root\. Start from that image's root: --from-tar FILE or --from-dir DIR/));
  });
});

describe.skipIf(cannotBuild)('imgc build --plan after a build', () => {
  const out = outDir('plan');
  const cache = privateCache('plan');
  const env = { IMGC_CACHE: cache };
  const plan = async (def: string, more: { env?: Record<string, string> } = {}) => {
    const r = await imgcRun(['build', def, '--no-typecheck', '--plan', '--format', 'json', '--out', out], { env: { ...env, ...more.env } });
    expect(r.exitCode, r.all).toBe(0);
    return planOf(r.stdout);
  };
  /** A definition of the same image whose customize phase is `chain` (of p) and has no other phase. */
  const definition = (name: string, chain: string): string => {
    const file = path.join(tempDir(`plan-${name}`), `${name}.ts`);
    const lines = [
      "import { debian12, image } from 'imgc';",
      "export default image('imgc-test-small-reuse')",
      "  .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] }))",
      `  .customize((p) => ${chain});`,
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  };
  const status = (p: BuildPlan) => p.phases.map((x) => [x.name, x.status]);

  beforeAll(async () => {
    const b = await imgcRun(['build', fixture('small-reuse.ts'), '--no-typecheck', '--out', out], { env });
    expect(b.exitCode, b.all).toBe(0);
  }, 1_200_000);

  it('only a phase-3 setting changed: the root phases are cached, only the changed artifact is made, nothing is touched', async () => {
    const before = [snapshot(out), snapshot(cache, buildEntries)];
    const p = await plan(fixture('small-reuse-2g.ts'));
    expect(p.base.status).toBe('cached');
    expect(status(p)).toEqual([
      ['customize', 'cached'],
      ['provision', 'cached'],
      ['artifact', 'run'],
      ['verify', 'run'],
    ]);
    expect(p.phases[2]!.artifacts?.map((a) => [a.output, a.status, a.reason])).toEqual([
      ['rootfs', 'keep', undefined],
      ['rootfs.tar.gz', 'keep', undefined],
      ['disk.raw', 'make', 'its settings (or the root it is made from) changed'],
    ]);
    expect(p.writes).toEqual(['compiled/', 'logs/', 'disk.raw', 'manifest.json', 'sbom.spdx.json', '.imgc-artifacts.json', 'SHA256SUMS']);
    expect(p.caches).toEqual([]);
    expect([snapshot(out), snapshot(cache, buildEntries)]).toEqual(before);
  });

  it('another SOURCE_DATE_EPOCH: the first root phase runs, saying so, and the next because its root is made again', async () => {
    const p = await plan(fixture('small-reuse.ts'), { env: { SOURCE_DATE_EPOCH: '1700000000' } });
    expect(status(p).slice(0, 2)).toEqual([
      ['customize', 'run'],
      ['provision', 'run'],
    ]);
    expect(p.phases[0]!.reasons).toEqual(['SOURCE_DATE_EPOCH changed (was unset, now 1700000000)']);
    // The epoch is an input of every phase's key: the second phase names it too.
    expect(p.phases[1]!.reasons).toEqual(['the root it starts from is made again (phase customize runs)', 'SOURCE_DATE_EPOCH changed (was unset, now 1700000000)']);
    expect(p.phases[2]!.artifacts?.every((a) => a.status === 'make' && a.reason === 'phase provision runs: the root is new')).toBe(true);
    expect(p.caches).toEqual([expect.stringMatching(/^the root after customize/), expect.stringMatching(/^the root after provision/)]);
  });

  it('steps changed in phase 1: names the one added, counts those removed, and one changed in place by its id', async () => {
    const def = definition('added', "p.group('admins').group('ops')");
    const p = await plan(def);
    expect(status(p)[0]).toEqual(['customize', 'run']);
    expect(p.phases[0]!.reasons).toEqual(["steps added: customize.2.group (group 'ops')", '5 steps removed']);
    // small.ts's customize phase with one file's content changed.
    const edited = definition(
      'edited',
      [
        "p.group('admins').user('ops', { groups: ['admins', 'sudo'], shell: '/bin/bash' })",
        ".directory('/srv/app', { owner: 'ops', group: 'admins', mode: '0750' })",
        ".file('/srv/app/config', { owner: 'ops', group: 'ops', mode: '0640', content: 'changed' })",
        ".symlink('/srv/current', '/srv/app')",
        ".file('/etc/sudoers.d/admins', { mode: '0440', content: '%admins ALL=(ALL:ALL) NOPASSWD: ALL\\n' })",
      ].join(''),
    );
    expect((await plan(edited)).phases[0]!.reasons).toEqual(["steps changed: customize.4.file (file '/srv/app/config')"]);
  });
});
