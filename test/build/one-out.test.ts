// One output directory holds one build's truth, and builds of one cache key
// take turns (docs/build-faults.md): a build of a changed definition that is
// interrupted leaves the last good build's compiled files, artifacts,
// manifest and checksums in place, consistent with each other; a second
// build into the same directory meanwhile is refused; two builds of one
// definition and one cache started together make each root phase once, the
// second taking it from the cache after waiting for the first.
import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileSha256 } from '../../src/build/cache.js';
import { repoRoot } from '../helpers/cli.js';
import { cannotBuild, failedLogs, imgcRun, mountsContaining, outDir, privateCache } from './helpers.js';

const fixture = 'test/build/fixtures/one-out.ts';
const changed = 'test/build/fixtures/one-out-b.ts';

type Event = { event: string; phase?: string; waitedMs?: number; level?: string; text?: string; step?: string; exitCode?: number };
const events = (stdout: string): Event[] => stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Event);

/** `sha256sum -c SHA256SUMS` in `dir`, and the manifest's sums are the files'. */
const expectConsistent = async (dir: string) => {
  const check = await execa('sha256sum', ['-c', 'SHA256SUMS'], { cwd: dir, reject: false, all: true });
  expect(check.exitCode, check.all).toBe(0);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { artifacts: { output: string; sha256: string }[] };
  for (const a of manifest.artifacts) expect(await fileSha256(path.join(dir, a.output)), a.output).toBe(a.sha256);
};

const compiledMotd = (dir: string) => readFileSync(path.join(dir, 'compiled', 'phases', '01-customize.sh'), 'utf8').match(/imgc build [AB]/g);

describe.skipIf(cannotBuild)('one output directory, one build', () => {
  it('a changed definition built into the same --out and interrupted leaves the last good build whole; a second build into it meanwhile is refused', async () => {
    const out = outDir('one-out');
    const env = { IMGC_CACHE: privateCache('one-out') };
    const a = await imgcRun(['build', fixture, '--no-typecheck', '--out', out], { env });
    expect(a.exitCode, a.all).toBe(0);
    await expectConsistent(out);
    const before = Object.fromEntries(await Promise.all(['rootfs.tar.zst', 'manifest.json', 'SHA256SUMS'].map(async (f) => [f, await fileSha256(path.join(out, f))] as const)));

    const b = imgcRun(['build', changed, '--no-typecheck', '--format', 'json', '--out', out], { env });
    let seen = '';
    b.stdout!.on('data', (d: Buffer) => (seen += d.toString()));
    for (let waited = 0; !/"event":"step-start"[^\n]*customize\.2\.command/.test(seen); waited += 250) {
      if (waited > 600_000) throw new Error(`build B never reached its stalling step:\n${seen}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    // B holds the directory: another build into it is refused, saying why, and touches nothing.
    const c = await imgcRun(['build', fixture, '--no-typecheck', '--out', out], { env });
    expect(c.exitCode, c.all).toBe(1);
    expect(c.all).toMatch(/another imgc build is writing into .*: wait for it to end, or give this build another --out/);
    b.kill('SIGINT');
    const rb = await b;
    expect(rb.exitCode, rb.all).toBe(130);

    // A's compiled files, artifacts, manifest and checksums, as A left them.
    expect(compiledMotd(out)).toEqual(['imgc build A']);
    // logs/ is still A's; B's are in runs/ID, where its last line points.
    const json = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as { ok: boolean; error?: string };
    expect(json(path.join(out, 'logs', 'build.json')).ok).toBe(true);
    const bLogs = failedLogs(out);
    expect(rb.all).toContain(`logs: ${path.relative(repoRoot, bLogs)}/`);
    expect(json(path.join(bLogs, 'build.json')).error).toBe('interrupted by SIGINT');
    for (const [f, sum] of Object.entries(before)) expect(await fileSha256(path.join(out, f)), f).toBe(sum);
    await expectConsistent(out);
    expect(readdirSync(out).filter((f) => f.startsWith('.imgc-'))).toEqual(['.imgc-artifacts.json']);
    expect(mountsContaining('.imgc-work-imgc-test-one-out-')).toEqual([]);
  }, 1_500_000);

  it('two builds of one definition and one cache started together make each root phase once; the second waits and takes it from the cache', async () => {
    const env = { IMGC_CACHE: privateCache('one-out-together') };
    const outs = [outDir('together-1'), outDir('together-2')];
    const runs = await Promise.all(outs.map((out) => imgcRun(['build', fixture, '--no-typecheck', '--format', 'json', '--out', out], { env })));
    for (const r of runs) expect(r.exitCode, r.all).toBe(0);
    const evs = runs.map((r) => events(r.stdout));
    for (const phase of ['customize', 'provision']) {
      const ran = evs.filter((e) => e.some((x) => x.event === 'phase-start' && x.phase === phase));
      const cached = evs.filter((e) => e.some((x) => x.event === 'phase-cached' && x.phase === phase));
      expect([ran.length, cached.length], `${phase}: built by one build, taken from the cache by the other`).toEqual([1, 1]);
    }
    // The second waited for the first's lock, and says so.
    const waited = evs.flat().filter((x) => x.event === 'phase-cached' && (x.waitedMs ?? 0) > 0);
    expect(waited.length, JSON.stringify(evs.flat().filter((x) => x.event === 'phase-cached'))).toBeGreaterThan(0);
    expect(evs.flat().some((x) => x.event === 'message' && /another build is making the same root \(same cache key\); waiting for it/.test(x.text ?? ''))).toBe(true);
    for (const out of outs) await expectConsistent(out);
    // One entry per phase key in the cache, no duplicate unpacked roots of one key.
    const unpacked = readdirSync(env.IMGC_CACHE).filter((f) => /^root-/.test(f)).map((f) => f.split('-')[1]);
    expect(new Set(unpacked).size).toBe(unpacked.length);
    expect(existsSync(path.join(outs[0]!, 'compiled'))).toBe(true);
  }, 1_500_000);
});
