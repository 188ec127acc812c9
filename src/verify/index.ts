// `imgc verify`: does the built filesystem hold every fact the definition
// promised? Reads a root directory or a disk image as files (never chroots)
// and names, for each fact that does not hold, the step that promised it.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Image, SourceLocation } from '../ir/schema.js';
import { run } from '../host/exec.js';
import { unpackRoot } from '../host/tar.js';
import { rootPartitionOffset } from '../host/gpt.js';
import { expectationsOf, RootFacts } from './expectations.js';
import { DirView, ImageView, type RootView } from './rootview.js';

export { DirView, ImageView, type RootView } from './rootview.js';
export { expectationsOf } from './expectations.js';

export interface VerifyFailure {
  what: string;
  reason: string;
  stepId: string;
  loc?: SourceLocation;
}

export interface VerifyResult {
  /** What was read: a root directory or an image file. */
  target: string;
  checked: number;
  failures: VerifyFailure[];
}

/** Checks every expectation against the view. */
export const verifyView = (ir: Image, view: RootView): VerifyResult => {
  const facts = new RootFacts(view);
  const failures: VerifyFailure[] = [];
  const all = expectationsOf(ir);
  for (const e of all) {
    let reason: string | undefined;
    try {
      reason = e.check(facts);
    } catch (err) {
      reason = `could not be checked: ${(err as Error).message}`;
    }
    if (reason !== undefined) failures.push({ what: e.what, reason, stepId: e.stepId, ...(e.loc ? { loc: e.loc } : {}) });
  }
  return { target: view.label, checked: all.length, failures };
};

export const verifyRoot = (ir: Image, root: string): VerifyResult => {
  const abs = path.resolve(root);
  if (!existsSync(path.join(abs, 'etc'))) throw new Error(`${root} is not a root filesystem (no etc/)`);
  return { ...verifyView(ir, new DirView(abs)), target: root };
};

/**
 * Reads a disk image or tarball without mounting it: a tarball is unpacked;
 * qcow2 is converted to raw first, then the ext4 filesystem is extracted with
 * `debugfs -R 'rdump / DIR'`. `read` gets a view of the extracted root (its
 * directory too); everything extracted is removed afterwards. `scratch` is a
 * directory with room for it. Verify and probe read images through this.
 */
export const withImageRoot = async <T>(image: string, scratch: string, read: (view: DirView, dir: string) => T | Promise<T>): Promise<T> => {
  mkdirSync(scratch, { recursive: true });
  const tmp = mkdtempSync(path.join(scratch, '.imgc-verify-'));
  try {
    const dir = path.join(tmp, 'root');
    mkdirSync(dir);
    if (/\.(tar|tar\.gz|tgz|tar\.zst|tzst)$/i.test(image)) {
      await unpackRoot(path.resolve(image), dir);
      return await read(new DirView(dir, image), dir);
    }
    let raw = path.resolve(image);
    if (/\.qcow2$/i.test(image)) {
      raw = path.join(tmp, 'image.raw');
      await run('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', image, raw]);
    }
    // A bootable disk: the root filesystem is its root partition (debugfs reads it at its offset).
    const offset = await rootPartitionOffset(raw);
    if (offset !== undefined) raw = `${raw}?offset=${offset}`;
    const r = await run('debugfs', ['-R', `rdump / ${dir}`, raw], { check: false });
    if (r.exitCode !== 0 || /rdump: .*(not found|Bad magic)/i.test(r.output)) throw new Error(`debugfs could not read ${image}: ${r.output.trim()}`);
    return await read(new ImageView(dir, raw), dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
};

/** Verifies a disk image or tarball without mounting it (see {@link withImageRoot}). */
export const verifyImage = async (ir: Image, image: string, scratch: string): Promise<VerifyResult> =>
  withImageRoot(image, scratch, (view) => ({ ...verifyView(ir, view), target: image }));

const rel = (loc: SourceLocation, dir: string, cwd: string) => path.relative(cwd, path.resolve(dir, loc.file)).split(path.sep).join('/');

/** One line per failed fact: where it was promised, by which step, and what is on disk instead. */
export const formatVerify = (res: VerifyResult, ctx: { dir: string; cwd: string; color?: boolean }): string => {
  const paint = (code: string) => (s: string) => (ctx.color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const red = paint('31');
  const cyan = paint('36');
  const gray = paint('90');
  const lines = res.failures.map((f) => {
    const where = f.loc ? `${cyan(rel(f.loc, ctx.dir, ctx.cwd))}:${f.loc.line}:${f.loc.column} - ` : '';
    return `${where}${red('verify failed')} ${gray(f.stepId)}: ${f.what}: ${f.reason}`;
  });
  const summary = `${res.target}: ${res.checked} facts checked, ${res.failures.length === 0 ? 'all hold' : `${res.failures.length} do not hold`}`;
  return `${[...lines, summary].join('\n')}\n`;
};

/** JSON form, paths of locations relative to the cwd like the checker's. */
export const verifyJson = (res: VerifyResult, ctx: { dir: string; cwd: string }): string =>
  `${JSON.stringify(
    {
      target: res.target,
      checked: res.checked,
      failed: res.failures.length,
      failures: res.failures.map((f) => ({ ...f, ...(f.loc ? { loc: { ...f.loc, file: rel(f.loc, ctx.dir, ctx.cwd) } } : {}) })),
    },
    null,
    2,
  )}\n`;
