// Phase 3: files made from the finished root. Each artifact is written into a
// staging directory beside the output (same filesystem), and moved into
// place only when the whole build succeeded: a failed build leaves no
// partial artifact. Raw images are ext4 made by `mkfs.ext4 -d` (no loop
// mount); qcow2 is that raw image converted by qemu-img. An artifact made
// from the same cached root with the same settings by the previous build into
// the same directory, and not written since, is kept where it is instead
// (see ReuseState).
import type { Arch } from '../core/arch.js';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { BuildArtifact } from '../ir/phases.js';
import { fileSha256, sha256, stableJson, withoutLocations } from './cache.js';
import { warmHashWorker } from './sparse-hash.js';
import { run, type RunOptions } from '../host/exec.js';
import { packRoot, type Compression } from '../host/tar.js';
import { derivedUuid, makeBootableDisk, makeExt4, sizeBytes } from './disk.js';

export interface ArtifactRecord {
  step: string;
  format: BuildArtifact['format'];
  output: string;
  /** sha256 of the file; for `dir`, of a canonical listing of the tree (paths, types, owners, modes, contents). */
  sha256: string;
  bytes: number;
  compression?: Compression;
  size?: string;
  bootable?: boolean;
  /** Taken over from the previous build's output, unchanged (see {@link ReuseState}). */
  reused?: boolean;
}

/**
 * What a build leaves beside its artifacts (`.imgc-artifacts.json`) so the
 * next build into the same directory can take over the ones whose inputs did
 * not change: per output, what it was made from and how it sat on disk.
 */
export interface ReuseState {
  version: 1;
  /** `root`: the id of the cached root it was made from (recorded since `imgc build --plan`, to tell a new root from new settings). */
  artifacts: Record<string, { input: string; stamp: string; record: ArtifactRecord; root?: string }>;
}

export const REUSE_STATE = '.imgc-artifacts.json';

/** What an artifact is made from: one making of a cached root (its id) and the step's settings. */
export const artifactInput = (rootId: string, step: BuildArtifact): string => {
  const { id: _id, ...settings } = withoutLocations(step);
  return sha256(stableJson({ root: rootId, artifact: settings }));
};

/**
 * How a file or tree sits on disk: each entry's path, inode, size, mtime,
 * mode and owners. Any write to it changes this; reading it costs one lstat
 * per entry, where a checksum reads every byte. The top directory's own
 * times are left out: publishing it by rename may touch them.
 */
export const diskStamp = (target: string): string => {
  const h = createHash('sha256');
  const entry = (rel: string, top: boolean): void => {
    const st = lstatSync(path.join(target, rel));
    h.update(`${rel}\0${st.mode}\0${st.uid}\0${st.gid}\0${top ? '' : `${st.ino}\0${st.size}\0${st.mtimeMs}`}\n`);
    if (st.isDirectory()) for (const name of readdirSync(path.join(target, rel)).sort()) entry(rel ? `${rel}/${name}` : name, false);
  };
  entry('', true);
  return h.digest('hex');
};

/** A digest of a directory tree that changes when any path, type, owner, mode, link target or content does. */
export const treeSha256 = async (dir: string): Promise<{ sha256: string; bytes: number }> => {
  const h = createHash('sha256');
  let bytes = 0;
  const walk = async (rel: string): Promise<void> => {
    const names = readdirSync(path.join(dir, rel)).sort();
    for (const name of names) {
      const r = rel ? `${rel}/${name}` : name;
      const abs = path.join(dir, r);
      const st = lstatSync(abs);
      const head = `${r}\0${st.mode.toString(8)}\0${st.uid}\0${st.gid}\0`;
      if (st.isSymbolicLink()) h.update(`${head}l\0${readlinkSync(abs)}\n`);
      else if (st.isDirectory()) {
        h.update(`${head}d\n`);
        await walk(r);
      } else if (st.isFile()) {
        bytes += st.size;
        h.update(`${head}f\0${st.size > 4 << 20 ? await fileSha256(abs) : createHash('sha256').update(readFileSync(abs)).digest('hex')}\n`);
      } else h.update(`${head}o\0${st.rdev}\n`);
    }
  };
  await walk('');
  return { sha256: h.digest('hex'), bytes };
};

const diskSize = (step: BuildArtifact): string => step.size ?? '4G';

/** Raw and qcow2 artifacts of the same disk share one raw image: a bootable GPT disk or a bare ext4 filesystem, of a size. */
const diskKey = (step: BuildArtifact): string => `${step.bootable ? 'boot' : 'ext4'}-${diskSize(step)}`;

