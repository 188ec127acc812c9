// What a killed build leaves (SIGKILL, OOM, a power cut: no cleanup ran): its
// work directory with /proc, /sys, /dev still mounted in the root, its staged
// artifacts in --out, half-written cache tarballs. Every build records its
// owner in the directories it makes: pid, the process's start time (field 22
// of /proc/PID/stat) and the boot id, so a pid reused by another process, or
// the same pid after a reboot, is not taken for the owner. At its start the
// next build reclaims what belongs to owners that are gone: it kills what
// still runs inside (a chroot'd apt, a debootstrap), unmounts, and removes.
// A live build's directories are never touched.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { removeTree, SYSTEM_PATH } from '../host/exec.js';
import { killAndWait, statFields } from '../host/processes.js';
import { mountsUnder } from './mounts.js';

/** The owner record's name inside a work or staging directory. */
export const OWNER_FILE = '.imgc-owner';

export interface Owner {
  pid: number;
  /** Clock ticks after boot when the process started (/proc/PID/stat field 22). */
  start: string;
  boot: string;
}

const bootId = (): string => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
};

/** The start time of process `pid` (field 22 of its stat line), undefined when there is none. */
export const startTime = (pid: number): string | undefined => statFields(pid)?.[19];

export const thisOwner = (): Owner => ({ pid: process.pid, start: startTime(process.pid) ?? '', boot: bootId() });

/** Records this process as the owner of `dir` (right after making it). */
export const claim = (dir: string): void => writeFileSync(path.join(dir, OWNER_FILE), `${JSON.stringify(thisOwner())}\n`);

/** Whether the process that wrote `owner` still runs. */
export const ownerAlive = (owner: Owner): boolean => owner.boot === bootId() && startTime(owner.pid) === owner.start;

const readOwner = (dir: string): Owner | undefined => {
  try {
    const o = JSON.parse(readFileSync(path.join(dir, OWNER_FILE), 'utf8')) as Partial<Owner>;
    return typeof o.pid === 'number' && typeof o.start === 'string' && typeof o.boot === 'string' ? (o as Owner) : undefined;
  } catch {
    return undefined;
  }
};

/** A directory without an owner record is left alone unless it is older than this (an older imgc's, or one a build is making right now). */
const UNOWNED_GRACE_MS = 3_600_000;

/** Whether a process `pid` exists (EPERM: it does, someone else's). */
export const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** In a work directory a build kept on purpose (--keep-root): no later build reclaims it. */
const KEPT_FILE = '.imgc-kept';

/** Marks `dir` as kept on purpose: the user removes it, never a later build. */
export const markKept = (dir: string): void => writeFileSync(path.join(dir, KEPT_FILE), 'kept by imgc build --keep-root: no later build removes this directory; remove it when done\n');

/** Whether `dir` was left by a build that is gone; the owner's pid when known. */
const stale = (dir: string): { pid?: number } | undefined => {
  if (existsSync(path.join(dir, KEPT_FILE))) return undefined;
  const owner = readOwner(dir);
  if (owner) return ownerAlive(owner) ? undefined : { pid: owner.pid };
  // A staging directory names its pid (.imgc-staging-PID): gone is gone, a live one may be another process (left alone).
  const named = /^\.imgc-staging-(\d+)$/.exec(path.basename(dir));
  if (named && !pidAlive(Number(named[1]))) return { pid: Number(named[1]) };
  try {
    return Date.now() - statSync(dir).mtimeMs > UNOWNED_GRACE_MS ? {} : undefined;
  } catch {
    return undefined;
  }
};

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);

/** Processes whose root, working directory or command line is inside `dir`: what a killed build left running there. */
const processesIn = (dir: string): number[] => {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const links = ['root', 'cwd'].map((l) => {
        try {
          return readlinkSync(`/proc/${name}/${l}`);
        } catch {
          return '';
        }
      });
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (links.some((l) => inside(l, dir)) || args.some((a) => inside(a, dir))) pids.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
};

