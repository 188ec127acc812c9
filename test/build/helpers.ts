// Shared by the build tests: whether real builds can run here, and running
// `imgc build` / `imgc verify` as separate processes (they need root, mount
// things and handle signals, so they do not run inside the test worker).
import { execa, type ResultPromise } from 'execa';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from '../helpers/cli.js';
import { rootTestsOff } from '../helpers/root.js';
import { tempDir } from '../helpers/temp.js';
import { cacheDir } from '../../src/build/cache.js';
import { freeBytes, type BuildSummary } from '../../src/build/index.js';

const isRoot = process.getuid?.() === 0;
const haveDebootstrap = ['/usr/sbin/debootstrap', '/usr/bin/debootstrap'].some(existsSync);
const cliModule = path.join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const imgcBin = path.join(repoRoot, 'bin', 'imgc.js');

/** Why real builds cannot run here, or undefined when they can. */
export const cannotBuild: string | undefined = rootTestsOff ?? (!isRoot
  ? 'imgc build needs root (chroot, mount): run the tests as root'
  : !haveDebootstrap
    ? 'debootstrap is not installed (apt-get install debootstrap)'
    : !existsSync(cliModule)
      ? 'dist/ is missing: run npm run build first'
      : undefined);

if (cannotBuild) console.warn(`build tests skipped: ${cannotBuild}`);

/** Runs `imgc build …` or `imgc verify …` (the real CLI) in a child process; the result has all output. */
export const imgcRun = (args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): ResultPromise<{ all: true; reject: false }> =>
  execa('node', [imgcBin, ...args], {
    cwd: opts.cwd ?? repoRoot,
    reject: false,
    all: true,
    env: { CI: 'true', ...opts.env },
  }) as unknown as ResultPromise<{ all: true; reject: false }>;

/**
 * A fresh directory for a build's output, on the disk that has room; removed
 * after the test file (../helpers/temp.ts). Suites call it while vitest
 * collects them; when builds cannot run, the skipped suite's afterAll never
 * runs either, so nothing is created.
 */
export const outDir = (name: string): string => (cannotBuild ? path.join(tmpdir(), `imgc-${name}-not-built`) : tempDir(name, scratchParent()));

/** $IMGC_TEST_DIR, else the temp dir when it has room for a few images, else the repo's (ignored) out/. */
const scratchParent = (): string => {
  const base = process.env['IMGC_TEST_DIR'] ?? (freeBytes(tmpdir()) > 20 * 1024 ** 3 ? tmpdir() : path.join(repoRoot, 'out', 'test'));
  mkdirSync(base, { recursive: true });
  return base;
};

/** The log folder of the newest build into `out` that failed or was interrupted: runs/ID (src/build/run-logs.ts). */
export const failedLogs = (out: string): string => {
  const runs = readdirSync(path.join(out, 'runs')).sort();
  if (!runs.length) throw new Error(`${out}/runs holds no build's logs`);
  return path.join(out, 'runs', runs.at(-1)!);
};

/** The summary of the last build into `out`: its runs/ID/build.json when it failed, else logs/build.json. */
export const summaryOf = (out: string): BuildSummary => {
  const files = [path.join(out, 'logs', 'build.json'), ...(existsSync(path.join(out, 'runs')) ? [path.join(failedLogs(out), 'build.json')] : [])].filter((f) => existsSync(f));
  const newest = files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) throw new Error(`no build.json in ${out}`);
  return JSON.parse(readFileSync(newest, 'utf8')) as BuildSummary;
};

export { mountsContaining } from '../helpers/temp.js';

export const read = (file: string): string => readFileSync(file, 'utf8');

/**
 * A cache of the test's own (removed after the test file), holding a copy of
 * the shared cache's bases: what the test stores there does not pile up in
 * the shared cache, and the test cannot meet entries of earlier runs.
 */
export const privateCache = (name: string): string => {
  const own = tempDir(`cache-${name}`, scratchParent());
  const shared = cacheDir(process.env);
  const bases = existsSync(shared) ? readdirSync(shared).filter((f) => /^base-[0-9a-f]+\.(tar\.zst|json)$/.test(f)) : [];
  for (const f of bases) copyFileSync(path.join(shared, f), path.join(own, f));
  return own;
};

/** Every entry under `dir`, three levels deep (at the top, those `keep` takes), with its size and mtime: what `imgc build --plan` must leave as it was. */
export const snapshot = (dir: string, keep: (name: string) => boolean = () => true): string[] => {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).filter((n) => rel || keep(n)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path.join(dir, r));
      out.push(`${r} ${st.size} ${st.mtimeMs}`);
      if (st.isDirectory() && r.split('/').length < 3) walk(r);
    }
  };
  walk('');
  return out;
};
