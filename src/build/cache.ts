// The build cache: the debootstrapped base and the root after each
// root-changing phase, as tarballs under $IMGC_CACHE (default ~/.cache/imgc,
// never inside the repository). Keys chain: a phase's key hashes the previous
// key, the phase's IR without source locations, and the target, so editing
// one phase rebuilds it and the phases after it, and nothing before.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Base, Phase } from '../ir/schema.js';
import { sha256 } from '../util/cache.js';
import type { RunOptions } from './exec.js';
import { packRoot, unpackRoot } from './tar.js';

/** Bump when what a cached root contains changes for the same key. */
export const CACHE_FORMAT = 1;

export { cacheDir, sha256 } from '../util/cache.js';

export { fileSha256 } from './sparse-hash.js';

/** JSON with object keys sorted at every level: the same value always hashes the same. */
export const stableJson = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

/** A deep copy without `loc` fields: moving a step in the file does not change what it does. */
export const withoutLocations = <T>(value: T): T =>
  JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === 'loc' ? undefined : v))) as T;

const imgcVersion = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (!existsSync(pkg)) continue;
    try {
      const json = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string; version?: string };
      if (json.name === 'imgc') return json.version ?? '0';
    } catch {
      /* keep looking */
    }
  }
  return '0';
})();

export interface BaseKeyInput {
  base: Pick<Base, 'distro' | 'suite' | 'variant' | 'include' | 'packageManager'>;
  /** The archive URI debootstrap used. */
  mirror: string;
  arch: string;
}

/** The debootstrap tarball's key: suite, variant, package set, mirror, architecture. */
export const baseKey = (i: BaseKeyInput): string =>
  sha256(
    stableJson({
      cache: CACHE_FORMAT,
      kind: 'base',
      distro: i.base.distro,
      suite: i.base.suite,
      variant: i.base.variant,
      include: [...i.base.include].sort(),
      packageManager: i.base.packageManager,
      mirror: i.mirror,
      arch: i.arch,
    }),
  );

/** A phase's key: the key of the root it starts from, what it does, and who runs it. */
export const phaseKey = (previous: string, phase: Phase, target: string): string =>
  sha256(stableJson({ cache: CACHE_FORMAT, imgc: imgcVersion, kind: 'phase', previous, phase: withoutLocations(phase), target }));


export type CacheKind = 'base' | 'phase';

export class RootCache {
  constructor(readonly dir: string) {}

  file(kind: CacheKind, key: string): string {
    return path.join(this.dir, `${kind}-${key.slice(0, 32)}.tar.zst`);
  }

  has(kind: CacheKind, key: string): boolean {
    return existsSync(this.file(kind, key));
  }

  /** Packs `root` into the cache atomically (temp name + rename); a sidecar JSON says what it is. */
  async store(kind: CacheKind, key: string, root: string, about: Record<string, unknown>, opts: RunOptions = {}): Promise<string> {
    mkdirSync(this.dir, { recursive: true });
    const file = this.file(kind, key);
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      await packRoot(root, tmp, 'zstd', opts);
      renameSync(tmp, file);
      if (kind === 'phase') this.prune();
      writeFileSync(`${file.replace(/\.tar\.zst$/, '')}.json`, `${JSON.stringify({ kind, key, created: new Date().toISOString(), ...about }, null, 2)}\n`);
    } finally {
      rmSync(tmp, { force: true });
    }
    return file;
  }

  /** Drops cached phase roots not used for `days` days (bases are kept: they are slow to remake). */
  prune(days = 14): void {
    const cutoff = Date.now() - days * 86_400_000;
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const f of names) {
      if (!/^phase-[0-9a-f]+\.tar\.zst$/.test(f)) continue;
      const file = path.join(this.dir, f);
      try {
        if (statSync(file).mtimeMs < cutoff) {
          rmSync(file, { force: true });
          rmSync(file.replace(/\.tar\.zst$/, '.json'), { force: true });
        }
      } catch {
        /* another build pruned it */
      }
    }
  }

  /** Unpacks a cached root into `root` (an existing empty directory). */
  async restore(kind: CacheKind, key: string, root: string, opts: RunOptions = {}): Promise<string> {
    const file = this.file(kind, key);
    await unpackRoot(file, root, opts);
    const now = new Date();
    try {
      utimesSync(file, now, now); // last use, for whoever prunes the cache by age
    } catch {
      /* read-only cache is fine */
    }
    return file;
  }
}

/** mtime of the lock directory (a lock whose owner never wrote its pid goes stale after a minute). */
const lockAge = (lock: string): number => {
  try {
    return statSync(lock).mtimeMs;
  } catch {
    return Date.now();
  }
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Runs `fn` holding a lock directory in the cache (mkdir is atomic), so two
 * builds needing the same base do not debootstrap it twice at once. A lock
 * left by a process that is gone is taken over.
 */
export const withCacheLock = async <T>(dir: string, name: string, fn: () => Promise<T>, onWait?: () => void): Promise<T> => {
  mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, `${name}.lock`);
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let pid = NaN;
      try {
        pid = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
      } catch {
        /* being written */
      }
      const stale = Number.isInteger(pid) && pid > 0 ? !alive(pid) : Date.now() - lockAge(lock) > 60_000;
      if (stale) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!told) onWait?.();
      told = true;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
};
