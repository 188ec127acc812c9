// What the package tools leave in a root that tells when, or in what order, a
// build ran rather than what the image is: dpkg's, apt's and
// update-alternatives' logs (clock times) and the caches apt and ldconfig
// rebuild on their own (binary files that hold times and hash orders). Two
// builds of the same definition differ in them and nowhere else, so after
// each root phase the logs are emptied (kept, with their owners and modes:
// logrotate and the tools expect them) and the caches removed (apt and
// ldconfig make them again when they next run). The image's own clean-up
// (stdlib sysprep()) goes further; this is the build's.
import { lstatSync, realpathSync, rmSync, truncateSync } from 'node:fs';
import path from 'node:path';

/** Logs written while packages are installed: emptied. */
export const BUILD_LOGS = ['/var/log/dpkg.log', '/var/log/apt/history.log', '/var/log/apt/term.log', '/var/log/alternatives.log'] as const;
/** Caches rebuilt on demand, and apt's compressed solver log: removed. */
export const BUILD_CACHES = ['/var/cache/apt/pkgcache.bin', '/var/cache/apt/srcpkgcache.bin', '/var/cache/ldconfig/aux-cache', '/var/log/apt/eipp.log.xz'] as const;

/** `p` inside `root` when it is a regular file whose directory resolves inside the root (a symlinked /var/log pointing out is left alone). */
const fileInRoot = (root: string, p: string): string | undefined => {
  const file = path.join(root, p);
  try {
    const top = realpathSync(root);
    const dir = realpathSync(path.dirname(file));
    if (dir !== top && !dir.startsWith(`${top}/`)) return undefined;
    return lstatSync(file).isFile() ? path.join(dir, path.basename(file)) : undefined;
  } catch {
    return undefined;
  }
};

/** Empties the build's logs and removes the rebuildable caches in `root`; returns the paths (in the root) it changed. */
export const settleRoot = (root: string): string[] => {
  const changed: string[] = [];
  for (const p of BUILD_LOGS) {
    const file = fileInRoot(root, p);
    if (file && lstatSync(file).size > 0) {
      truncateSync(file, 0);
      changed.push(p);
    }
  }
  for (const p of BUILD_CACHES) {
    const file = fileInRoot(root, p);
    if (file) {
      rmSync(file, { force: true });
      changed.push(p);
    }
  }
  return changed;
};
