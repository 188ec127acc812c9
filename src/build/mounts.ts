// /proc, /sys, /dev and /dev/pts inside a root, mounted only for the steps
// that need them and always taken down again: unmount is synchronous so it
// also works from signal handlers and process exit, in reverse order, with a
// lazy-unmount fallback when something still holds a mount busy.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_PATH } from '../host/exec.js';

/** Decodes the octal escapes of /proc/self/mountinfo (`\040` is a space). */
const unescapeMount = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** Mount points at or below `dir`, from /proc/self/mountinfo (deepest last in mount order). */
export const mountsUnder = (dir: string, mountinfo = '/proc/self/mountinfo'): string[] => {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    real = path.resolve(dir);
  }
  const text = readFileSync(mountinfo, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => unescapeMount(l.split(' ')[4] ?? ''))
    .filter((mp) => mp === real || mp.startsWith(`${real}/`));
};

const sh = (args: string[]) => spawnSync(args[0]!, args.slice(1), { env: { PATH: SYSTEM_PATH }, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });

/** What a chroot needs mounted, in mount order. */
const chrootMounts: Array<{ target: string; args: (src: string) => string[] }> = [
  { target: 'proc', args: (t) => ['mount', '-t', 'proc', 'proc', t] },
  { target: 'sys', args: (t) => ['mount', '-t', 'sysfs', '-o', 'ro,nosuid,nodev,noexec', 'sysfs', t] },
  { target: 'dev', args: (t) => ['mount', '--bind', '/dev', t] },
  { target: 'dev/pts', args: (t) => ['mount', '--bind', '/dev/pts', t] },
];

export class MountError extends Error {
  override name = 'MountError';
}

/** The kernel filesystems of one root; `mount()` is idempotent, `unmountAll()` always safe to call. */
export class RootMounts {
  private readonly mounted: string[] = [];

  constructor(readonly root: string) {}

  get active(): boolean {
    return this.mounted.length > 0;
  }

  mount(log?: (line: string) => void): void {
    if (this.active) return;
    try {
      for (const m of chrootMounts) {
        const target = path.join(this.root, m.target);
        mkdirSync(target, { recursive: true });
        const r = sh(m.args(target));
        if (r.status !== 0) throw new MountError(`cannot mount ${target}: ${(r.stderr || r.stdout).trim()}`);
        this.mounted.push(target);
        log?.(`mounted ${target}`);
      }
    } catch (e) {
      this.unmountAll(log);
      throw e;
    }
  }

  /** Unmounts in reverse order; falls back to a lazy unmount; returns what could not be unmounted. */
  unmountAll(log?: (line: string) => void): string[] {
    const failed: string[] = [];
    while (this.mounted.length) {
      const target = this.mounted.pop()!;
      let r = sh(['umount', target]);
      if (r.status !== 0) {
        log?.(`umount ${target} failed (${(r.stderr || '').trim()}); lazy unmount`);
        r = sh(['umount', '-l', target]);
      }
      if (r.status !== 0) failed.push(target);
      else log?.(`unmounted ${target}`);
    }
    // Anything else still mounted below the root (a step's own mounts): lazily detach it too.
    const self = (() => {
      try {
        return realpathSync(this.root);
      } catch {
        return this.root;
      }
    })();
    for (const mp of mountsUnder(this.root).filter((m) => m !== self).reverse()) {
      if (sh(['umount', '-l', mp]).status !== 0) failed.push(mp);
      else log?.(`lazily unmounted leftover ${mp}`);
    }
    return failed;
  }
}
