// The built CLI's zod (see src/util/zod.ts): one bundled file of the
// installed package, compiled from V8's code cache once a run has saved it.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { imgc, repoRoot, tempDir } from './helpers/cli.js';

const util = path.join(repoRoot, 'dist', 'src', 'util');
const bundle = path.join(util, 'zod.cjs');
const require = createRequire(import.meta.url);
const child = require(path.join(repoRoot, 'dist', 'src', 'load', 'typecheck-child.cjs')) as typeof import('../src/load/typecheck-child.cjs');

describe('the bundled zod', () => {
  const cache = tempDir('zod-cache');

  it('dist imports the bundle, not the package', () => {
    expect(existsSync(bundle)).toBe(true);
    const js = readFileSync(path.join(util, 'zod.js'), 'utf8');
    expect(js).toContain('zod.cjs');
    expect(js).not.toMatch(/from\s*["']zod["']/);
    expect(readFileSync(bundle, 'utf8')).not.toMatch(/require\(["']zod/);
    // The declarations are the package's own.
    expect(readFileSync(path.join(util, 'zod.d.ts'), 'utf8')).toMatch(/from 'zod'/);
  });

  it('is the installed zod: a stale bundle fails here', async () => {
    const { z } = (await import(pathToFileURL(path.join(util, 'zod.js')).href)) as typeof import('zod');
    const installed = (JSON.parse(readFileSync(require.resolve('zod/package.json'), 'utf8')) as { version: string }).version;
    const { major, minor, patch } = z.core.version;
    expect(`${major}.${minor}.${patch}`).toBe(installed);
    expect(z.string().regex(/^\d+\.\d+$/).safeParse('1.30').success).toBe(true);
  });

  it('a check saves its code cache once and takes it after', async () => {
    const cacheFile = child.codeCacheFile(bundle, readFileSync(bundle, 'utf8'), cache, 'imgc');
    expect(existsSync(cacheFile)).toBe(false);
    const env = { IMGC_CACHE: cache, IMGC_NO_SERVER: '1' };
    const first = await imgc(['check', '--no-typecheck', 'examples/node-image.ts'], { env });
    expect(first.exitCode, first.all).toBe(0);
    const saved = statSync(cacheFile);
    expect(saved.size).toBeGreaterThan(0);
    const second = await imgc(['check', '--no-typecheck', 'examples/node-image.ts'], { env });
    expect(second.exitCode, second.all).toBe(0);
    // V8 took it: nothing was written again.
    expect(statSync(cacheFile).mtimeMs).toBe(saved.mtimeMs);
    expect(second.stdout).toBe(first.stdout);
  });

  it('a cache V8 rejects is compiled over and replaced', async () => {
    const cacheFile = child.codeCacheFile(bundle, readFileSync(bundle, 'utf8'), cache, 'imgc');
    writeFileSync(cacheFile, 'not a code cache');
    const r = await imgc(['check', '--no-typecheck', 'examples/node-image.ts'], { env: { IMGC_CACHE: cache, IMGC_NO_SERVER: '1' } });
    expect(r.exitCode, r.all).toBe(0);
    expect(readFileSync(cacheFile).subarray(0, 16).toString()).not.toBe('not a code cache');
  });
});
