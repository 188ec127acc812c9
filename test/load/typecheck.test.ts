// The type-check runs in a process of its own (src/load/typecheck.ts), from a
// V8 snapshot with TypeScript's libraries parsed once it has one. Whichever
// way it runs, the diagnostics must be the same; a stale or broken snapshot
// must never be used; code with syntax errors must never run.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askTypecheck, type Ran } from '../../src/load/typecheck.js';
import { loadDefinition } from '../../src/load/index.js';
import { imgc, repoRoot, tempDir } from '../helpers/cli.js';

const typeError = path.join(repoRoot, 'examples', 'broken', 'type-error.ts');


const snapshotDir = (cache: string) => path.join(cache, 'typecheck-snapshot');
const blobOf = (cache: string) => {
  const dir = snapshotDir(cache);
  const blob = existsSync(dir) ? readdirSync(dir).find((f) => /^[0-9a-f]{32}\.blob$/.test(f)) : undefined;
  return blob && path.join(dir, blob);
};

/** Waits for the snapshot that a check without one has made in the background. */
const snapshotMade = async (cache: string): Promise<string> => {
  for (let waited = 0; waited < 120_000; waited += 250) {
    const blob = blobOf(cache);
    if (blob && existsSync(blob.replace(/\.blob$/, '.json')) && !existsSync(`${blob}.making`)) return blob;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no snapshot was made in ${snapshotDir(cache)}`);
};

const answerOf = (ran: Ran) => {
  if (!ran.answer?.ok) throw new Error(`no answer: exit ${ran.exitCode}, ${ran.stderr}`);
  return ran.answer;
};

describe('the type-check process', () => {
  const cache = tempDir('typecheck-cache');
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env['IMGC_CACHE'];
    process.env['IMGC_CACHE'] = cache;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env['IMGC_CACHE'];
    else process.env['IMGC_CACHE'] = saved;
  });

  it('answers without a snapshot, makes one, and then answers the same from it', async () => {
    const first = answerOf(await askTypecheck(typeError));
    expect(first.via).toBe('fresh process');
    expect(first.diagnostics.map((d) => [d.code, d.line])).toEqual([[2322, 12]]);
    const blob = await snapshotMade(cache);
    const sidecar = JSON.parse(readFileSync(blob.replace(/\.blob$/, '.json'), 'utf8')) as { file: string }[];
    // It holds TypeScript's libraries and imgc's own types, and none of the user's files.
    expect(sidecar.some((s) => s.file.endsWith('lib.es2022.d.ts'))).toBe(true);
    expect(sidecar.some((s) => s.file.includes('/zod/'))).toBe(true);
    expect(sidecar.some((s) => s.file.includes('examples'))).toBe(false);
    const second = answerOf(await askTypecheck(typeError));
    expect(second.via).toBe('snapshot');
    expect(second.diagnostics).toEqual(first.diagnostics);
    expect(second.inputs).toEqual(first.inputs);
  });

  it('does not use a snapshot one of whose files has changed since, and makes it again', async () => {
    const blob = await snapshotMade(cache);
    const sidecarFile = blob.replace(/\.blob$/, '.json');
    const stamps = JSON.parse(readFileSync(sidecarFile, 'utf8')) as { file: string; mtimeMs: number }[];
    stamps[stamps.length - 1]!.mtimeMs -= 1000; // as if that file had been written after the snapshot was made
    writeFileSync(sidecarFile, JSON.stringify(stamps));
    expect(answerOf(await askTypecheck(typeError)).via).toBe('fresh process');
    await new Promise((r) => setTimeout(r, 500));
    await snapshotMade(cache);
    expect(answerOf(await askTypecheck(typeError)).via).toBe('snapshot');
  });

  it('answers when the snapshot cannot be loaded, and drops it', async () => {
    const blob = await snapshotMade(cache);
    writeFileSync(blob, 'not a snapshot');
    const ran = answerOf(await askTypecheck(typeError));
    expect(ran.via).toBe('fresh process');
    expect(ran.diagnostics.map((d) => d.code)).toEqual([2322]);
    await new Promise((r) => setTimeout(r, 500));
    expect(readFileSync(await snapshotMade(cache)).length).toBeGreaterThan(1 << 20);
  });

  it('keeps the newest four snapshots of the cache, one per Node binary and imgc installation, and no failed attempt\'s marker', async () => {
    const own = tempDir('typecheck-prune');
    const dir = snapshotDir(own);
    mkdirSync(dir, { recursive: true });
    // Five others, of other installations, the oldest first.
    const others = Array.from({ length: 5 }, (_, i) => path.join(dir, `other${i}.blob`));
    others.forEach((blob, i) => {
      writeFileSync(blob, 'x');
      writeFileSync(blob.replace(/\.blob$/, '.json'), '[]');
      const then = new Date(Date.now() - (10 - i) * 60_000);
      utimesSync(blob, then, then);
    });
    // Markers of other installations' attempts: one failed three minutes ago (it holds nothing off), one runs.
    writeFileSync(path.join(dir, 'failed.blob.making'), '1\n');
    const then = new Date(Date.now() - 180_000);
    utimesSync(path.join(dir, 'failed.blob.making'), then, then);
    writeFileSync(path.join(dir, 'running.blob.making'), '1\n');
    process.env['IMGC_CACHE'] = own;
    try {
      answerOf(await askTypecheck(typeError));
      const made = await snapshotMade(own);
      const left = readdirSync(dir).filter((f) => f.endsWith('.blob')).sort();
      expect(left).toEqual([path.basename(made), 'other2.blob', 'other3.blob', 'other4.blob'].sort());
      expect(readdirSync(dir).filter((f) => f.endsWith('.json')).sort()).toEqual(left.map((f) => f.replace(/\.blob$/, '.json')));
      expect(readdirSync(dir).filter((f) => f.endsWith('.making'))).toEqual(['running.blob.making']);
    } finally {
      process.env['IMGC_CACHE'] = cache;
    }
  });

  it('starts no second attempt at a snapshot within two minutes of one that is running or failed', async () => {
    const own = tempDir('typecheck-attempt');
    process.env['IMGC_CACHE'] = own;
    try {
      // The marker of an attempt that started just now: checks answer, and leave the making to it.
      const first = answerOf(await askTypecheck(typeError));
      const made = await snapshotMade(own);
      rmSync(made);
      writeFileSync(`${made}.making`, '1\n');
      expect(answerOf(await askTypecheck(typeError)).via).toBe('fresh process');
      await new Promise((r) => setTimeout(r, 8000));
      expect(existsSync(made)).toBe(false);
      // Three minutes on, that attempt is over: the next check makes the snapshot again.
      const then = new Date(Date.now() - 180_000);
      utimesSync(`${made}.making`, then, then);
      expect(answerOf(await askTypecheck(typeError)).diagnostics).toEqual(first.diagnostics);
      expect(await snapshotMade(own)).toBe(made);
    } finally {
      process.env['IMGC_CACHE'] = cache;
    }
  });

  it('gives the CLI the same diagnostics with and without a snapshot, and keeps NODE_OPTIONS out of the child', async () => {
    const own = tempDir('typecheck-cli');
    const check = () => imgc(['check', '--format', 'json', 'examples/broken/type-error.ts'], { env: { IMGC_CACHE: own } });
    const before = await check();
    await snapshotMade(own);
    rmSync(path.join(own, 'typecheck'), { recursive: true }); // the answer cached by content: check again
    // A --require hook that notes each process it is loaded into: the CLI's, not the type-check's.
    const hook = path.join(own, 'hook.cjs');
    const seen = path.join(own, 'seen');
    writeFileSync(hook, `require('node:fs').appendFileSync(${JSON.stringify(seen)}, process.argv.slice(1).join(' ') + '\\n');\n`);
    const after = await imgc(['check', '--format', 'json', 'examples/broken/type-error.ts'], { env: { IMGC_CACHE: own, NODE_OPTIONS: `--require ${hook}` } });
    expect(after.exitCode).toBe(1);
    expect(after.stdout).toBe(before.stdout);
    expect(JSON.parse(after.stdout).diagnostics.map((d: { code: string }) => d.code)).toContain('IMGC1001');
    expect(readFileSync(seen, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

describe('the CLI', () => {
  it('stops the type-check it started early when the command fails on its arguments first', async () => {
    const own = tempDir('typecheck-usage');
    const r = await imgc(['compile', 'examples/broken/type-error.ts', '--target', 'nope'], { env: { IMGC_CACHE: own } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/unknown target 'nope'/);
    // A type-check left to finish would have cached its answer before the process could exit.
    expect(existsSync(path.join(own, 'typecheck'))).toBe(false);
  });
});

describe('a definition TypeScript cannot check', () => {
  it('is IMGC1001 with the way out, when one chain of calls overflows the checker\'s stack', async () => {
    const dir = tempDir('deep');
    const chain = Array.from({ length: 6000 }, (_, i) => `  .group('g${i}')`).join('\n');
    writeFileSync(path.join(dir, 'deep.ts'), `import { image, debian12 } from 'imgc';\nexport default image('deep').base(debian12()).customize((p) => p\n${chain}\n);\n`);
    const r = await imgc(['check', '--format', 'json', path.join(dir, 'deep.ts')], { env: { IMGC_CACHE: tempDir('deep-cache') } });
    const typeErrors = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string; hint?: string }[] }).diagnostics.filter((d) => d.code === 'IMGC1001');
    expect(typeErrors).toEqual([expect.objectContaining({ message: expect.stringMatching(/TypeScript could not check this definition \(Maximum call stack size exceeded\)/), hint: expect.stringMatching(/defineModule/) })]);
  });
});

describe('a definition with syntax errors', () => {
  const body = (marker: string) =>
    [
      "import { writeFileSync } from 'node:fs';",
      "import { image, debian12 } from 'imgc';",
      `writeFileSync(${JSON.stringify(marker)}, 'ran');`,
      "export default image('x').base(debian12()).customize((p) => p.user('a')",
      '',
    ].join('\n');

  for (const loader of ['in-thread', 'hooks'] as const) {
    it(`is reported as IMGC1006 and never run (${loader} loader)`, async () => {
      const dir = tempDir('syntax');
      const file = path.join(dir, 'broken.ts');
      const marker = path.join(dir, 'ran');
      writeFileSync(file, body(marker));
      const savedLoader = process.env['IMGC_LOADER'];
      if (loader === 'hooks') process.env['IMGC_LOADER'] = 'hooks';
      try {
        const loaded = await loadDefinition(file);
        expect(loaded.ir).toBeUndefined();
        expect(loaded.diagnostics.map((d) => d.code)).toEqual(['IMGC1006']);
        expect(loaded.diagnostics[0]!.loc).toMatchObject({ file: 'broken.ts', line: 5 });
      } finally {
        if (savedLoader === undefined) delete process.env['IMGC_LOADER'];
        else process.env['IMGC_LOADER'] = savedLoader;
      }
      expect(existsSync(marker)).toBe(false);
    });
  }
});
