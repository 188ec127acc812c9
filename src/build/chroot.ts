// Getting a root ready to run steps in, and putting it back: no service may
// start (policy-rc.d exits 101), name resolution works while steps download
// (the host's resolv.conf, copied in), and both are undone before the root is
// cached or turned into artifacts. Mounts come from RootMounts, per need.
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_PATH } from '../host/exec.js';
import type { Session } from './session.js';

const exists = (p: string) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/** The environment of every command run inside the root: nothing from the host leaks in. */
export const chrootEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  PATH: SYSTEM_PATH,
  HOME: '/root',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  DEBIAN_FRONTEND: 'noninteractive',
  DEBCONF_NONINTERACTIVE_SEEN: 'true',
  TERM: 'dumb',
  ...extra,
});

/**
 * Puts `content` at `rel` in the root for the duration, saving what was there
 * (file or symlink, by rename so a symlink stays a symlink). The returned
 * function restores it; if a step rewrote the file meanwhile, the step's
 * version is kept.
 */
const substitute = (root: string, rel: string, content: string, mode: number): (() => void) => {
  const file = path.join(root, rel);
  const saved = path.join(path.dirname(file), `.${path.basename(file)}.imgc-saved`);
  mkdirSync(path.dirname(file), { recursive: true });
  const had = exists(file);
  if (had) {
    rmSync(saved, { force: true });
    renameSync(file, saved);
  }
  writeFileSync(file, content, { mode });
  return () => {
    let ours = false;
    try {
      ours = !lstatSync(file).isSymbolicLink() && readFileSync(file, 'utf8') === content;
    } catch {
      ours = false;
    }
    if (ours) rmSync(file, { force: true });
    if (had) {
      if (ours || !exists(file)) renameSync(saved, file);
      else rmSync(saved, { force: true });
    }
  };
};

export const POLICY_RC_D = '#!/bin/sh\n# imgc build: no service starts in a build root.\nexit 101\n';

export interface PrepareOptions {
  /** Steps will download: give the root the host's resolver for the duration. */
  network: boolean;
  log?: (line: string) => void;
}

/** Prepares the root for running steps; the cleanup is registered with the session and returned. */
export const prepareRoot = (session: Session, root: string, opts: PrepareOptions): (() => void) => {
  const undo: Array<() => void> = [];
  undo.push(substitute(root, 'usr/sbin/policy-rc.d', POLICY_RC_D, 0o755));
  opts.log?.('policy-rc.d: services will not start');
  if (opts.network && existsSync('/etc/resolv.conf')) {
    undo.push(substitute(root, 'etc/resolv.conf', readFileSync('/etc/resolv.conf', 'utf8'), 0o644));
    opts.log?.("resolv.conf: the host's, for this phase");
  }
  return session.defer(`restore ${root}`, () => {
    while (undo.length) undo.pop()!();
  });
};

/** Copies a script into the root (under `dirInRoot`, e.g. /run/imgc) for one run; `remove` takes it and the directory away. */
export const placeScript = (root: string, dirInRoot: string, name: string, content: string | Buffer): { inRoot: string; remove: () => void } => {
  const dir = path.join(root, dirInRoot);
  const created = !existsSync(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const inRoot = path.posix.join(dirInRoot, name);
  const file = path.join(root, inRoot);
  writeFileSync(file, content, { mode: 0o700 });
  return {
    inRoot,
    remove: () => {
      rmSync(file, { force: true });
      if (created) rmSync(dir, { recursive: true, force: true });
    },
  };
};
