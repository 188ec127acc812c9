// What the runner itself installs into a root (python3 for Ansible's chroot
// connection), per package manager. One table: adding dnf is one entry.
import type { Base } from '../ir/schema.js';

export interface RunnerPackageManager {
  /** A shell command run inside the root that installs `names` (fixed, known-safe names). */
  install(names: readonly string[]): string;
}

const safe = (names: readonly string[]) => {
  for (const n of names) if (!/^[a-z0-9][a-z0-9+.-]*$/.test(n)) throw new Error(`not a package name: ${n}`);
  return names.join(' ');
};

export const runnerPackageManagers: Record<Base['packageManager'], RunnerPackageManager> = {
  apt: {
    install: (names) => `apt-get update -qq && apt-get install -y -qq --no-install-recommends ${safe(names)} && apt-get clean`,
  },
  dnf: {
    install: (names) => `dnf install -y -q --setopt=install_weak_deps=False ${safe(names)} && dnf clean all`,
  },
};
