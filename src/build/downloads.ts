// Downloads of a build, fetched on the build machine and kept in the cache by
// their sha256 (`$IMGC_CACHE/downloads/<sha256>`): a second build, or a second
// step naming the same file, does not fetch it again, and a file whose bytes
// do not have the declared sum never reaches a root.
import { createHash } from 'node:crypto';
import { copyFileSync, createWriteStream, existsSync, linkSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { cacheDir } from '../util/cache.js';
import { fileSha256 } from './sparse-hash.js';

/** A download whose bytes did not have the declared sum, or that could not be fetched. */
export class DownloadError extends Error {
  override name = 'DownloadError';
}

/** The cache file of a sum. */
export const downloadPath = (sha256: string, env: NodeJS.ProcessEnv = process.env): string => path.join(cacheDir(env), 'downloads', sha256);

/**
 * The cached file of `url` with sum `sha256`: from the cache when a file with
 * that sum is there (checked again: a corrupt entry is fetched anew), else
 * fetched, checked and stored. A wrong sum names both.
 */
export const fetchToCache = async (url: string, sha256: string, env: NodeJS.ProcessEnv = process.env): Promise<string> => {
  const want = sha256.toLowerCase();
  const file = downloadPath(want, env);
  if (existsSync(file) && (await fileSha256(file)) === want) return file;
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.part`;
  try {
    let res: Response;
    try {
      res = await fetch(url, { redirect: 'follow' });
    } catch (e) {
      throw new DownloadError(`cannot fetch ${url}: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`);
    }
    if (!res.ok || !res.body) throw new DownloadError(`cannot fetch ${url}: HTTP ${res.status} ${res.statusText}`);
    const hash = createHash('sha256');
    await pipeline(
      Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const c of chunks) {
          hash.update(c);
          yield c;
        }
      },
      createWriteStream(tmp),
    );
    const got = hash.digest('hex');
    if (got !== want) throw new DownloadError(`${url}: sha256 mismatch: expected ${want}, got ${got}`);
    renameSync(tmp, file);
    return file;
  } finally {
    rmSync(tmp, { force: true });
  }
};

/** A file a step fetches, its URL and sum resolved (no variable references left). */
export interface StepDownload {
  readonly step: string;
  readonly url: string;
  readonly sha256: string;
}

/** Where a phase script finds the files the build fetched for it, inside the root. */
export const STAGED_IN_ROOT = '/run/imgc-downloads';

/** A download that failed, with the step that asked for it. */
export class StepDownloadError extends DownloadError {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Fetches `wanted` into the cache and puts each file in the root at
 * STAGED_IN_ROOT/<sha256> (a hard link where the cache shares the root's
 * file system), where the shell helper `imgc_get` takes it instead of
 * fetching. `remove` takes the directory away again.
 */
export const stageDownloads = async (wanted: readonly StepDownload[], root: string, env: NodeJS.ProcessEnv = process.env): Promise<{ dir: string; remove: () => void }> => {
  const dir = path.join(root, STAGED_IN_ROOT);
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (!wanted.length) return { dir: STAGED_IN_ROOT, remove };
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  try {
    for (const d of wanted) {
      let cached: string;
      try {
        cached = await fetchToCache(d.url, d.sha256, env);
      } catch (e) {
        throw e instanceof DownloadError ? new StepDownloadError(d.step, e.message) : e;
      }
      const staged = path.join(dir, d.sha256.toLowerCase());
      if (existsSync(staged)) continue;
      try {
        linkSync(cached, staged);
      } catch {
        copyFileSync(cached, staged);
      }
    }
  } catch (e) {
    remove();
    throw e;
  }
  return { dir: STAGED_IN_ROOT, remove };
};
