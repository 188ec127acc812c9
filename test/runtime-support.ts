// Shared by test/runtime.test.ts and test/decommission.test.ts: a real Debian
// root (the build's cached debootstrap tarball, src/build/base.ts), running a
// script in it with chroot, and a listing of the tree (type, mode, owner,
// sha256 of every file) to prove what changed.
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { layBase, resolveBase } from '../src/build/base.js';
import { cacheDir, RootCache } from '../src/build/cache.js';
import { chrootEnv } from '../src/build/chroot.js';
import { mountsUnder, RootMounts } from '../src/build/mounts.js';
import type { Image } from '../src/ir/schema.js';
import { tempDir } from './helpers/cli.js';
import { rootTestsOff } from './helpers/root.js';
import { run as ansibleRun, workspace, writeFiles } from './compilers/ansible-support.js';

const haveDebootstrap = (() => {
  try {
    return lstatSync('/usr/sbin/debootstrap').isFile();
  } catch {
    return false;
  }
})();
const isRoot = process.getuid?.() === 0;

/** Why the chroot tests cannot run here, or undefined when they can. */
export const cannotChroot: string | undefined = rootTestsOff ?? (!isRoot ? 'needs root (chroot, mounts, apt in the root)' : !haveDebootstrap ? 'needs debootstrap' : undefined);

/** A fresh root of `ir`'s base in a temp directory (from the build cache; debootstrapped into it on first use). */
export const freshRoot = async (ir: Image, prefix: string): Promise<string> => {
  const root = path.join(tempDir(prefix), 'root');
  await execa('mkdir', ['-p', root]);
  const src = await resolveBase(ir.base, {});
  await layBase(ir.base, src, root, { cache: new RootCache(cacheDir()), run: {} });
  return root;
};

/** Removes a root, refusing while anything is still mounted below it. */
export const removeRoot = (root: string): void => {
  const left = mountsUnder(root);
  if (left.length) throw new Error(`still mounted below ${root}: ${left.join(', ')}`);
  if (process.env['IMGC_KEEP_TMP'] !== '1') rmSync(path.dirname(root), { recursive: true, force: true });
};

/** Runs `script` as `chroot ROOT /bin/sh -s` (stdin), with a clean environment. */
export const inRoot = (root: string, script: string) =>
  execa('chroot', [root, '/bin/sh', '-s'], { input: script, env: chrootEnv(), extendEnv: false, reject: false });

/**
 * Runs the shell target's phase script `rel` of `files` in the root as imgc
 * build and build.sh do: staged with phases/helpers.sh in /run/imgc and run as
 * a file (it sources helpers.sh from its own directory); both removed after.
 */
export const phaseInRoot = async (root: string, files: Readonly<Record<string, string>>, rel: string, env: Readonly<Record<string, string>> = {}) => {
  const dir = path.join(root, 'run/imgc');
  mkdirSync(dir, { recursive: true });
  for (const f of [rel, 'phases/helpers.sh']) writeFileSync(path.join(dir, path.basename(f)), files[f]!);
  try {
    return await execa('chroot', [root, '/bin/sh', `/run/imgc/${path.basename(rel)}`], { env: chrootEnv(env), extendEnv: false, reject: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const skipTop = new Set(['proc', 'sys', 'dev']);

/** path → "type mode uid:gid content" for every entry of the root (not below /proc, /sys, /dev). */
export const listing = (root: string): Map<string, string> => {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    const abs = path.join(root, rel);
    const st = lstatSync(abs);
    const head = `${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid}`;
    if (st.isSymbolicLink()) out.set(rel, `link ${head} ${readlinkSync(abs)}`);
    else if (st.isFile()) out.set(rel, `file ${head} ${createHash('sha256').update(readFileSync(abs)).digest('hex')}`);
    else if (st.isDirectory()) {
      out.set(rel, `dir ${head}`);
      if (rel === '' || !skipTop.has(rel))
        for (const e of readdirSync(abs).sort()) walk(rel === '' ? e : `${rel}/${e}`);
    } else out.set(rel, `other ${head} ${st.rdev}`);
  };
  walk('');
  return out;
};

/** The entries that differ between two listings: added, removed, changed. */
export const diffListings = (a: Map<string, string>, b: Map<string, string>): string[] => {
  const out: string[] = [];
  for (const [k, v] of a) if (!b.has(k)) out.push(`- ${k}`);
  else if (b.get(k) !== v) out.push(`~ ${k} (${v} -> ${b.get(k)})`);
  for (const k of b.keys()) if (!a.has(k)) out.push(`+ ${k}`);
  return out.sort();
};

/** Where Ansible's chroot connection puts its module files inside the root (removed after each run, as the builder does). */
const ANSIBLE_TMP = '/tmp/.imgc-ansible';

/**
 * Runs `body` with the host's resolv.conf and the kernel filesystems in the
 * root, as apt there needs; then takes both away and removes the root (left
 * in place if something would not unmount).
 */
export const withAptReadyRoot = async (root: string, body: () => Promise<void>): Promise<void> => {
  const mounts = new RootMounts(root);
  try {
    copyFileSync('/etc/resolv.conf', path.join(root, 'etc/resolv.conf'));
    mounts.mount();
    await body();
  } finally {
    const failed = mounts.unmountAll();
    rmSync(path.join(root, 'etc/resolv.conf'), { force: true });
    if (!failed.length) removeRoot(root);
  }
};

/** Installs the python3 Ansible's chroot connection runs modules with (needs network: resolv.conf and mounts in place). */
export const withPython = async (root: string): Promise<void> => {
  const r = await inRoot(root, 'apt-get install -y -q --no-install-recommends python3 python3-apt >/dev/null');
  if (r.exitCode !== 0) throw new Error(`could not install python3 into ${root}: ${r.stderr}`);
};

/** Runs `playbook` of the compiled `files` against the root through community.general.chroot. */
export const playInRoot = async (root: string, files: Record<string, string>, playbook: string) => {
  const ws = workspace('in-root');
  try {
    writeFiles(ws.out, files);
    // With the network: apt in the root fetches from the mirror, as in a build.
    return await ansibleRun('ansible-playbook', ['-i', `${root},`, '-c', 'community.general.chroot', playbook], ws.out, ws.home, { ANSIBLE_REMOTE_TEMP: ANSIBLE_TMP }, { network: true });
  } finally {
    rmSync(path.join(root, ANSIBLE_TMP), { recursive: true, force: true });
    ws.remove();
  }
};
