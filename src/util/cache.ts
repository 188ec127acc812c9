// imgc's cache directory and small content-addressed entries in it. Caches
// only ever hold derived data: deleting the directory is always safe.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
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

/**
 * Writes an entry of two JSON values, a small head and a large body, as two lines of one file (as
 * atomically as any entry), so that {@link readCachedIf} can judge the head without the body. The
 * body comes as JSON text (JSON.stringify's, which holds no line break), so one made elsewhere is
 * written as it is.
 */
export const writeCachedParts = (area: string, key: string, head: unknown, bodyJson: string): void => writeCached(area, key, `${JSON.stringify(head)}\n${bodyJson}`);

/**
 * The body of an entry {@link writeCachedParts} wrote, when `fresh` says its head still holds;
 * undefined when it does not, or the entry is absent, of another form or corrupt. The body is read
 * only then, from the file the head was read from (an entry replaced meanwhile is not mixed in).
 */
export const readCachedIf = <H, B>(area: string, key: string, fresh: (head: H) => boolean): B | undefined => {
  let fd: number | undefined;
  try {
    fd = openSync(path.join(cacheDir(), area, key), 'r');
    const chunks: Buffer[] = [];
    let end = -1;
    for (let at = 0; end < 0; ) {
      const chunk = Buffer.alloc(1 << 16);
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) return undefined;
      const newline = chunk.subarray(0, n).indexOf(10);
      chunks.push(chunk.subarray(0, newline < 0 ? n : newline));
      if (newline >= 0) end = at + newline;
      at += n;
    }
    if (!fresh(JSON.parse(Buffer.concat(chunks).toString('utf8')) as H)) return undefined;
    const body = Buffer.alloc(fstatSync(fd).size - end - 1);
    for (let at = 0, n = 1; at < body.length && n > 0; at += n) n = readSync(fd, body, at, body.length - at, end + 1 + at);
    return JSON.parse(body.toString('utf8')) as B;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
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
