// imgc's cache directory and small content-addressed entries in it. Caches
// only ever hold derived data: deleting the directory is always safe.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** $IMGC_CACHE, else $XDG_CACHE_HOME/imgc, else ~/.cache/imgc. */
export const cacheDir = (env: NodeJS.ProcessEnv = process.env): string =>
  path.resolve(env['IMGC_CACHE'] || path.join(env['XDG_CACHE_HOME'] || path.join(homedir(), '.cache'), 'imgc'));

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** Reads a cache entry (text, or with 'bytes' a Buffer); undefined when absent or unreadable. */
export function readCached(area: string, key: string): string | undefined;
export function readCached(area: string, key: string, as: 'bytes'): Buffer | undefined;
export function readCached(area: string, key: string, as?: 'bytes'): string | Buffer | undefined {
  try {
    const file = path.join(cacheDir(), area, key);
    return as === 'bytes' ? readFileSync(file) : readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Writes a cache entry atomically; a cache that cannot be written is skipped. */
export const writeCached = (area: string, key: string, content: string | Uint8Array): void => {
  try {
    const dir = path.join(cacheDir(), area);
    mkdirSync(dir, { recursive: true });
    const tmp = path.join(dir, `.${key}.${process.pid}.tmp`);
    writeFileSync(tmp, content);
    renameSync(tmp, path.join(dir, key));
  } catch {
    // read-only home, full disk: run without the cache
  }
};

/** A file and the sha256 of its content when a result was made from it ('' when it could not be read). */
export interface HashedInput {
  file: string;
  sha256: string;
}

// A directory's "content" is its list of entries (a role read by the definition): adding or removing a file changes it.
const contentHash = (file: string): string | undefined => {
  try {
    return statSync(file).isDirectory()
      ? sha256(JSON.stringify(readdirSync(file, { withFileTypes: true }).map((e) => [e.name, e.isDirectory()]).sort()))
      : sha256(readFileSync(file));
  } catch {
    return undefined;
  }
};

/** The files (and directories) a result was made from, with their contents' hashes. */
export const hashInputs = (files: readonly string[]): HashedInput[] => files.map((file) => ({ file, sha256: contentHash(file) ?? '' }));

/** Whether a result made from `inputs` still holds: every file has the content it had (one absent then is absent still). */
export const inputsUnchanged = (inputs: readonly HashedInput[]): boolean => inputs.every((i) => (contentHash(i.file) ?? '') === i.sha256);
