// The package managers a base can have, one record per family: how each
// target (shell phase scripts, Ansible, cloud-init's runcmd) and the build's
// runner install, remove, purge, hold and query packages with it. Steps speak
// of packages; a base's `packageManager` picks the record. Adding dnf's shell
// or cloud-init rendering is filling its fields here (and its helper bodies in
// src/compilers/shell/helpers.ts); a field left out is a target that refuses
// the family (IMGC2002, src/compilers/package-managers.ts).
import type { PackageManager as Family } from '../core/packages.js';
import type { HelperName, ShellPackageManager } from '../emit/shell/emitted.js';
import { words } from '../emit/shell/quote.js';
import { bool, int, str, unsafe, word } from '../emit/ansible/quote.js';
import { map, seq, type Node, type YMap } from '../emit/ansible/yaml.js';
import type { CloudInitPackageManager } from '../emit/cloud-init/calls.js';

export type { Family };

export interface ShellRendering extends ShellPackageManager {
  /** "Is this package installed?" as a helper taking one name (runtime and decommission scripts). */
  readonly installed: { readonly fn: string; readonly helper: HelperName };
}

export type CloudInitRendering = CloudInitPackageManager;

export interface AnsibleRendering {
  /** Fully qualified module name. */
  readonly module: string;
  /**
   * The host package the module needs and, when it is missing, installs on its
   * own: a change no record holds, so a live host's playbook checks for it first.
   */
  readonly binding?: string;
  /** Arguments to install `names`; `refresh` updates the package index first. */
  install(names: readonly string[], refresh: boolean): YMap;
  remove(names: readonly string[]): YMap;
  /** Arguments that remove `names` with their configuration (decommission). */
  purge(names: readonly string[]): YMap;
  /** Arguments that remove what only purged packages needed, when the module can. */
  readonly autoremove?: YMap;
  /** Why and when the index is refreshed, for the task's comment. */
  readonly refreshNote: string;
  /** A command whose registered result says whether `name` is installed, and the test of that result `reg`. */
  readonly query: { argv(name: string): Node[]; installed(reg: string): string };
  /** A module and its arguments holding (or releasing) one installed package at its version. */
  hold?(name: string, held: boolean): { module: string; args: YMap };
  /** Arguments that upgrade the installed packages (`dist`: dependencies may change), with the task's comment. */
  upgrade?(dist: boolean): { args: YMap; comment: string };
}

export interface RunnerRendering {
  /** What Ansible's chroot connection needs in the root to run its modules. */
  readonly python: readonly string[];
  /** A shell command run inside the root that installs `names` (fixed, known-safe names). */
  install(names: readonly string[]): string;
}

export interface PackageManagerRecord {
  readonly shell?: ShellRendering;
  readonly cloudInit?: CloudInitRendering;
  readonly ansible: AnsibleRendering;
  readonly runner: RunnerRendering;
}

const names = (ns: readonly string[]): Node => seq(ns.map(unsafe));

const safe = (ns: readonly string[]): string => {
  for (const n of ns) if (!/^[a-z0-9][a-z0-9+.-]*$/.test(n)) throw new Error(`not a package name: ${n}`);
  return ns.join(' ');
};

/** apt-get's command for an upgrade. */
export const aptUpgrade = (dist: boolean): string => (dist ? 'dist-upgrade' : 'upgrade');

const aptRemove = (ns: readonly string[]): YMap => map({ name: names(ns), state: word('absent'), policy_rc_d: int(101) });

/** What Ansible's apt module needs on the host, and in a root its chroot connection runs it in. */
const aptBinding = 'python3-apt';

