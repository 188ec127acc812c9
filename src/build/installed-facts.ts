// What installing one apt package really adds to a root, beyond what the
// archive's Contents index can say: the users and groups its maintainer
// scripts create, and its paths under /etc and /opt, both those in its dpkg
// file list (empty directories included, which Contents leaves out) and those
// its scripts create (openssh-server's /etc/ssh/sshd_config). Each package is
// installed into a fresh copy of the base root, its dependencies first, so
// what it adds is its own even when it is also a dependency of another
// package in the list (a shared root would give a path two packages create
// to whichever came first). `npm run gen:packages` merges this into the
// archive data of the packages it installs.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readGroups, readPasswd } from '../core/root.js';
import { CommandError, run, type LogSink } from '../host/exec.js';
import { hostMirror, rootSourcesList, type AptMirror } from '../host/mirror.js';
import { DirView } from '../verify/rootview.js';
import { isToolLeftover } from './base-facts.js';
import { chrootEnv, prepareRoot } from './chroot.js';
import { RootMounts } from './mounts.js';
import { claim, reclaimDir } from './reclaim.js';
import { Session } from './session.js';

export interface InstalledFacts {
  users: string[];
  groups: string[];
  paths: string[];
}

export interface InstalledFactsOptions {
  /** The root's suite (e.g. bookworm): its apt sources are the host's mirror for it, as a build's root has them. */
  suite: string;
  /** Where the work directory (the copies of the root) goes; the system's temp directory by default. */
  workParent?: string;
  /** Every command's output lines. */
  log?: LogSink;
  /** One line per package as it starts. */
  progress?: (line: string) => void;
  /** The host's apt mirror (read from this machine's apt configuration by default). */
  mirror?: AptMirror;
}

export class InstalledFactsError extends Error {
  override name = 'InstalledFactsError';
}

/** The trees a package's facts are read from: what a definition writes into, and what the checker knows of a package. */
const FACT_TREES = ['/etc', '/opt'] as const;

/**
 * Paths that are not facts to rely on. Host keys: openssh-server's postinst
 * generates them, they differ on every machine and an image must not carry
 * them (stdlib's sealing step removes /etc/ssh/ssh_host_*; sshd's keygen unit
 * makes new ones at first boot). The backups and locks that useradd and
 * groupadd leave directly in /etc (passwd-, .pwd.lock): the base's facts
 * leave them out by the same rule.
 */
export const hostSpecific = (p: string): boolean =>
  /^\/etc\/ssh\/ssh_host_[^/]*$/.test(p) || (path.posix.dirname(p) === '/etc' && isToolLeftover(path.posix.basename(p)));

/**
 * Paths a tool made as a record of state, not files of the package: the links
 * update-ca-certificates makes, one per certificate named by its subject (its
 * cache of /usr/share/ca-certificates: the directory is the fact), and those
 * deb-systemd-helper makes when a postinst enables a unit (x.wants/, aliases:
 * the service's enabled state, which enableService and disableService change).
 */
const stateRecord = (p: string): boolean =>
  /^\/etc\/ssl\/certs\/./.test(p) || /^\/etc\/systemd\/(system|user)\/[^/]+(\.wants|\.requires|\.service|\.socket|\.timer|\.target|\.path)(\/|$)/.test(p);

/**
 * The paths of an install worth relying on: not host-specific, not a state
 * record, and not a directory that holds only such records (/etc/systemd/system
 * on a root without systemd came with the links): deepest first, so a parent
 * sees its children's verdict.
 */
export const reliedOn = (paths: readonly string[]): string[] => {
  const dropped = new Set(paths.filter((p) => hostSpecific(p) || stateRecord(p)));
  for (const d of [...paths].sort((a, b) => b.length - a.length)) {
    const below = paths.filter((p) => p.startsWith(`${d}/`));
    if (below.length && below.every((p) => dropped.has(p))) dropped.add(d);
  }
  return paths.filter((p) => !dropped.has(p));
};

/** Whether `p` is below one of the fact trees (not the tree itself). */
const inFactTree = (p: string): boolean => FACT_TREES.some((t) => p.startsWith(`${t}/`));

/** `p` and its parent directories below its fact tree. */
const withParents = (p: string): string[] => {
  const out: string[] = [];
  for (let q = p; inFactTree(q); q = path.posix.dirname(q)) out.push(q);
  return out;
};

