// The build cache: the debootstrapped base and the root after each
// root-changing phase, as tarballs under $IMGC_CACHE (default ~/.cache/imgc,
// never inside the repository). Keys chain: a phase's key hashes the previous
// key, the phase's IR without source locations, the values of the variables
// it uses, the target and imgc's version, so editing one phase rebuilds it and
// the phases after it, and nothing before. Every tarball's sha256 is recorded
// when it is written and checked before it is used (docs/build-faults.md).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Base, Phase } from '../ir/schema.js';
import type { IRVariable } from '../core/variables.js';
import { sha256 } from '../util/cache.js';
import { removeTree, type RunOptions } from '../host/exec.js';
import { fileSha256 } from './sparse-hash.js';
import { pidAlive as alive } from './reclaim.js';
import { packRoot, unpackRoot } from '../host/tar.js';
import { lockOrWait } from '../host/flock.js';

/** Bump when what a cached root contains changes for the same key. */
export const CACHE_FORMAT = 1;
/** Bump when what a cached phase root contains changes for the same key (a base is unchanged: its key keeps CACHE_FORMAT). */
export const PHASE_FORMAT = 2;

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

/**
 * What a phase's key is made of, each part hashed on its own, so a later
 * build (or `imgc build --plan`) can say which input changed: the key of the
 * root it starts from, what the phase does (and each of its steps), the values
 * of the variables it uses (the IR holds only references), who runs it,
 * SOURCE_DATE_EPOCH, imgc's version and the cache's format. Recorded beside
 * the cached root (its sidecar's `inputs`). Sensitive variables have no value
 * here: a phase using one is never cached.
 */
export interface KeyInputs {
  previous: string;
  phase: string;
  /** Step id → hash of what the step does (hooks included), to name the steps that changed. */
  steps: Record<string, string>;
  variables: Record<string, string>;
  target: string;
  epoch: number | null;
  imgc: string;
  format: string;
}

export const keyInputs = (previous: string, phase: Phase, target: string, variables: readonly IRVariable[] = [], epoch?: number): KeyInputs => {
  const ir = withoutLocations(phase);
  return {
    previous,
    phase: sha256(stableJson(ir)),
    // Without the step's id (its position): a step inserted before it does not make it a changed step.
    steps: Object.fromEntries([...ir.pre, ...ir.steps, ...ir.post].map((s) => [s.id, sha256(stableJson({ ...s, id: undefined }))])),
    variables: Object.fromEntries(variables.map((v) => [v.name, sha256(stableJson({ type: v.type, value: v.value ?? null }))])),
    target,
    epoch: epoch ?? null,
    imgc: imgcVersion,
    format: `${CACHE_FORMAT}.${PHASE_FORMAT}`,
  };
};

/** A phase's key, from the same inputs {@link keyInputs} records (the key's own form is kept: existing cache entries stay valid). */
export const phaseKey = (previous: string, phase: Phase, target: string, variables: readonly IRVariable[] = [], epoch?: number): string =>
  sha256(
    stableJson({
      // SOURCE_DATE_EPOCH reaches the steps (useradd's password-change day, …): another epoch, another root.
      ...(epoch !== undefined ? { epoch } : {}),
      cache: CACHE_FORMAT,
      // A phase root holds no build logs or rebuildable caches since format 2 (./settle.ts); bases are unchanged.
      phaseFormat: PHASE_FORMAT,
      imgc: imgcVersion,
      kind: 'phase',
      previous,
      phase: withoutLocations(phase),
      target,
      ...(variables.length ? { variables: variables.map((v) => ({ name: v.name, type: v.type, value: v.value ?? null })) } : {}),
    }),
  );

/** A cached tarball that does not match the checksum recorded when it was written: it was dropped. */
export class CorruptEntry extends Error {
  override name = 'CorruptEntry';
}


export type CacheKind = 'base' | 'phase';

/**
 * How many unpacked roots the cache keeps (about as large as the root each,
 * 0.5–1 GB for a node image). Unpacking a cached tarball costs seconds of
 * kernel time per gigabyte; moving a directory costs nothing.
 */
export const UNPACKED_ROOTS = 2;

export class RootCache {
  constructor(
    readonly dir: string,
    private readonly keepUnpacked = UNPACKED_ROOTS,
  ) {}

