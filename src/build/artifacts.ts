// Phase 3: files made from the finished root. Each artifact is written into a
// staging directory beside the output (same filesystem), and moved into
// place only when the whole build succeeded: a failed build leaves no
// partial artifact. Raw images are ext4 made by `mkfs.ext4 -d` (no loop
// mount); qcow2 is that raw image converted by qemu-img.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StepOf } from '../ir/schema.js';
import { fileSha256 } from './cache.js';
import { run, type RunOptions } from './exec.js';
import { packRoot, type Compression } from './tar.js';

export type ArtifactStep = StepOf<'artifact'>;

export interface ArtifactRecord {
  step: string;
  format: ArtifactStep['format'];
  output: string;
  /** sha256 of the file; for `dir`, of a canonical listing of the tree (paths, types, owners, modes, contents). */
  sha256: string;
  bytes: number;
  compression?: Compression;
  size?: string;
}

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

/** "4G" → the size argument mkfs.ext4 takes ("4G" is fine; normalised for clarity). */
const mkfsSize = (size: string) => {
  const m = /^(\d+)([MG])$/.exec(size);
  if (!m) throw new Error(`artifact size '${size}' is not N[MG]`);
  return `${m[1]}${m[2]!.toLowerCase()}`;
};

export interface ArtifactContext {
  root: string;
  /** Staging directory: artifacts land here under their output names. */
  staging: string;
  run: RunOptions;
  /** Called when an artifact is done. */
  onDone?: (rec: ArtifactRecord, ms: number) => void;
  onStart?: (step: ArtifactStep) => void;
}

const ensureInside = (dir: string, output: string): string => {
  const target = path.resolve(dir, output);
  if (!target.startsWith(dir + path.sep)) throw new Error(`artifact output '${output}' leaves the output directory`);
  return target;
};

/** Makes every artifact step into the staging directory, reusing one raw image for a raw and a qcow2 of the same size. */
export const makeArtifacts = async (steps: readonly ArtifactStep[], ctx: ArtifactContext): Promise<ArtifactRecord[]> => {
  mkdirSync(ctx.staging, { recursive: true });
  const records: ArtifactRecord[] = [];
  const rawBySize = new Map<string, string>();
  const raw = async (size: string, into?: string): Promise<string> => {
    const have = rawBySize.get(size);
    if (have && !into) return have;
    const file = into ?? path.join(ctx.staging, `.scratch-${size}.raw`);
    mkdirSync(path.dirname(file), { recursive: true });
    rmSync(file, { force: true });
    await run('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', '-E', 'root_owner=0:0', '-d', ctx.root, file, mkfsSize(size)], ctx.run);
    rawBySize.set(size, file);
    return file;
  };
  // Raw images first, so a qcow2 of the same size converts the raw artifact rather than a new one.
  const order = [...steps].sort((a, b) => Number(b.format === 'raw') - Number(a.format === 'raw'));
  const done = new Map<string, ArtifactRecord>();
  // Hashing a 4 GB raw image takes seconds of CPU: each artifact's checksum
  // is computed while the next artifact is made (by mkfs, tar, qemu-img on
  // the other cores), and all are awaited before the staging is published.
  const hashing: Promise<void>[] = [];
  const recorded = (step: ArtifactStep, started: number, rec: Promise<ArtifactRecord>): void => {
    const settled = rec.then((r) => {
      done.set(step.id, r);
      ctx.onDone?.(r, Date.now() - started);
    });
    settled.catch(() => {}); // handled: awaited below, after the artifacts
    hashing.push(settled);
  };
  try {
    for (const step of order) {
      const started = Date.now();
      ctx.onStart?.(step);
      const target = ensureInside(ctx.staging, step.output);
      mkdirSync(path.dirname(target), { recursive: true });
      rmSync(target, { recursive: true, force: true });
      switch (step.format) {
        case 'dir': {
          await run('cp', ['-a', '--one-file-system', ctx.root, target], ctx.run);
          recorded(step, started, treeSha256(target).then((t) => ({ step: step.id, format: 'dir', output: step.output, sha256: t.sha256, bytes: t.bytes })));
          break;
        }
        case 'tar': {
          const compression = step.compression ?? 'none';
          await packRoot(ctx.root, target, compression, ctx.run);
          recorded(step, started, fileSha256(target).then((sha256) => ({ step: step.id, format: 'tar', output: step.output, sha256, bytes: statSync(target).size, compression })));
          break;
        }
        case 'raw': {
          const size = step.size ?? '4G';
          await raw(size, target);
          recorded(step, started, fileSha256(target).then((sha256) => ({ step: step.id, format: 'raw', output: step.output, sha256, bytes: statSync(target).size, size })));
          break;
        }
        case 'qcow2': {
          const size = step.size ?? '4G';
          const from = await raw(size);
          await run('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', from, target], ctx.run);
          recorded(step, started, fileSha256(target).then((sha256) => ({ step: step.id, format: 'qcow2', output: step.output, sha256, bytes: statSync(target).size, size })));
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
  return records;
};

/**
 * Moves staged outputs into `outDir`, each by rename (same filesystem): an
 * old output of the same name is moved aside first and removed after.
 */
export const publish = (staging: string, outDir: string, outputs: readonly string[]): void => {
  mkdirSync(outDir, { recursive: true });
  for (const output of outputs) {
    const from = path.join(staging, output);
    const to = ensureInside(outDir, output);
    mkdirSync(path.dirname(to), { recursive: true });
    const old = `${to}.old-${process.pid}`;
    if (existsSync(to) || isLink(to)) renameSync(to, old);
    renameSync(from, to);
    rmSync(old, { recursive: true, force: true });
  }
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