export interface Reclaimed {
  dir: string;
  pid?: number;
  unmounted: number;
  killed: number;
  /** Mounts that would not go: the directory was left in place. */
  stuck: string[];
  /** The directory is still there although nothing was mounted in it (rm could not remove everything). */
  notRemoved?: true;
}

/** Kills every process that works in `dir`, and waits until they are gone; how many there were. */
const stopProcessesIn = (dir: string): number => {
  const killed = processesIn(dir);
  killAndWait(killed, 5000);
  return killed.length;
};

/**
 * Kills what runs in `dir`, unmounts everything below it (deepest first),
 * removes it. Also what a test's cleanup uses for a root its timed-out test
 * left mounted.
 */
export const reclaimDir = (dir: string, pid?: number): Reclaimed => {
  const killed = stopProcessesIn(dir);
  const mounts = mountsUnder(dir).reverse();
  const stuck: string[] = [];
  for (const mp of mounts) {
    const r = spawnSync('umount', [mp], { env: { PATH: SYSTEM_PATH }, stdio: 'ignore' });
    if (r.status !== 0 && spawnSync('umount', ['-l', mp], { env: { PATH: SYSTEM_PATH }, stdio: 'ignore' }).status !== 0) stuck.push(mp);
  }
  const base = { dir, ...(pid !== undefined ? { pid } : {}), unmounted: mounts.length - stuck.length, killed, stuck };
  // rm never reaches into a mount (--one-file-system), but a directory with one left is not removed at all.
  if (stuck.length || mountsUnder(dir).length) return base;
  // A child of the dead build that was still writing (a dpkg, a tar) can refill the tree while rm empties it: once more after stopping it.
  if (removeTree(dir)) return base;
  stopProcessesIn(dir);
  return removeTree(dir) ? base : { ...base, notRemoved: true };
};

/**
 * Reclaims what killed builds left: work directories (`.imgc-work-*`) in
 * `workParent`, staging directories (`.imgc-staging-*`) in `outDir`, and
 * cache tarballs being written (`*.tmp-PID`) in `cacheDir` whose writer is gone.
 */
export const reclaimStale = (where: { workParent: string; outDir: string; cacheDir: string }): Reclaimed[] => {
  const found: Reclaimed[] = [];
  const scan = (parent: string, prefix: string) => {
    let names: string[] = [];
    try {
      names = readdirSync(parent);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      const dir = path.join(parent, name);
      const s = stale(dir);
      if (s) found.push(reclaimDir(dir, s.pid));
    }
  };
  scan(where.workParent, '.imgc-work-');
  scan(where.outDir, '.imgc-staging-');
  try {
    for (const name of readdirSync(where.cacheDir)) {
      const m = /\.tmp-(\d+)$/.exec(name);
      if (m && !pidAlive(Number(m[1]))) rmSync(path.join(where.cacheDir, name), { force: true, recursive: true });
    }
  } catch {
    /* no cache yet */
  }
  return found;
};

/** The line a build prints for each reclaimed directory. */
export const describeReclaimed = (r: Reclaimed, cwd: string): string => {
  const what = [r.killed ? `stopped ${r.killed} process${r.killed === 1 ? '' : 'es'}` : '', r.unmounted ? `unmounted ${r.unmounted} filesystem${r.unmounted === 1 ? '' : 's'}` : '']
    .filter(Boolean)
    .join(', ');
  const name = path.relative(cwd, r.dir) || r.dir;
  if (r.notRemoved) return `a killed build${r.pid ? ` (pid ${r.pid})` : ''} left ${name}; could not remove all of it (rm -rf failed: see what is left, e.g. immutable files); left it in place`;
  return r.stuck.length
    ? `a killed build${r.pid ? ` (pid ${r.pid})` : ''} left ${name}; could not unmount ${r.stuck.join(', ')}: left it in place`
    : `reclaimed ${name}, left by a killed build${r.pid ? ` (pid ${r.pid})` : ''}${what ? `: ${what}, removed it` : ''}`;
};
