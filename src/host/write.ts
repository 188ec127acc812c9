import { mkdirSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes `files` as the whole contents of `dir`, atomically: into a sibling
 * temp directory first, then swapped in by rename. A failure leaves the old
 * directory (or none) and no half-written output.
 */
export const writeTreeAtomically = (dir: string, files: Record<string, string>): void => {
  const parent = path.dirname(dir);
  mkdirSync(parent, { recursive: true });
  const tmp = path.join(parent, `.${path.basename(dir)}.tmp-${process.pid}`);
  const old = path.join(parent, `.${path.basename(dir)}.old-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  try {
    for (const [rel, content] of Object.entries(files)) {
      const target = path.join(tmp, rel);
      if (!target.startsWith(tmp + path.sep)) throw new Error(`refusing to write outside the output directory: ${rel}`);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, content, { mode: rel.endsWith('.sh') ? 0o755 : 0o644 });
    }
    if (existsSync(dir)) renameSync(dir, old);
    renameSync(tmp, dir);
    rmSync(old, { recursive: true, force: true });
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    if (existsSync(old) && !existsSync(dir)) renameSync(old, dir);
    throw e;
  }
};

/** Writes one file atomically: a temp file beside it, then renamed over it. */
export const writeFileAtomically = (file: string, content: string): void => {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
  try {
    writeFileSync(tmp, content, { mode: 0o644 });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
};
