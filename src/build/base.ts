// Phase 0: the starting root. debootstrap of the base's suite from the host's
// own apt mirror (cached as a tarball), or a root the user brings with
// --from-tar / --from-dir.
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Base } from '../ir/schema.js';
import { baseKey, CorruptEntry, fileSha256, RootCache, sha256, stableJson, withCacheLock } from './cache.js';
import { haveCommand, run, SYSTEM_PATH, type RunOptions } from '../host/exec.js';
import { hostMirror, rootSourcesList, type AptMirror } from '../host/mirror.js';
import { unpackRoot } from '../host/tar.js';
import { isForeign } from '../host/binfmt.js';
import { archOf, type Arch } from '../core/arch.js';

export class BaseError extends Error {
  override name = 'BaseError';
}

export type BaseSource =
  /** `foreign`: the root's architecture is not the host's (debootstrap's second stage runs through qemu-user-static). */
  | { kind: 'debootstrap'; key: string; mirror: AptMirror; arch: Arch; foreign: boolean; describe: string }
  | { kind: 'tar'; key: string; file: string; describe: string }
  | { kind: 'dir'; key: undefined; dir: string; describe: string };

/** Decides where the root comes from and its cache key, without laying it down yet. */
export const resolveBase = async (base: Base, opts: { fromTar?: string; fromDir?: string; env?: NodeJS.ProcessEnv }): Promise<BaseSource> => {
  if (opts.fromTar && opts.fromDir) throw new BaseError('--from-tar and --from-dir exclude each other');
  if (opts.fromTar) {
    const file = path.resolve(opts.fromTar);
    if (!existsSync(file) || !statSync(file).isFile()) throw new BaseError(`--from-tar ${opts.fromTar}: no such file`);
    return { kind: 'tar', key: sha256(stableJson({ kind: 'tar', sha256: await fileSha256(file) })), file, describe: `from ${opts.fromTar}` };
  }
  if (opts.fromDir) {
    const dir = path.resolve(opts.fromDir);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new BaseError(`--from-dir ${opts.fromDir}: no such directory`);
    if (!existsSync(path.join(dir, 'etc')) || !existsSync(path.join(dir, 'usr'))) throw new BaseError(`--from-dir ${opts.fromDir}: not a root filesystem (no etc/ and usr/)`);
    return { kind: 'dir', key: undefined, dir, describe: `from ${opts.fromDir}` };
  }
  if (base.origin) {
    const what = base.origin.kind === 'contract' ? `the contract ${base.origin.file}` : `definition ${base.origin.file}`;
    throw new BaseError(
      `the base is ${what} (image '${base.origin.image}' after phase '${base.origin.phase}'): it holds facts, not a root. ` +
        "Start from that image's root: --from-tar FILE or --from-dir DIR (it is checked against the facts before any step runs)",
    );
  }
  const mirror = hostMirror({ env: opts.env ?? process.env });
  if (base.distro !== 'debian') {
    throw new BaseError(
      `base '${base.name}' is ${base.distro} ${base.suite}: it cannot be debootstrapped from this machine's Debian mirror (${mirror.uri}, from ${mirror.from}). ` +
        'Build it from a root you already have: --from-tar FILE or --from-dir DIR',
    );
  }
  if (base.packageManager !== 'apt') throw new BaseError(`base '${base.name}' uses ${base.packageManager}; debootstrap lays down apt roots only`);
  const arch = archOf(base);
  const foreign = isForeign(arch);
  return {
    kind: 'debootstrap',
    key: baseKey({ base, mirror: mirror.uri, arch }),
    mirror,
    arch,
    foreign,
    describe: `debootstrap ${base.suite} (${base.variant}${base.include.length ? `, +${base.include.length} packages` : ''}${foreign ? `, ${arch} through qemu-user-static` : ''})`,
  };
};