export interface ArtifactContext {
  root: string;
  /** The image's name: a bootable disk's identifiers are derived from it and the output's. */
  image: string;
  /** The root's architecture: a bootable disk's loader and console are its. */
  arch: Arch;
  /** SOURCE_DATE_EPOCH: the time written into the filesystems and archives. */
  epoch?: number;
  /** The cache entry the root is, when nothing changed it since: artifacts then record their inputs, for reuse. */
  rootId?: string;
  /** The output directory of this build and, when a build into it left one, its reuse state. */
  previous?: { dir: string; state: ReuseState };
  /** Staging directory: artifacts land here under their output names. */
  staging: string;
  run: RunOptions;
  /** Called when an artifact is done. */
  onDone?: (rec: ArtifactRecord, ms: number) => void;
  onStart?: (step: BuildArtifact) => void;
}

const ensureInside = (dir: string, output: string): string => {
  const target = path.resolve(dir, output);
  if (!target.startsWith(dir + path.sep)) throw new Error(`artifact output '${output}' leaves the output directory`);
  return target;
};

/**
 * Whether the previous build's artifact for `step` is kept: made from the same
 * input (`rootId`'s root, the same settings) and nobody touched it since; else
 * why it is made again. `imgc build --plan` says the same without making it.
 */
export const artifactReuse = (
  step: BuildArtifact,
  rootId: string | undefined,
  previous: { dir: string; state: ReuseState } | undefined,
): { kept: ReuseState['artifacts'][string] } | { why: string } => {
  if (!rootId) return { why: 'the root it is made from is not a cached one left as it was' };
  const was = previous?.state.artifacts[step.output];
  if (!was) return { why: previous ? 'the last build into the output directory did not make it' : 'no earlier build into the output directory' };
  if (was.input !== artifactInput(rootId, step) || was.record.format !== step.format) {
    return { why: was.root !== undefined && was.root !== rootId ? 'the root it is made from changed' : 'its settings (or the root it is made from) changed' };
  }
  try {
    return diskStamp(ensureInside(previous!.dir, step.output)) === was.stamp ? { kept: was } : { why: 'it was written since the last build made it' };
  } catch {
    return { why: 'it is gone from the output directory' };
  }
};

/**
 * Makes every artifact step into the staging directory, reusing one raw
 * image for a raw and a qcow2 of the same size, and keeping in place the
 * previous build's artifacts whose input is unchanged (their records say
 * `reused`: there is nothing of them to publish). Returns the records and
 * the reuse state to publish beside them.
 */
