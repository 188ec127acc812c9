// The build's work root and phase 0: a work directory of this build's own
// beside the output directory, cleaned up by the session whatever happens,
// and the root in it, restored from the phase cache or laid down from the base.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { CompiledFiles } from '../compilers/types.js';
import { phaseKind } from '../ir/phases.js';
import { removeTree } from '../host/exec.js';
import { literalWord } from '../emit/shell/quote.js';
import { layBase, type BaseSource } from './base.js';
import { cacheDir, CorruptEntry, RootCache } from './cache.js';
import type { Display } from './display.js';
import { sourceDateEpoch } from './boot-step.js';
import { baseIdentity, phaseKeyChain } from './keys.js';
import { StageLog } from './logs.js';
import { mountsUnder, RootMounts } from './mounts.js';
import { claim, markKept } from './reclaim.js';
import type { SensitiveValues } from './secrets.js';
import { BuildError, type BuildRun, type Work } from './state.js';

/** Where a build stages what it publishes into `outDir` (compiled files, artifacts, manifest), all moved into place together at its end. */
export const stagingDir = (outDir: string): string => path.join(outDir, `.imgc-staging-${process.pid}`);

/** Makes the staging directory (claimed: a later build reclaims it if this one is killed), removed when the build's session ends. */
export const openStaging = (run: BuildRun): string => {
  const staging = stagingDir(run.outDir);
  rmSync(staging, { recursive: true, force: true });
  run.session.defer('remove staged outputs', () => rmSync(staging, { recursive: true, force: true }));
  mkdirSync(staging, { recursive: true });
  claim(staging);
  return staging;
};

/** Removes a work directory, but never while anything is mounted below it (rm would reach into /dev). */
const removeWorkDir = (dir: string, display: Display): void => {
  const mounted = existsSync(dir) ? mountsUnder(dir) : [];
  if (mounted.length) {
    display.warn(`not removing ${dir}: still mounted ${mounted.join(', ')}`);
    return;
  }
  removeTree(dir);
};

/** What a build kept with --keep-root says: where the root is, and the command that removes it, the path one shell word whatever it holds. */
export const keptRootNote = (cwd: string, dir: string): string => {
  const shown = (p: string) => path.relative(cwd, p) || p;
  return `root kept at ${shown(path.join(dir, 'root'))} (no later build removes it: rm -rf -- ${literalWord(shown(dir))} when done)`;
};

/**
 * Makes the work directory (claimed, so a later build can reclaim it if this
 * one is killed) and the mounts of the root, each with
 * the session cleanup that takes it down again.
 */
export const openWork = (
  run: BuildRun,
  workParent: string,
  compiled: { files: CompiledFiles; compiledDir: string; sensitive: SensitiveValues },
  onDir: (dir: string) => void,
): Work => {
  const { ir, opts, display, session, cwd, outDir } = run;
  const dir = mkdtempSync(path.join(workParent, `.imgc-work-${ir.name}-`));
  claim(dir);
  onDir(dir);
  const root = path.join(dir, 'root');
  mkdirSync(root, { mode: 0o755 });
  run.summary.root = root;
  const cache = new RootCache(cacheDir(run.env));
  const staging = stagingDir(outDir);
  const work: Work = { ...compiled, dir, root, cache, staging, mounts: new RootMounts(root), keys: new Map(), inputs: new Map(), rootIs: undefined };
  session.defer('remove the work directory', () => {
    if (opts.keepRoot) {
      markKept(dir);
      display.info(keptRootNote(cwd, dir));
    } else {
      if (work.rootIs && mountsUnder(root).length === 0 && cache.keep(work.rootIs.key, work.rootIs.id, root)) display.info('kept the root unpacked in the cache for the next build');
      removeWorkDir(dir, display);
    }
  });
  session.defer('unmount', () => work.mounts.unmountAll());
  return work;
};

/** Phase keys: a chain from the base through the root-changing phases (./keys.ts), set on the work with their inputs. */
const setKeys = (run: BuildRun, work: Work, base: BaseSource): void => {
  const chain = phaseKeyChain(run.ir, baseIdentity(base.key, base.key && work.cache.checksum('base', base.key), base.kind), run.opts.target, sourceDateEpoch(run.env));
  work.keys = new Map([...chain].map(([p, k]) => [p, k.key]));
  work.inputs = new Map([...chain].map(([p, k]) => [p, k.inputs]));
};

