// Issue 38's "building two combinations that share their first phases builds
// those phases once": a real `imgc build --all --format json` of a matrix
// whose combinations differ only in their artifacts, on a cache of its own.
// The first combination runs the root phases; the second's events say each
// came from the cache, and only its artifact phase runs.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cannotBuild, imgcRun, outDir, privateCache } from './helpers.js';

type Event = { event: string; image?: string; phase?: string; ok?: boolean; exitCode?: number };

describe.skipIf(cannotBuild)('imgc build --all of a matrix', () => {
  it('builds the root phases the combinations share once: the second combination takes each from the cache', async () => {
    const out = outDir('variants-build');
    const r = await imgcRun(['build', 'test/build/fixtures/small-matrix.ts', '--no-typecheck', '--all', '--format', 'json', '--out', out], { env: { IMGC_CACHE: privateCache('variants-build') } });
    expect(r.exitCode, r.all).toBe(0);
    const events = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Event);
    // One build after another, each from build-start to its summary.
    const starts = events.flatMap((e, i) => (e.event === 'build-start' ? [i] : []));
    expect(events.filter((e) => e.event === 'build-start').map((e) => e.image)).toEqual(['imgc-test-matrix-dir', 'imgc-test-matrix-tar']);
    const [first, second] = [events.slice(starts[0], starts[1]), events.slice(starts[1])];
    const phases = (build: Event[], event: string) => build.filter((e) => e.event === event).map((e) => e.phase);
    expect(phases(first, 'phase-start')).toEqual(['customize', 'provision', 'artifact', 'verify']);
    expect(phases(first, 'phase-cached')).toEqual([]);
    expect(phases(second, 'phase-cached')).toEqual(['customize', 'provision']);
    expect(phases(second, 'phase-start')).toEqual(['artifact', 'verify']);
    for (const build of [first, second]) expect(build.at(-1)).toMatchObject({ event: 'summary', ok: true, exitCode: 0 });
    expect(existsSync(path.join(out, 'imgc-test-matrix-dir', 'rootfs'))).toBe(true);
    expect(existsSync(path.join(out, 'imgc-test-matrix-tar', 'rootfs.tar.zst'))).toBe(true);
  }, 1_200_000);
});