/** What a root holds that a package's facts are read from. */
export interface Snapshot {
  users: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  /** Every file, directory and symlink below the fact trees (symlinks not followed). */
  paths: ReadonlySet<string>;
}

/** Reads the users, groups and fact-tree paths of the root at `root`. */
export const snapshot = (root: string): Snapshot => {
  const view = new DirView(root);
  const paths = new Set<string>();
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(path.join(root, dir));
    } catch {
      return;
    }
    for (const e of entries) {
      const p = `${dir}/${e}`;
      paths.add(p);
      if (lstatSync(path.join(root, p)).isDirectory()) walk(p);
    }
  };
  for (const t of FACT_TREES) if (view.lstat(t)?.type === 'dir') walk(t);
  return { users: new Set(readPasswd(view).keys()), groups: new Set(readGroups(view).keys()), paths };
};

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();
const added = (before: ReadonlySet<string>, after: ReadonlySet<string>): string[] => sorted([...after].filter((x) => !before.has(x)));

/**
 * A package's facts from the root before and after installing it, and its
 * dpkg file list: the users and groups it added; its listed paths below the
 * fact trees that the root has, the paths it created there, and their parent
 * directories (an already existing parent is still where the package's file
 * lives); without the host-specific ones.
 */
export const factsBetween = (before: Snapshot, after: Snapshot, listed: readonly string[]): InstalledFacts => {
  const own = [...listed.filter((p) => after.paths.has(p)), ...added(before.paths, after.paths)].filter((p) => inFactTree(p) && !hostSpecific(p));
  return { users: added(before.users, after.users), groups: added(before.groups, after.groups), paths: reliedOn(sorted(own.flatMap(withParents))) };
};

/** The packages `apt-get install -s` would unpack ("Inst NAME (…)" lines), in its order. */
export const simulatedInstalls = (output: string): string[] =>
  output
    .split('\n')
    .map((l) => /^Inst (\S+)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined)
    .map((n) => n.replace(/:[a-z0-9]+$/, ''));

/** The reason apt gives for a package it cannot install, for a message that names the package. */
const aptReason = (output: string): string =>
  output
    .split('\n')
    .filter((l) => l.startsWith('E: '))
    .map((l) => l.slice(3))
    .join('; ') || output.trim().split('\n').slice(-3).join(' ');

/** dpkg's file list of an installed package (the same as `dpkg -L`, read from its info directory). */
const dpkgList = (root: string, name: string): string[] => {
  const info = path.join(root, 'var/lib/dpkg/info');
  const file = readdirSync(info).find((f) => f === `${name}.list` || (f.startsWith(`${name}:`) && f.endsWith('.list')));
  if (!file) throw new InstalledFactsError(`package '${name}' was installed but dpkg has no file list for it (${info})`);
  return readFileSync(path.join(info, file), 'utf8').split('\n').filter((p) => p.startsWith('/'));
};

/** Names of the packages dpkg has installed in the root. */
const installedPackages = (root: string): Set<string> =>
  new Set(
    readFileSync(path.join(root, 'var/lib/dpkg/status'), 'utf8')
      .split(/\n\n+/)
      .filter((para) => /^Status: install ok installed$/m.test(para))
      .map((para) => /^Package: (.*)$/m.exec(para)?.[1] ?? ''),
  );

const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/;

/**
 * Installs each of `names` into its own fresh copy of the base root at `root`
 * (which is left as it is) with apt-get from the host's mirror, no
 * recommends, no service started; returns per package, sorted, what
 * installing that package added (its dependencies are installed before the
 * root is read). The copies and their mounts are removed whatever happens,
 * an interrupt included.
 */