const debootstrapArgs = (base: Base, src: Extract<BaseSource, { kind: 'debootstrap' }>, root: string): string[] => {
  const keyring = ['/usr/share/keyrings/debian-archive-keyring.gpg'].find(existsSync);
  return [
    ...(base.variant === 'default' ? [] : [`--variant=${base.variant}`]),
    ...(base.include.length ? [`--include=${[...base.include].sort().join(',')}`] : []),
    `--components=${src.mirror.components.includes('main') ? 'main' : src.mirror.components.join(',') || 'main'}`,
    `--arch=${src.arch}`,
    // The first stage only unpacks; the second configures the packages by running them, in the root.
    ...(src.foreign ? ['--foreign'] : []),
    ...(keyring ? [`--keyring=${keyring}`] : []),
    base.suite,
    root,
    src.mirror.uri,
  ];
};

/** Makes a fresh debootstrapped root a clean base: the host's mirror as its sources, no host resolver or name. */
const finishDebootstrap = (root: string, base: Base, mirror: AptMirror) => {
  writeFileSync(path.join(root, 'etc/apt/sources.list'), rootSourcesList(mirror, base.suite));
  rmSync(path.join(root, 'etc/resolv.conf'), { force: true });
  writeFileSync(path.join(root, 'etc/hostname'), 'localhost\n');
  const debs = path.join(root, 'var/cache/apt/archives');
  if (existsSync(debs)) for (const f of readdirSync(debs)) if (f.endsWith('.deb')) rmSync(path.join(debs, f), { force: true });
};

export interface LayOptions {
  cache: RootCache | undefined;
  run: RunOptions;
  onWait?: () => void;
  /** A cached base failed its checksum and was dropped (it is made again): the message says so. */
  onCorrupt?: (message: string) => void;
}

/** Restores the cached base; false when it was corrupt (dropped, reported, `root` still empty). */
const restoreBase = async (cache: RootCache, key: string, root: string, opts: LayOptions): Promise<boolean> => {
  try {
    await cache.restore('base', key, root, opts.run);
    return true;
  } catch (e) {
    if (!(e instanceof CorruptEntry)) throw e;
    opts.onCorrupt?.(e.message);
    return false;
  }
};

/** Lays the base down into `root` (an existing empty directory). Returns whether it came from the cache. */
export const layBase = async (base: Base, src: BaseSource, root: string, opts: LayOptions): Promise<{ cached: boolean }> => {
  switch (src.kind) {
    case 'dir':
      await run('cp', ['-a', '--one-file-system', `${src.dir}/.`, root], opts.run);
      return { cached: false };
    case 'tar':
      await unpackRoot(src.file, root, opts.run);
      return { cached: false };
    case 'debootstrap': {
      const cache = opts.cache;
      if (cache?.has('base', src.key) && (await restoreBase(cache, src.key, root, opts))) return { cached: true };
      if (!(await haveCommand('debootstrap'))) throw new BaseError('debootstrap is not installed (apt-get install debootstrap), or pass --from-tar/--from-dir');
      const build = async () => {
        await run('debootstrap', debootstrapArgs(base, src, root), opts.run);
        if (src.foreign) await run('chroot', [root, '/debootstrap/debootstrap', '--second-stage'], { ...opts.run, env: { ...opts.run.env, PATH: SYSTEM_PATH } });
        finishDebootstrap(root, base, src.mirror);
      };
      if (!cache) {
        await build();
        return { cached: false };
      }
      // Another build may be laying down the same base right now: wait for it, then reuse its tarball.
      return withCacheLock(
        cache.dir,
        `base-${src.key.slice(0, 32)}`,
        async () => {
          if (cache.has('base', src.key) && (await restoreBase(cache, src.key, root, opts))) return { cached: true };
          await build();
          await cache.store('base', src.key, root, { suite: base.suite, variant: base.variant, include: base.include, mirror: src.mirror.uri, arch: src.arch }, opts.run);
          return { cached: false };
        },
        opts.onWait,
      );
    }
  }
};