export const makeArtifacts = async (steps: readonly BuildArtifact[], ctx: ArtifactContext): Promise<{ records: ArtifactRecord[]; state: ReuseState }> => {
  mkdirSync(ctx.staging, { recursive: true });
  const records: ArtifactRecord[] = [];
  const state: ReuseState = { version: 1, artifacts: {} };
  const rawBySize = new Map<string, string>();
  const epoch = ctx.epoch !== undefined ? { epoch: ctx.epoch } : {};
  const raw = async (step: BuildArtifact, into?: string): Promise<string> => {
    const key = diskKey(step);
    const have = rawBySize.get(key);
    if (have && !into) return have;
    const file = into ?? path.join(ctx.staging, `.scratch-${key}.raw`);
    mkdirSync(path.dirname(file), { recursive: true });
    rmSync(file, { force: true });
    const size = diskSize(step);
    if (step.bootable) await makeBootableDisk(ctx.root, file, { image: ctx.image, output: step.output, size, arch: ctx.arch, scratch: ctx.staging, run: ctx.run, ...epoch });
    else await makeExt4(ctx.root, file, { bytes: sizeBytes(size), offset: 0, uuid: derivedUuid('imgc-ext4', ctx.image, step.output), run: ctx.run, ...epoch });
    rawBySize.set(key, file);
    return file;
  };
  // Raw images first, so a qcow2 of the same disk converts the raw artifact rather than a new one.
  const order = [...steps].sort((a, b) => Number(b.format === 'raw') - Number(a.format === 'raw'));
  const done = new Map<string, ArtifactRecord>();
  // Hashing a 4 GB raw image takes seconds of CPU: each artifact's checksum
  // is computed while the next artifact is made (by mkfs, tar, qemu-img on
  // the other cores), and all are awaited before the staging is published.
  const hashing: Promise<void>[] = [];
  const recorded = (step: BuildArtifact, started: number, rec: Promise<ArtifactRecord>): void => {
    const settled = rec.then((r) => {
      done.set(step.id, r);
      ctx.onDone?.(r, Date.now() - started);
    });
    settled.catch(() => {}); // handled: awaited below, after the artifacts
    hashing.push(settled);
  };
  // Whether the previous build's artifact can be kept costs a walk of it (a
  // `dir` is thousands of lstats): every step's is found out while the first
  // command that makes an artifact runs, rather than each in turn before it.
  const inputOf = (step: BuildArtifact) => (ctx.rootId ? artifactInput(ctx.rootId, step) : undefined);
  const keptFrom = new Map<BuildArtifact, ReuseState['artifacts'][string] | undefined>();
  const reuseOf = (step: BuildArtifact) => {
    if (!keptFrom.has(step)) {
      const r = artifactReuse(step, ctx.rootId, ctx.previous);
      keptFrom.set(step, 'kept' in r ? r.kept : undefined);
    }
    return keptFrom.get(step);
  };
  /**
   * `started`: a command that makes an artifact just started (its process
   * runs already). Meanwhile the other steps' reuse is checked, and a worker
   * to hash the artifact is started.
   */
  const meanwhile = <T>(started: Promise<T>): Promise<T> => {
    for (const s of order) reuseOf(s);
    warmHashWorker();
    return started;
  };
  try {
    for (const step of order) {
      const started = Date.now();
      ctx.onStart?.(step);
      const target = ensureInside(ctx.staging, step.output);
      mkdirSync(path.dirname(target), { recursive: true });
      rmSync(target, { recursive: true, force: true });
      const input = inputOf(step);
      // Once made (or kept) and hashed: what it was made from and how it now sits on disk, for the next build.
      const settle = (made: Promise<ArtifactRecord>, stamp = () => diskStamp(target)): void =>
        recorded(
          step,
          started,
          made.then((rec) => {
            if (input) state.artifacts[step.output] = { input, stamp: stamp(), record: { ...rec, reused: false }, root: ctx.rootId! };
            return rec;
          }),
        );
      const old = reuseOf(step);
      if (old) {
        // Left where it is, unstaged: publishing moves only what was made, so a failed build leaves it as it was too.
        if (step.format === 'raw') rawBySize.set(diskKey(step), ensureInside(ctx.previous!.dir, step.output));
        settle(Promise.resolve({ ...old.record, step: step.id, reused: true }), () => old.stamp);
        continue;
      }
      switch (step.format) {
        case 'dir': {
          await meanwhile(run('cp', ['-a', '--one-file-system', ctx.root, target], ctx.run));
          settle(treeSha256(target).then((t) => ({ step: step.id, format: 'dir', output: step.output, sha256: t.sha256, bytes: t.bytes })));
          break;
        }
        case 'tar': {
          const compression = step.compression ?? 'none';
          await meanwhile(packRoot(ctx.root, target, compression, ctx.run, ctx.epoch));
          settle(fileSha256(target).then((sha256) => ({ step: step.id, format: 'tar', output: step.output, sha256, bytes: statSync(target).size, compression })));
          break;
        }
        case 'ext4':
        case 'raw': {
          const size = diskSize(step);
          await meanwhile(raw(step, target));
          settle(fileSha256(target).then((sha256) => ({ step: step.id, format: step.format, output: step.output, sha256, bytes: statSync(target).size, size, ...(step.bootable ? { bootable: true } : {}) })));
          break;
        }
        case 'qcow2': {
          const size = diskSize(step);
          const from = await meanwhile(raw(step));
          await meanwhile(run('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', from, target], ctx.run));
          settle(fileSha256(target).then((sha256) => ({ step: step.id, format: 'qcow2', output: step.output, sha256, bytes: statSync(target).size, size, ...(step.bootable ? { bootable: true } : {}) })));
          break;
        }
      }
    }
  } finally {
    // Never leave a checksum running (or its error unhandled) when a later artifact failed.
    await Promise.allSettled(hashing);
  }
  await Promise.all(hashing);
  for (const f of readdirSync(ctx.staging)) if (f.startsWith('.scratch-')) rmSync(path.join(ctx.staging, f), { force: true });
  for (const s of steps) records.push(done.get(s.id)!);
  return { records, state };
};

/**
 * Moves staged outputs into `outDir`, each by rename (same filesystem): an
 * old output of the same name is moved aside first and removed once the new
 * one is in place. The old ones are removed together, after the renames:
 * unlinking a multi-gigabyte image costs the kernel a few tenths of a second.
 */
export const publish = async (staging: string, outDir: string, outputs: readonly string[]): Promise<void> => {
  mkdirSync(outDir, { recursive: true });
  const replaced: string[] = [];
  const removeReplaced = () => replaced.map((old) => rm(old, { recursive: true, force: true }));
  try {
    for (const output of outputs) {
      const from = path.join(staging, output);
      const to = ensureInside(outDir, output);
      mkdirSync(path.dirname(to), { recursive: true });
      const old = `${to}.old-${process.pid}`;
      const had = existsSync(to) || isLink(to);
      if (had) renameSync(to, old);
      renameSync(from, to);
      if (had) replaced.push(old);
    }
  } catch (e) {
    await Promise.allSettled(removeReplaced()); // the outputs that were replaced; the one that failed keeps its old copy aside
    throw e;
  }
  await Promise.all(removeReplaced());
};

const isLink = (p: string) => {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
};

/** `sha256sum -c` compatible lines for the file artifacts. */
export const sha256sums = (records: readonly ArtifactRecord[]): string =>
  records
    .filter((r) => r.format !== 'dir')
    .map((r) => `${r.sha256}  ${r.output}\n`)
    .join('');