export const installedFacts = async (root: string, names: readonly string[], opts: InstalledFactsOptions): Promise<Record<string, InstalledFacts>> => {
  const wanted = sorted(names);
  const bad = wanted.filter((n) => !PACKAGE_NAME.test(n));
  if (bad.length) throw new InstalledFactsError(`not a package name: ${bad.map((n) => `'${n}'`).join(', ')}`);
  if (!existsSync(path.join(root, 'var/lib/dpkg/status'))) throw new InstalledFactsError(`${root} is not a Debian root (no var/lib/dpkg/status)`);
  const present = installedPackages(root);
  const already = wanted.filter((n) => present.has(n));
  if (already.length) {
    throw new InstalledFactsError(`already installed in ${root}, so installing cannot show what they add: ${already.join(', ')} (their facts are the base's)`);
  }
  const mirror = opts.mirror ?? hostMirror();
  const session = new Session((l) => opts.log?.write(`${l}\n`));
  return session.guard(async () => {
    const parent = opts.workParent ?? tmpdir();
    mkdirSync(parent, { recursive: true });
    const work = mkdtempSync(path.join(parent, 'imgc-facts-'));
    claim(work);
    // Kills what still runs in it, unmounts what is left, removes it: also after an interrupt.
    session.defer(`remove ${work}`, () => reclaimDir(work));
    // After an interrupt stopped a command, the error is the interrupt, not the command's failure.
    const exec = async (file: string, args: string[], check = true) => {
      try {
        const r = await run(file, args, { env: chrootEnv(), extendEnv: false, check, ...(opts.log ? { log: opts.log } : {}) });
        session.check();
        return r;
      } catch (e) {
        session.check();
        throw e;
      }
    };
    const inRoot = (dir: string, args: string[], check = true) => exec('chroot', [dir, ...args], check);
    const copy = async (from: string, to: string) => {
      mkdirSync(to);
      await exec('cp', ['-a', '--one-file-system', `${from}/.`, to]);
    };
    const withMounts = async <T>(dir: string, fn: () => Promise<T>): Promise<T> => {
      const mounts = new RootMounts(dir);
      const unmount = session.defer(`unmount ${dir}`, () => mounts.unmountAll());
      mounts.mount();
      try {
        return await fn();
      } finally {
        unmount();
      }
    };

    // The template: the root with the host's mirror as its sources, fresh package lists,
    // no service start and the host's resolver; every package's root is a copy of it.
    const template = path.join(work, 'template');
    await copy(root, template);
    writeFileSync(path.join(template, 'etc/apt/sources.list'), rootSourcesList(mirror, opts.suite));
    prepareRoot(session, template, { network: true });
    const plans = new Map<string, string[]>();
    await withMounts(template, async () => {
      await inRoot(template, ['apt-get', 'update', '-q']);
      for (const name of wanted) {
        const sim = await inRoot(template, ['apt-get', 'install', '-s', '--no-install-recommends', name], false);
        if (sim.exitCode !== 0) throw new InstalledFactsError(`package '${name}' cannot be installed from ${mirror.uri} ${opts.suite}: ${aptReason(sim.output)}`);
        const plan = simulatedInstalls(sim.output);
        if (!plan.includes(name)) throw new InstalledFactsError(`apt-get would not install package '${name}' itself (a virtual package? it would install: ${plan.join(', ') || 'nothing'})`);
        plans.set(name, plan);
      }
      // Downloaded once into the template, so that each copy has them; one package at a time, as each is
      // installed alone (two of them may conflict: chrony and systemd-timesyncd are both a time-daemon).
      for (const name of wanted) await inRoot(template, ['apt-get', 'install', '-y', '-q', '--download-only', '--no-install-recommends', name]);
    });

    const out: Record<string, InstalledFacts> = {};
    for (const name of wanted) {
      session.check();
      opts.progress?.(`${name}: installing ${plans.get(name)!.length - 1} dependencies, then ${name}`);
      const dir = path.join(work, name);
      await copy(template, dir);
      out[name] = await withMounts(dir, async () => {
        const deps = plans.get(name)!.filter((n) => n !== name);
        const install = async (what: string, pkgs: string[]) => {
          try {
            await inRoot(dir, ['apt-get', 'install', '-y', '-q', '--no-install-recommends', ...pkgs]);
          } catch (e) {
            if (e instanceof CommandError) throw new InstalledFactsError(`installing ${what} failed: ${aptReason(e.output)}`);
            throw e;
          }
        };
        if (deps.length) await install(`the dependencies of '${name}'`, deps);
        const between = installedPackages(dir);
        if (between.has(name)) throw new InstalledFactsError(`installing the dependencies of '${name}' installed '${name}' too (they depend on it): what it adds cannot be told apart`);
        const before = snapshot(dir);
        await install(`'${name}'`, [name]);
        const extra = [...installedPackages(dir)].filter((n) => n !== name && !between.has(n));
        if (extra.length) throw new InstalledFactsError(`installing '${name}' after its dependencies also installed ${extra.join(', ')}: what it adds cannot be told apart`);
        return factsBetween(before, snapshot(dir), dpkgList(dir, name));
      });
      reclaimDir(dir);
    }
    return out;
  });
};
