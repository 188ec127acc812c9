// Variables in real builds: a sensitive value from each source (--var,
// IMGC_VAR_*, imgc.toml) reaches the step that uses it and nothing else —
// not a log, the manifest, compiled/, the output directory or any cache entry
// (tarballs decompressed) —, and the phase cache tells roots built with
// different variable values apart.
import { execa } from 'execa';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { cannotBuild, imgcRun, outDir, privateCache, read, summaryOf } from './helpers.js';

const fixture = path.join(repoRoot, 'test/build/fixtures/variables.ts');
const motd = 'test/build/fixtures/motd.ts';

/** Every file below `dir` (symlinks not followed). */
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.isFile() ? [p] : [];
  });

/**
 * Which of `needles` occur below `dirs`, and where: in every plain file (grep
 * -r, binary files too), and inside every tarball (zstd, gzip) decompressed
 * with the real tools.
 */
const occurrences = async (needles: string[], dirs: string[]): Promise<string[]> => {
  const patterns = needles.flatMap((n) => ['-e', n]);
  const hits: string[] = [];
  for (const dir of dirs) {
    const plain = await execa('grep', ['-roF', '--no-messages', '--devices=skip', ...patterns, dir], { reject: false });
    hits.push(...plain.stdout.split('\n').filter(Boolean));
    for (const f of walk(dir)) {
      const tool = /\.(tar\.zst|tzst)$/.test(f) ? 'zstd' : /\.(tar\.gz|tgz|gz)$/.test(f) && !f.includes('/root-') && !f.includes('/rootfs/') ? 'gzip' : undefined;
      if (!tool) continue;
      const r = await execa('sh', ['-c', `${tool} -dc -- "$0" | grep -aoF "$@"`, f, ...patterns], { reject: false });
      hits.push(...r.stdout.split('\n').filter(Boolean).map((h) => `${f} (decompressed): ${h}`));
    }
  }
  return hits;
};

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe.skipIf(cannotBuild)('imgc build with a sensitive variable', () => {
  it('takes the value from --var, IMGC_VAR_* and imgc.toml, uses it, and writes it nowhere', async () => {
    // A value unlike anything else on disk; shell-safe inside double quotes (the command splices it in).
    const secret = (from: string) => `imgc-secret-${from}-${randomBytes(12).toString('hex')}`;
    const runs = [
      { from: 'cli', value: secret('cli'), args: (v: string) => ['--var', `token=${v}`], env: () => ({}), toml: undefined as string | undefined },
      { from: 'env', value: secret('env'), args: () => [], env: (v: string) => ({ IMGC_VAR_TOKEN: v }), toml: undefined },
      { from: 'toml', value: secret('toml'), args: () => [], env: () => ({}), toml: 'token' },
    ];
    const outs: string[] = [];
    // A cache of its own: "the whole cache" is then every entry these builds wrote, and no
    // other test's build removes a root below it while the search walks it.
    const cache = privateCache('secret');
    for (const r of runs) {
      const out = outDir(`secret-${r.from}`);
      outs.push(out);
      const cwd = tempDir(`secret-cwd-${r.from}`);
      if (r.toml) writeFileSync(path.join(cwd, 'imgc.toml'), `[vars]\ntoken = "${r.value}"\nmotd = "from toml"\n`);
      const b = await imgcRun(['build', fixture, '--no-typecheck', '--out', out, ...r.args(r.value)], { env: { ...r.env(r.value), IMGC_CACHE: cache }, cwd });
      expect(b.exitCode, b.all).toBe(0);
      expect(b.all).not.toContain(r.value);
      // The step had the value: the root holds its hash.
      const inRoot = (file: string) => execa('tar', ['-xzOf', path.join(out, 'rootfs.tar.gz'), `./${file}`]).then((x) => x.stdout);
      expect((await inRoot('etc/token.sha256')).trim()).toBe(sha256(r.value));
      if (r.toml) expect(await inRoot('etc/motd')).toBe('from toml');
      // Standalone verify reads the values as the build did: /etc/motd holds the variable's value.
      const verified = await imgcRun(['verify', fixture, '--no-typecheck', '--image', path.join(out, 'rootfs.tar.gz'), ...r.args(r.value)], { env: { ...r.env(r.value), IMGC_CACHE: cache }, cwd });
      expect(verified.exitCode, verified.all).toBe(0);
      expect(verified.all).not.toContain(r.value);
      expect(read(path.join(out, `logs/02-provision.log`))).toContain(`token has ${r.value.length} characters`);
      // The phase that used it is never cached.
      const s = summaryOf(out);
      expect(s.phases.find((p) => p.name === 'provision')!.cached).toBe(false);
    }
    // Logs, manifest, compiled/, the artifact (rootfs.tar.gz, decompressed) and the whole
    // cache (tarballs decompressed, unpacked roots): none of the three values anywhere.
    const where = [...outs, cache];
    expect(await occurrences(runs.map((r) => r.value), where)).toEqual([]);
    // The search itself finds a value where it is (in a compressed tarball too).
    const probe = tempDir('secret-probe');
    writeFileSync(path.join(probe, 'plain'), `x${runs[0]!.value}x`);
    await execa('tar', ['-C', probe, '--zstd', '-cf', path.join(probe, 'packed.tar.zst'), 'plain']);
    expect((await occurrences([runs[0]!.value], [probe])).sort()).toEqual([`${path.join(probe, 'packed.tar.zst')} (decompressed): ${runs[0]!.value}`, `${path.join(probe, 'plain')}:${runs[0]!.value}`]);
  }, 900_000);

  it('refuses to start without a value for the sensitive variable, naming every way to give one', async () => {
    const out = outDir('secret-missing');
    const b = await imgcRun(['build', fixture, '--no-typecheck', '--out', out]);
    expect(b.exitCode, b.all).not.toBe(0);
    expect(b.all).toMatch(/sensitive variable token has no value: pass --var token=VALUE, set IMGC_VAR_TOKEN or add it to imgc.toml's \[vars\]/);
    expect(readdirSync(out)).toEqual([]);
    const verify = await imgcRun(['verify', fixture, '--no-typecheck', '--root', out]);
    expect(verify.exitCode, verify.all).toBe(2);
    expect(verify.all).toMatch(/sensitive variable token has no value: pass --var token=VALUE.*verify compares the root with the values it was built with/);
  }, 300_000);
});

describe.skipIf(cannotBuild)('the phase cache and variable values', () => {
  it('does not restore the root built with another value of a variable', async () => {
    const out = outDir('motd');
    const env = { IMGC_CACHE: privateCache('motd') };
    const build = async (value: string) => {
      const b = await imgcRun(['build', motd, '--no-typecheck', '--out', out, '--var', `motd=${value}`], { env });
      expect(b.exitCode, b.all).toBe(0);
      return { cached: summaryOf(out).phases.filter((p) => p.cached).map((p) => p.name), motd: read(path.join(out, 'rootfs/etc/motd')) };
    };
    const one = 'one';
    const two = 'two';
    await build(one);
    expect(await build(two)).toEqual({ cached: [], motd: `${two}\n` });
    // The same value again: both root phases come from the cache.
    expect(await build(one)).toEqual({ cached: ['customize', 'provision'], motd: `${one}\n` });
  }, 900_000);
});
