// A corrupt cache entry is found before it is used: every tarball's sha256 is
// recorded when it is written and checked before it is unpacked; a bad entry
// is dropped with a message saying so and made again. In-process on a small
// root, then real builds with a truncated phase root and a truncated base.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorruptEntry, RootCache } from '../../src/build/cache.js';
import { fileSha256 } from '../../src/build/sparse-hash.js';
import { tempDir } from '../helpers/temp.js';
import { cannotBuild, imgcRun, outDir, privateCache, read } from './helpers.js';

const rootWith = (dir: string, name: string, text: string): string => {
  const root = path.join(dir, name);
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc', 'hostname'), text);
  return root;
};

describe('cache entries are checked before use', () => {
  it('records the checksum, refuses a truncated or unvouched tarball, drops it and leaves the root untouched', async () => {
    const dir = tempDir('corrupt-unit');
    const cache = new RootCache(path.join(dir, 'cache'));
    const key = 'c'.repeat(64);
    await cache.store('phase', key, rootWith(dir, 'made', 'x'.repeat(100_000)), {});
    const file = cache.file('phase', key);
    expect(cache.checksum('phase', key)).toBe(await fileSha256(file));
    const good = path.join(dir, 'good');
    mkdirSync(good);
    await cache.restore('phase', key, good);
    expect(read(path.join(good, 'etc', 'hostname'))).toHaveLength(100_000);

    truncateSync(file, Math.floor(statSync(file).size / 2));
    const into = path.join(dir, 'into');
    mkdirSync(into);
    const err = await cache.restore('phase', key, into).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptEntry);
    expect((err as Error).message).toMatch(/^cache entry \S+phase-c+\.tar\.zst is corrupt \(sha256 [0-9a-f]{12}…, recorded [0-9a-f]{12}… when it was written\): dropped it; making it again$/);
    expect(cache.has('phase', key)).toBe(false);
    expect(readdirSync(into)).toEqual([]);

    // An entry with no checksum to vouch for it (an older imgc's, or a write cut short) is not trusted either.
    await cache.store('phase', key, rootWith(dir, 'again', 'y'), {});
    const side = file.replace(/\.tar\.zst$/, '.json');
    const about = JSON.parse(readFileSync(side, 'utf8')) as Record<string, unknown>;
    delete about['sha256'];
    writeFileSync(side, JSON.stringify(about));
    await expect(cache.restore('phase', key, into)).rejects.toThrow(/has no recorded checksum/);
    expect(cache.has('phase', key)).toBe(false);
  });
});

describe.skipIf(cannotBuild)('imgc build with a corrupt cache entry', () => {
  it('says so, makes the entry again and builds: a truncated phase root, then a truncated base', async () => {
    // A cache of its own (the other build tests keep using the shared one), seeded with the shared base.
    const seed = await imgcRun(['build', 'test/build/fixtures/motd.ts', '--no-typecheck', '--out', outDir('corrupt-seed'), '--var', 'motd=seed']);
    expect(seed.exitCode, seed.all).toBe(0);
    const own = privateCache('corrupt');
    const env = { IMGC_CACHE: own };
    const out = outDir('corrupt');
    const build = (...extra: string[]) => imgcRun(['build', 'test/build/fixtures/motd.ts', '--no-typecheck', '--out', out, '--var', 'motd=corrupt', ...extra], { env });
    const first = await build();
    expect(first.exitCode, first.all).toBe(0);

    const phases = readdirSync(own).filter((f) => /^phase-[0-9a-f]+\.tar\.zst$/.test(f));
    expect(phases.length).toBeGreaterThan(0);
    for (const f of phases) truncateSync(path.join(own, f), 1000);
    // The unpacked copy the first build kept would be taken instead of the tarball: this is about tarballs.
    for (const f of readdirSync(own).filter((f) => f.startsWith('root-'))) rmSync(path.join(own, f), { recursive: true, force: true });
    const second = await build();
    expect(second.exitCode, second.all).toBe(0);
    expect(second.all).toMatch(/warning: cache entry \S+phase-[0-9a-f]+\.tar\.zst is corrupt \(sha256 [0-9a-f]{12}…, recorded [0-9a-f]{12}… when it was written\): dropped it; making it again/);
    expect(read(path.join(out, 'rootfs/etc/motd'))).toBe('corrupt\n');

    // Every base the shared cache had was copied (other tests' bases too): truncate them all, so the one this build takes is corrupt.
    const bases = readdirSync(own).filter((f) => /^base-[0-9a-f]+\.tar\.zst$/.test(f));
    expect(bases.length).toBeGreaterThan(0);
    for (const b of bases) truncateSync(path.join(own, b), Math.floor(statSync(path.join(own, b)).size / 3));
    // --no-cache: the root is laid from the base, not restored after a phase.
    const third = await build('--no-cache');
    expect(third.exitCode, third.all).toBe(0);
    expect(third.all).toMatch(/warning: cache entry \S+base-[0-9a-f]+\.tar\.zst is corrupt .*: dropped it; making it again/);
    expect(third.all).not.toMatch(/tar: |zstd: /);
    // Made again (debootstrap) and vouched for anew: the one base whose tarball matches its recorded sum again.
    const cache = new RootCache(own);
    const vouched = [];
    for (const b of bases) {
      const key = JSON.parse(readFileSync(path.join(own, b.replace(/\.tar\.zst$/, '.json')), 'utf8')).key as string;
      if (existsSync(cache.file('base', key)) && cache.checksum('base', key) === (await fileSha256(cache.file('base', key)))) vouched.push(b);
    }
    expect(vouched).toHaveLength(1);
    expect(read(path.join(out, 'rootfs/etc/motd'))).toBe('corrupt\n');
  }, 1_200_000);
});
