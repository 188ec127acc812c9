// Root filesystems as tarballs: numeric owners, modes, xattrs (file
// capabilities) and ACLs preserved, so a root packed and unpacked is the same
// root. Used by the cache, `--from-tar` and the `tar` artifact.
import { run, type RunOptions } from './exec.js';

export type Compression = 'none' | 'gzip' | 'zstd';

const compressFlag = (c: Compression): string[] => (c === 'gzip' ? ['--gzip'] : c === 'zstd' ? ['--use-compress-program=zstd -T0 -3 -q'] : []);

/** Compression from a file name (the tar artifact's and --from-tar's convention). */
export const compressionOf = (file: string): Compression =>
  /\.(tgz|gz)$/.test(file) ? 'gzip' : /\.(tzst|zst)$/.test(file) ? 'zstd' : 'none';

/**
 * With SOURCE_DATE_EPOCH: the same root gives the same bytes, whatever the
 * directory order or the times of the build: entries sorted by name, mtimes
 * clamped to the epoch, no atime/ctime in pax headers, owners numeric only.
 */
const reproducible = (epoch: number | undefined): string[] =>
  epoch === undefined
    ? []
    : ['--sort=name', `--mtime=@${epoch}`, '--clamp-mtime', '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime'];

/** Packs the contents of `root` into `file` (all of it: `.` relative to the root). */
export const packRoot = (root: string, file: string, compression: Compression, opts: RunOptions = {}, epoch?: number) =>
  run('tar', ['--create', '--file', file, '--numeric-owner', '--xattrs', "--xattrs-include=*", '--acls', '--sparse', ...reproducible(epoch), ...compressFlag(compression), '-C', root, '.'], opts);

/** Unpacks `file` (tar detects gzip/zstd itself) into the (existing, empty) directory `root`, keeping owners, modes and xattrs. */
export const unpackRoot = (file: string, root: string, opts: RunOptions = {}) =>
  run(
    'tar',
    ['--extract', '--file', file, '--numeric-owner', '--same-owner', '--preserve-permissions', '--xattrs', "--xattrs-include=*", '--acls', '-C', root],
    opts,
  );