const apt: PackageManagerRecord = {
  shell: {
    install: (ns) => ({ lines: [`imgc_apt_install ${words(ns)}`], helpers: ['aptInstall'] }),
    installArgs: { lines: ['imgc_apt_install "$@"'], helpers: ['aptInstall'] },
    remove: (ns) => ({ lines: [`imgc_apt_remove ${words(ns)}`], helpers: ['aptRemove'] }),
    repositoryChanged: {
      lines: ['if [ "$imgc_dirty" -eq 1 ]; then', '  imgc_apt_fresh=0', 'fi'],
      helpers: ['aptState'],
    },
    installed: { fn: 'imgc_apt_installed', helper: 'aptInstalled' },
    hold: (ns, held) => ({ lines: [`imgc_${held ? 'hold' : 'unhold'} ${words(ns)}`], helpers: [held ? 'hold' : 'unhold'] }),
    upgrade: (dist) => ({ lines: [`imgc_apt_upgrade ${aptUpgrade(dist)}`], helpers: ['aptUpgrade'] }),
  },
  cloudInit: {
    install: (ns) => ({ argv: ['imgc_apt_install', ...ns], helpers: ['aptInstall'] }),
    remove: (ns) => ({ argv: ['imgc_apt_purge', ...ns], helpers: ['aptPurge'] }),
    sourcesChanged: { argv: ['imgc_apt_changed'], helpers: ['aptChanged'] },
    hold: (ns, held) => ({ argv: [held ? 'imgc_hold' : 'imgc_unhold', ...ns], helpers: [held ? 'hold' : 'unhold'] }),
    upgrade: (dist) => ({ argv: ['imgc_apt_upgrade', aptUpgrade(dist)], helpers: ['aptUpgrade'] }),
  },
  ansible: {
    module: 'ansible.builtin.apt',
    binding: aptBinding,
    // The module runs apt-get with DEBIAN_FRONTEND=noninteractive itself;
    // policy_rc_d 101 keeps maintainer scripts from starting services.
    install: (ns, refresh) =>
      map({
        name: names(ns),
        state: word('present'),
        install_recommends: bool(false),
        update_cache: refresh ? bool(true) : undefined,
        policy_rc_d: int(101),
      }),
    remove: aptRemove,
    purge: (ns) => map([...aptRemove(ns).entries, { key: 'purge', value: bool(true) }]),
    autoremove: map({ autoremove: bool(true), purge: bool(true) }),
    refreshNote:
      'apt-get update first: the first install of the phase, or the first after a repository was added. It runs every time and is not reported as a change.',
    query: {
      argv: (n) => [word('dpkg-query'), str('-W'), str('-f=${Status}'), unsafe(n)],
      installed: (reg) => `${reg}.stdout == 'install ok installed'`,
    },
    hold: (n, held) => ({ module: 'ansible.builtin.dpkg_selections', args: map({ name: unsafe(n), selection: word(held ? 'hold' : 'install') }) }),
    upgrade: (dist) => ({
      args: map({ upgrade: word(dist ? 'dist' : 'safe'), update_cache: bool(true), force_apt_get: bool(true), install_recommends: bool(false), policy_rc_d: int(101) }),
      comment: dist ? 'apt-get dist-upgrade: dependencies may be added or removed; held packages stay.' : 'apt-get upgrade --with-new-pkgs: nothing is removed; held packages stay.',
    }),
  },
  runner: {
    python: ['python3', aptBinding],
    install: (ns) => `apt-get update -qq && apt-get install -y -qq --no-install-recommends ${safe(ns)} && apt-get clean`,
  },
};

const dnfRemove = (ns: readonly string[]): YMap => map({ name: names(ns), state: word('absent') });

const dnf: PackageManagerRecord = {
  ansible: {
    module: 'ansible.builtin.dnf',
    install: (ns, refresh) =>
      map({
        name: names(ns),
        state: word('present'),
        install_weak_deps: bool(false),
        update_cache: refresh ? bool(true) : undefined,
      }),
    remove: dnfRemove,
    purge: dnfRemove,
    refreshNote: 'Refresh the dnf metadata first (the first install of the phase).',
    query: {
      argv: (n) => [word('rpm'), str('-q'), str('--quiet'), unsafe(n)],
      installed: (reg) => `${reg}.rc == 0`,
    },
  },
  runner: {
    python: ['python3'],
    install: (ns) => `dnf install -y -q --setopt=install_weak_deps=False ${safe(ns)} && dnf clean all`,
  },
};

export const packageManagers: Readonly<Record<Family, PackageManagerRecord>> = { apt, dnf };
