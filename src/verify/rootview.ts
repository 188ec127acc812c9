// Reading a built root as files, never by chrooting into it. Paths are the
// image's own absolute paths; symlinks are resolved inside the root (an
// absolute link target points into the image, not at the host).
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

export type { EntryType, Meta, RootView } from '../core/root.js';
import type { EntryType, Meta, RootView } from '../core/root.js';

const typeOf = (st: import('node:fs').Stats): EntryType =>
  st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';

/** A root directory on this machine (a build root, a `dir` artifact, an extracted image). */
export class DirView implements RootView {
  constructor(
    readonly root: string,
    readonly label: string = root,
  ) {}

  /** The host path of image path `p` with every symlink resolved inside the root. */
  resolve(p: string, followLast = true): string | undefined {
    const parts = path.posix.normalize(`/${p}`).split('/').filter(Boolean);
    const done: string[] = [];
    let hops = 0;
    while (parts.length) {
      const part = parts.shift()!;
      if (part === '..') {
        done.pop();
        continue;
      }
      if (part === '.') continue;
      const candidate = path.join(this.root, ...done, part);
      let st;
      try {
        st = lstatSync(candidate);
      } catch {
        return parts.length === 0 ? candidate : undefined;
      }
      if (st.isSymbolicLink() && (parts.length > 0 || followLast)) {
        if (++hops > 40) return undefined;
        const target = readlinkSync(candidate);
        const rest = target.split('/').filter(Boolean);
        if (target.startsWith('/')) done.length = 0;
        parts.unshift(...rest);
        continue;
      }
      done.push(part);
    }
    return path.join(this.root, ...done);
  }

  private statAt(p: string, follow: boolean): Meta | undefined {
    const h = this.resolve(p, follow);
    if (!h) return undefined;
    try {
      const st = lstatSync(h);
      return { type: typeOf(st), mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
    } catch {
      return undefined;
    }
  }

  lstat(p: string): Meta | undefined {
    return this.statAt(p, false);
  }

  stat(p: string): Meta | undefined {
    return this.statAt(p, true);
  }

  meta(p: string): Meta | undefined {
    return this.lstat(p);
  }

  readFile(p: string): Buffer | undefined {
    const h = this.resolve(p, true);
    if (!h) return undefined;
    try {
      return readFileSync(h);
    } catch {
      return undefined;
    }
  }

  readlink(p: string): string | undefined {
    try {
      const h = this.resolve(p, false);
      return h ? readlinkSync(h) : undefined;
    } catch {
      return undefined;
    }
  }

  readdir(p: string): string[] {
    const h = this.resolve(p, true);
    if (!h) return [];
    try {
      return readdirSync(h).sort();
    } catch {
      return [];
    }
  }
}

const debugfsTypes: Record<string, EntryType> = { regular: 'file', directory: 'dir', symlink: 'symlink' };

/** Parses `debugfs -R 'stat PATH'` output: type, mode, owner. */
export const parseDebugfsStat = (text: string): Meta | undefined => {
  const t = /Type:\s+(\S+)\s+Mode:\s+([0-7]+)/.exec(text);
  const o = /User:\s+(\d+)\s+Group:\s+(\d+)/.exec(text);
  if (!t || !o) return undefined;
  return { type: debugfsTypes[t[1]!] ?? 'other', mode: parseInt(t[2]!, 8) & 0o7777, uid: Number(o[1]), gid: Number(o[2]) };
};

/**
 * An ext4 image extracted with `debugfs rdump` into `dir`. Contents and
 * links come from the extracted copy; exact modes and owners come from the
 * image itself (rdump drops setuid/setgid bits when it chowns).
 */
export class ImageView extends DirView {
  private readonly cache = new Map<string, Meta | undefined>();

  constructor(
    dir: string,
    readonly image: string,
  ) {
    super(dir, image);
  }

  preloadMeta(paths: readonly string[]): void {
    const keys = [...new Set(paths.map((p) => path.posix.normalize(`/${p}`)))].filter((k) => !k.includes('"') && !k.includes('\n') && !this.cache.has(k));
    if (!keys.length) return;
    const r = spawnSync('debugfs', ['-f', '-', this.image], { input: keys.map((k) => `stat "${k}"\n`).join(''), encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] });
    if (r.status !== 0) return;
    // One section a path, each after the command's echo: `debugfs: stat "/etc"`.
    for (const section of r.stdout.split(/^debugfs: /m).slice(1)) {
      const key = /^stat "(.*)"$/m.exec(section)?.[1];
      const m = parseDebugfsStat(section);
      if (key !== undefined && m) this.cache.set(key, m);
    }
  }

  override meta(p: string): Meta | undefined {
    const key = path.posix.normalize(`/${p}`);
    if (this.cache.has(key)) return this.cache.get(key);
    let m: Meta | undefined;
    if (!key.includes('"')) {
      const r = spawnSync('debugfs', ['-R', `stat "${key}"`, this.image], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      m = r.status === 0 ? parseDebugfsStat(r.stdout) : undefined;
    }
    if (!m) m = super.lstat(p);
    this.cache.set(key, m);
    return m;
  }
}