/** The last of the longest prefix of root phases whose result is cached (-1: none, start from the base). */
const resumePoint = (run: BuildRun, work: Work): number => {
  let resume = -1;
  if (run.opts.noCache) return resume;
  for (let i = 0; i < run.ir.phases.length; i++) {
    const p = run.ir.phases[i]!;
    if (phaseKind(p) !== 'root') break;
    const k = work.keys.get(p);
    if (k && work.cache.has('phase', k)) resume = i;
  }
  return resume;
};

/** The root after phase `resume`, from the cache; false when the entry was corrupt (dropped, the root untouched). */
const restoreRoot = async (run: BuildRun, work: Work, base: BaseSource, resume: number, log: StageLog, t0: number): Promise<boolean> => {
  const { display, summary } = run;
  const p = run.ir.phases[resume]!;
  const key = work.keys.get(p)!;
  display.stage('base', `from the cache: the root after phase ${p.name}`);
  let id = work.cache.take(key, work.root);
  let restored = true;
  if (id) log.line(`imgc: took the unpacked root after ${p.name} from the cache`);
  else {
    try {
      id = await work.cache.restore('phase', key, work.root, { log });
    } catch (e) {
      if (!(e instanceof CorruptEntry)) throw e;
      // Dropped (root untouched): build from the base instead, running the phases again.
      display.warn(e.message);
      restored = false;
    }
  }
  work.rootIs = id ? { key, id } : undefined;
  if (restored) {
    summary.base = { source: base.describe, cached: true, ms: Date.now() - t0, ...(base.key ? { key: base.key } : {}) };
    display.stageDone('base', `restored the root after ${p.name} from the cache`, Date.now() - t0);
  }
  return restored;
};

/** Lays the base down into the empty root (from the base cache when it has it). */
const layFreshBase = async (run: BuildRun, work: Work, base: BaseSource, log: StageLog, t0: number): Promise<void> => {
  const { display } = run;
  display.stage('base', base.describe);
  const r = await layBase(run.ir.base, base, work.root, {
    cache: work.cache,
    run: { log },
    onWait: () => display.info('waiting for another build laying down the same base'),
    onCorrupt: (message) => display.warn(message),
  });
  const unmet = run.opts.checkBase?.(work.root);
  if (unmet !== undefined) throw new BuildError(`${run.where(run.ir.base.loc) ? `${run.where(run.ir.base.loc)} - ` : ''}${unmet}`);
  // A base laid down just now has a checksum now: the phases after it are keyed from it.
  setKeys(run, work, base);
  run.summary.base = { source: base.describe, cached: r.cached, ms: Date.now() - t0, ...(base.key ? { key: base.key } : {}) };
  display.stageDone('base', r.cached ? `${base.describe}: from the cache` : base.describe, Date.now() - t0);
};

/**
 * Phase 0: the root after the longest cached prefix of root phases, or the
 * base laid down. Returns the index of the last phase the root already has
 * (-1 when it is the bare base).
 */
export const startRoot = async (run: BuildRun, work: Work, base: BaseSource): Promise<number> => {
  setKeys(run, work, base);
  if (base.kind === 'dir') run.display.info('--from-dir: the phase cache is not used (a directory has no cheap key)');
  let resume = resumePoint(run, work);
  const log = new StageLog(run.logsDir, '00-base');
  const t0 = Date.now();
  try {
    if (resume >= 0 && !(await restoreRoot(run, work, base, resume, log, t0))) resume = -1;
    if (resume < 0) await layFreshBase(run, work, base, log, t0);
  } finally {
    log.close();
  }
  run.session.check();
  return resume;
};

/**
 * The work root replaced by the cached root of `key` (made by another build
 * while this one waited for it): the unpacked copy when the cache keeps one,
 * else the tarball. Between phases nothing is mounted in the root.
 */
export const replaceRoot = async (work: Work, key: string, log: StageLog): Promise<void> => {
  if (mountsUnder(work.root).length || !removeTree(work.root)) throw new BuildError(`could not empty ${work.root} to put the cached root in its place`);
  mkdirSync(work.root, { mode: 0o755 });
  const id = work.cache.take(key, work.root) ?? (await work.cache.restore('phase', key, work.root, { log }));
  work.rootIs = id ? { key, id } : undefined;
};
