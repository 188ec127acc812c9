// The package managers a base can have, as Ansible modules. The IR speaks of
// packages; the base's `packageManager` picks the row.
import type { PackageManager as Family } from '../../core/packages.js';
import { bool, int, unsafe, word } from './quote.js';
import { map, seq, type YMap } from './yaml.js';

export interface PackageManager {
  /** Fully qualified module name. */
  readonly module: string;
  /** Arguments to install `names`; `refresh` updates the package index first. */
  install(names: readonly string[], refresh: boolean): YMap;
  remove(names: readonly string[]): YMap;
  /** Why and when the index is refreshed, for the task's comment. */
  readonly refreshNote: string;
}

const names = (ns: readonly string[]) => seq(ns.map(unsafe));

export const packageManagers: Readonly<Record<Family, PackageManager>> = {
  apt: {
    module: 'ansible.builtin.apt',
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
    remove: (ns) => map({ name: names(ns), state: word('absent'), policy_rc_d: int(101) }),
    refreshNote:
      'apt-get update first: the first install of the phase, or the first after a repository was added. It runs every time and is not reported as a change.',
  },
  dnf: {
    module: 'ansible.builtin.dnf',
    install: (ns, refresh) =>
      map({
        name: names(ns),
        state: word('present'),
        install_weak_deps: bool(false),
        update_cache: refresh ? bool(true) : undefined,
      }),
    remove: (ns) => map({ name: names(ns), state: word('absent') }),
    refreshNote: 'Refresh the dnf metadata first (the first install of the phase).',
  },
};