  file(kind: CacheKind, key: string): string {
    return path.join(this.dir, `${kind}-${key.slice(0, 32)}.tar.zst`);
  }

  /** The lock a build holds while it makes the root of phase `key` (./stages.ts). */
  lockFile(key: string): string {
    mkdirSync(this.dir, { recursive: true });
    return path.join(this.dir, `phase-${key.slice(0, 32)}.lock`);
  }

  has(kind: CacheKind, key: string): boolean {
    return existsSync(this.file(kind, key));
  }

  /**
   * Packs `root` into the cache atomically (temp name + rename); a sidecar
   * JSON says what it is. Returns the entry's id: a key says what a root was
   * made from, the id which making of it this is (a --no-cache build makes
   * the same key again, with packages of another day).
   */
  async store(kind: CacheKind, key: string, root: string, about: Record<string, unknown>, opts: RunOptions = {}): Promise<string> {
    mkdirSync(this.dir, { recursive: true });
    const file = this.file(kind, key);
    const tmp = `${file}.tmp-${process.pid}`;
    const id = randomBytes(8).toString('hex');
    try {
      await packRoot(root, tmp, 'zstd', opts);
      // The sidecar (with the tarball's checksum) first: a tarball is never in place without the sum that vouches for it.
      const sum = await fileSha256(tmp);
      const side = this.sidecar(kind, key);
      writeFileSync(`${side}.tmp-${process.pid}`, `${JSON.stringify({ kind, key, id, sha256: sum, created: new Date().toISOString(), ...about }, null, 2)}\n`);
      renameSync(`${side}.tmp-${process.pid}`, side);
      renameSync(tmp, file);
      if (kind === 'phase') this.prune();
    } finally {
      rmSync(tmp, { force: true });
    }
    return id;
  }

  private sidecar(kind: CacheKind, key: string): string {
    return this.file(kind, key).replace(/\.tar\.zst$/, '.json');
  }

  private about(kind: CacheKind, key: string): { id?: unknown; sha256?: unknown } {
    try {
      return JSON.parse(readFileSync(this.sidecar(kind, key), 'utf8')) as { id?: unknown; sha256?: unknown };
    } catch {
      return {};
    }
  }

  /**
   * The sidecars of the cached phase roots (what each was made of: image,
   * phase, target, created, and the key's inputs since they are recorded),
   * newest first. Read only: `imgc build --plan` compares its keys with them.
   */
  phaseEntries(): { key: string; image?: unknown; phase?: unknown; target?: unknown; created?: unknown; inputs?: KeyInputs }[] {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const entries = [];
    for (const f of names) {
      if (!/^phase-[0-9a-f]+\.json$/.test(f) || !existsSync(path.join(this.dir, f.replace(/\.json$/, '.tar.zst')))) continue;
      try {
        const about = JSON.parse(readFileSync(path.join(this.dir, f), 'utf8')) as { key?: unknown; created?: unknown };
        if (typeof about.key === 'string') entries.push({ ...about, key: about.key });
      } catch {
        /* being written, or not ours */
      }
    }
    return entries.sort((a, b) => String(b.created ?? '').localeCompare(String(a.created ?? '')));
  }

  /** The id of the cached root of `key` (undefined for an entry of an older imgc, or none). */
  id(kind: CacheKind, key: string): string | undefined {
    const id = this.about(kind, key).id;
    return typeof id === 'string' && /^[0-9a-f]+$/.test(id) ? id : undefined;
  }

  /** The sha256 recorded when the tarball of `key` was written (undefined: none, or an entry of an older imgc). */
  checksum(kind: CacheKind, key: string): string | undefined {
    const sum = this.about(kind, key).sha256;
    return typeof sum === 'string' && /^[0-9a-f]{64}$/.test(sum) ? sum : undefined;
  }

