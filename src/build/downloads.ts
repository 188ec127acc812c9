// Downloads of a build, fetched on the build machine and kept in the cache by
// their sha256 (`$IMGC_CACHE/downloads/<sha256>`): a second build, or a second
// step naming the same file, does not fetch it again, and a file whose bytes
// do not have the declared sum never reaches a root.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
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