  /** Removes the entry of `key`: tarball, sidecar and any unpacked copy. */
  drop(kind: CacheKind, key: string): void {
    rmSync(this.file(kind, key), { force: true });
    rmSync(this.sidecar(kind, key), { force: true });
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const f of names) if (f.startsWith(`root-${key.slice(0, 32)}-`) && !f.includes('.removing-')) removeTree(path.join(this.dir, f));
  }

  /**
   * Throws CorruptEntry (after dropping the entry) when the tarball of `key`
   * does not match its recorded checksum, or has none to check against.
   */
  async verify(kind: CacheKind, key: string): Promise<void> {
    const file = this.file(kind, key);
    const want = this.checksum(kind, key);
    const got = await fileSha256(file);
    if (want === got) return;
    this.drop(kind, key);
    throw new CorruptEntry(
      `cache entry ${file} ${want ? `is corrupt (sha256 ${got.slice(0, 12)}…, recorded ${want.slice(0, 12)}… when it was written)` : 'has no recorded checksum (an older imgc wrote it, or its writing was cut short)'}: dropped it; making it again`,
    );
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

  /** Where the unpacked copy of a cached phase root lives: named by key and id, so it is never taken for another making of the key. */
  private unpackedDir(key: string, id: string): string {
    return path.join(this.dir, `root-${key.slice(0, 32)}-${id}`);
  }

  /**
   * Moves the unpacked copy of the cached root of `key` into `root` (an
   * existing empty directory), so no other build can use it meanwhile.
   * Returns the entry's id, or undefined when there is no unpacked copy of
   * the current entry (or it is on another filesystem than `root`): the
   * tarball is then the way back.
   */
  take(key: string, root: string): string | undefined {
    const id = this.id('phase', key);
    if (!id) return undefined;
    try {
      renameSync(this.unpackedDir(key, id), root);
    } catch {
      return undefined;
    }
    return id;
  }

  /**
   * Moves `root`, which must be exactly the cached root `key`/`id`, into the
   * cache unpacked. False (and `root` untouched) when the cache has it
   * already or is on another filesystem.
   */
  keep(key: string, id: string, root: string): boolean {
    mkdirSync(this.dir, { recursive: true });
    const dir = this.unpackedDir(key, id);
    try {
      renameSync(root, dir);
    } catch {
      return false;
    }
    const now = new Date();
    utimesSync(dir, now, now); // the newest are kept
    this.pruneUnpacked();
    return true;
  }

  /** Removes all but the `keepUnpacked` most recently kept unpacked roots, and what a killed removal left. */
  private pruneUnpacked(): void {
    const names = readdirSync(this.dir);
    for (const f of names) {
      const m = /^root-[0-9a-f-]+\.removing-(\d+)$/.exec(f);
      if (m && !alive(Number(m[1]))) removeTree(path.join(this.dir, f));
    }
    const dirs = names
      .filter((f) => /^root-[0-9a-f]+-[0-9a-f]+$/.test(f))
      .map((f) => {
        const dir = path.join(this.dir, f);
        try {
          return { dir, mtime: statSync(dir).mtimeMs };
        } catch {
          return { dir, mtime: 0 };
        }
      })
      .sort((a, b) => b.mtime - a.mtime);
    for (const { dir } of dirs.slice(this.keepUnpacked)) {
      // Renamed away first, so a build never takes a half-removed root.
      const doomed = `${dir}.removing-${process.pid}`;
      try {
        renameSync(dir, doomed);
      } catch {
        continue; // taken by a build meanwhile
      }
      removeTree(doomed);
    }
  }

  /**
   * Unpacks a cached root into `root` (an existing empty directory) after
   * checking its checksum (CorruptEntry, `root` untouched, when it does not
   * match); returns its id when it is certain which entry was unpacked.
   */
  async restore(kind: CacheKind, key: string, root: string, opts: RunOptions = {}): Promise<string | undefined> {
    const file = this.file(kind, key);
    const before = this.id(kind, key);
    await this.verify(kind, key);
    await unpackRoot(file, root, opts);
    const now = new Date();
    try {
      utimesSync(file, now, now); // last use, for whoever prunes the cache by age
    } catch {
      /* read-only cache is fine */
    }
    // Another build may have stored the key again meanwhile.
    return before === this.id(kind, key) ? before : undefined;
  }
}

/**
 * Runs `fn` holding the lock `name` in the cache (flock(2), released when
 * this process ends however it ends: ../host/flock.ts), so two builds
 * needing the same base or phase root do not make it twice at once.
 */
export const withCacheLock = async <T>(dir: string, name: string, fn: () => Promise<T>, onWait?: () => void): Promise<T> => {
  mkdirSync(dir, { recursive: true });
  const { lock } = await lockOrWait(path.join(dir, `${name}.lock`), () => onWait?.());
  try {
    return await fn();
  } finally {
    await lock.release();
  }
};
