// The package managers a base can have, one record per family: how each
// target (shell phase scripts, Ansible, cloud-init's runcmd) and the build's
// runner install, remove, purge, hold and query packages with it. Steps speak
// of packages; a base's `packageManager` picks the record. Adding dnf's shell
// or cloud-init rendering is filling its fields here, with the bodies of the
// shell helpers they call; a field left out is a target that refuses the
// family (IMGC2002, src/compilers/package-managers.ts).
import type { PackageManager as Family } from '../core/packages.js';
import type { Emitted, HelperName, ShellHelper, ShellPackageManager } from '../emit/shell/emitted.js';
import { words } from '../emit/shell/quote.js';
import { bool, int, jinjaString, jinjaValue, str, unsafe, word, type Scalar } from '../emit/ansible/quote.js';
import { parsePackageSpec } from '../core/packages.js';
import { map, seq, type Node, type YMap } from '../emit/ansible/yaml.js';
import type { CloudInitPackageManager } from '../emit/cloud-init/calls.js';

export type { Family };

export interface ShellRendering extends ShellPackageManager {
  /** Purges the function's positional parameters that are installed, then what only they needed (decommission.sh). */
  readonly purgeArgs: Emitted;
  /** "Is this package installed?" as a helper taking one name (runtime and decommission scripts). */
  readonly installed: { readonly fn: string; readonly helper: HelperName };
  /** "Is package NAME installed at VERSION?" (NAME VERSION), leaving what is in imgc_has: the runtime preflight. */
  readonly version: { readonly fn: string; readonly helper: HelperName };
  /** The helpers these lines call, by name (runcmd defines them too, without their change tracking). */
  readonly helpers: Readonly<Record<HelperName, ShellHelper>>;
}

export interface CloudInitRendering extends CloudInitPackageManager {
  /** The helpers only runcmd's calls use, by name. */
  readonly helpers: Readonly<Record<HelperName, ShellHelper>>;
}

export interface AnsibleRendering {
  /** Fully qualified module name. */
  readonly module: string;
  /**
   * The host package the module needs and, when it is missing, installs on its
   * own: a change no record holds, so a live host's playbook checks for it first.
   */
  readonly binding?: string;
  /** Arguments to install `names`; `refresh` (a boolean or a template of one) updates the package index first. */
  install(names: readonly string[], refresh: Scalar | undefined): YMap;
  remove(names: readonly string[]): YMap;
  /** Arguments that remove `names` with their configuration (decommission). */
  purge(names: readonly string[]): YMap;
  /** Arguments that remove what only purged packages needed, when the module can. */
  readonly autoremove?: YMap;
  /** Why and when the index is refreshed, for the task's comment. */
  readonly refreshNote: string;
  /** A command whose registered result says whether `name` is installed, and the test of that result `reg`. */
  readonly query: { argv(name: string): Node[]; installed(reg: string): string };
  /** A command printing `installed VERSION` when `name` is installed (the runtime preflight's version check). */
  versionArgv(name: string): Node[];
  /** A module and its arguments holding (or releasing) one installed package at its version. */
  hold?(name: string, held: boolean): { module: string; args: YMap };
  /** Arguments that upgrade the installed packages (`dist`: dependencies may change), with the task's comment. */
  upgrade?(dist: boolean): { args: YMap; comment: string };
}

export interface RunnerRendering {
  /** What Ansible's chroot connection needs in the root to run its modules. */
  readonly python: readonly string[];
  /** A shell command, run inside the root, that succeeds when those are there (python3 alone is not: a root may have it without the binding). */
  readonly pythonReady: string;
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
    purgeArgs: { lines: ['imgc_apt_purge_autoremove "$@"'], helpers: ['aptPurgeAutoremove'] },
    installed: { fn: 'imgc_apt_installed', helper: 'aptInstalled' },
    version: { fn: 'imgc_apt_version', helper: 'aptVersion' },
    hold: (ns, held) => ({ lines: [`imgc_${held ? 'hold' : 'unhold'} ${words(ns)}`], helpers: [held ? 'hold' : 'unhold'] }),
    upgrade: (dist) => ({ lines: [`imgc_apt_upgrade ${aptUpgrade(dist)}`], helpers: ['aptUpgrade'] }),
    helpers: {
      aptState: {
        deps: [],
        code: [
          '# 1 once the package lists are fresh in this run; a changed apt source resets it.',
          'imgc_apt_fresh=0',
        ],
      },
      aptInstalled: {
        deps: [],
        code: [
          '# imgc_apt_installed PACKAGE: true when dpkg has PACKAGE (a name, name=version, or',
          '# name=version-glob as apt takes it: kubelet=1.30.*) installed.',
          'imgc_apt_installed() {',
          '  # shellcheck disable=SC2016 # ${Status} and ${Version} are dpkg-query fields',
          '  case $1 in',
          '    *=*)',
          '      # shellcheck disable=SC2254 # the pin is a pattern: a Debian version holds no glob character but its wildcards',
          '      case "$(dpkg-query -W -f=\'${Status} ${Version}\' "${1%%=*}" 2>/dev/null || :)" in',
          '        "install ok installed "${1#*=}) return 0 ;;',
          '        *) return 1 ;;',
          '      esac',
          '      ;;',
          '    *) [ "$(dpkg-query -W -f=\'${Status}\' "$1" 2>/dev/null || :)" = \'install ok installed\' ] ;;',
          '  esac',
          '}',
        ],
      },
      aptVersion: {
        deps: [],
        code: [
          '# imgc_apt_version NAME VERSION: package NAME is installed at VERSION; imgc_has says what is.',
          'imgc_apt_version() {',
          "  imgc_has=$(dpkg-query -W -f='${db:Status-Status} ${Version}' -- \"$1\" 2>/dev/null) || imgc_has=''",
          '  case $imgc_has in',
          "    'installed '*) imgc_has=\"version ${imgc_has#installed }\" ;;",
          "    *) imgc_has='not installed' ;;",
          '  esac',
          '  [ "$imgc_has" = "version $2" ]',
          '}',
        ],
      },
      aptSelect: {
        deps: ['aptInstalled'],
        code: [
          '# imgc_apt_select installed|missing FUNCTION PACKAGE...: calls FUNCTION with those of',
          '# the PACKAGEs that are installed (or missing), in their order; not at all when none',
          '# is. The one place that asks which packages are installed.',
          'imgc_apt_select() {',
          '  imgc_which=$1',
          '  imgc_then=$2',
          '  shift 2',
          '  for imgc_p in "$@"; do',
          '    shift',
          '    if imgc_apt_installed "$imgc_p"; then',
          '      imgc_is=installed',
          '    else',
          '      imgc_is=missing',
          '    fi',
          '    if [ "$imgc_is" = "$imgc_which" ]; then',
          '      set -- "$@" "$imgc_p"',
          '    fi',
          '  done',
          '  if [ "$#" -gt 0 ]; then',
          '    "$imgc_then" "$@"',
          '  fi',
          '}',
        ],
      },
      aptInstall: {
        deps: ['aptState', 'aptSelect'],
        code: [
          '# imgc_apt_install PACKAGE...: installs the PACKAGEs that are not installed, without',
          '# recommends; updates the package lists first, once per run (again after an apt',
          '# source changed).',
          'imgc_apt_install() {',
          '  imgc_apt_select missing imgc_apt_install_these "$@"',
          '}',
          'imgc_apt_install_these() {',
          '  if [ "$imgc_apt_fresh" -eq 0 ]; then',
          '    apt-get update',
          '    imgc_apt_fresh=1',
          '  fi',
          '  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\',
          '    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"',
          '  imgc_dirty=1',
          '}',
        ],
      },
      aptRemove: {
        deps: ['aptSelect'],
        code: [
          '# imgc_apt_remove PACKAGE...: removes the PACKAGEs that are installed.',
          'imgc_apt_remove() {',
          '  imgc_apt_select installed imgc_apt_remove_these "$@"',
          '}',
          'imgc_apt_remove_these() {',
          '  DEBIAN_FRONTEND=noninteractive apt-get remove -y "$@"',
          '  imgc_dirty=1',
          '}',
        ],
      },
      aptPurgeAutoremove: {
        deps: ['aptSelect'],
        code: [
          '# imgc_apt_purge_autoremove PACKAGE...: purges the PACKAGEs still installed, then what',
          '# only they needed.',
          'imgc_apt_purge_autoremove() {',
          '  imgc_apt_select installed imgc_apt_purge_autoremove_these "$@"',
          '}',
          'imgc_apt_purge_autoremove_these() {',
          '  DEBIAN_FRONTEND=noninteractive apt-get purge -y "$@"',
          '  DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y',
          '  imgc_dirty=1',
          '}',
        ],
      },
      hold: {
        deps: [],
        code: [
          '# imgc_hold PACKAGE...: each installed PACKAGE is held at its version (apt-mark).',
          'imgc_hold() {',
          '  for imgc_p in "$@"; do',
          '    if ! apt-mark showhold | grep -qxF -- "$imgc_p"; then',
          '      apt-mark hold "$imgc_p" >/dev/null',
          '      imgc_dirty=1',
          '    fi',
          '  done',
          '}',
        ],
      },
      unhold: {
        deps: [],
        code: [
          '# imgc_unhold PACKAGE...: no PACKAGE is held.',
          'imgc_unhold() {',
          '  for imgc_p in "$@"; do',
          '    if apt-mark showhold | grep -qxF -- "$imgc_p"; then',
          '      apt-mark unhold "$imgc_p" >/dev/null',
          '      imgc_dirty=1',
          '    fi',
          '  done',
          '}',
        ],
      },
      aptUpgrade: {
        deps: ['aptState'],
        code: [
          '# imgc_apt_upgrade upgrade|dist-upgrade: the installed packages at the newest versions',
          '# of the sources, as Ansible\'s apt module does it (upgrade adds new dependencies,',
          '# removes nothing); held packages stay. Lists updated first, once per run.',
          'imgc_apt_upgrade() {',
          '  if [ "$imgc_apt_fresh" -eq 0 ]; then',
          '    apt-get update',
          '    imgc_apt_fresh=1',
          '  fi',
          '  set -- "$1" --no-install-recommends',
          '  if [ "$1" = upgrade ]; then',
          '    set -- "$@" --with-new-pkgs',
          '  fi',
          '  # A simulation lists what would be installed or upgraded (Inst) or removed (Remv).',
          '  if ! LC_ALL=C apt-get -s "$@" | grep -Eq \'^(Inst|Remv) \'; then',
          '    return 0',
          '  fi',
          '  DEBIAN_FRONTEND=noninteractive apt-get -y \\',
          '    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"',
          '  imgc_dirty=1',
          '}',
        ],
      },
    },
  },
  cloudInit: {
    install: (ns) => ({ argv: ['imgc_apt_install', ...ns], helpers: ['aptInstall'] }),
    remove: (ns) => ({ argv: ['imgc_apt_purge', ...ns], helpers: ['aptPurge'] }),
    sourcesChanged: { argv: ['imgc_apt_changed'], helpers: ['aptChanged'] },
    hold: (ns, held) => ({ argv: [held ? 'imgc_hold' : 'imgc_unhold', ...ns], helpers: [held ? 'hold' : 'unhold'] }),
    upgrade: (dist) => ({ argv: ['imgc_apt_upgrade', aptUpgrade(dist)], helpers: ['aptUpgrade'] }),
    helpers: {
      aptPurge: {
        deps: ['aptSelect'],
        code: [
          '# imgc_apt_purge PACKAGE...: purges the PACKAGEs that are installed.',
          'imgc_apt_purge() {',
          '  imgc_apt_select installed imgc_apt_purge_these "$@"',
          '}',
          'imgc_apt_purge_these() {',
          '  DEBIAN_FRONTEND=noninteractive apt-get purge -y "$@"',
          '}',
        ],
      },
      aptChanged: {
        deps: ['aptState'],
        code: ['# imgc_apt_changed: an apt source changed; the next install updates the package lists.', 'imgc_apt_changed() {', '  imgc_apt_fresh=0', '}'],
      },
    },
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
        update_cache: refresh,
        policy_rc_d: int(101),
      }),
    remove: aptRemove,
    purge: (ns) => map([...aptRemove(ns).entries, { key: 'purge', value: bool(true) }]),
    autoremove: map({ autoremove: bool(true), purge: bool(true) }),
    refreshNote:
      'apt-get update first when a package here is not installed as asked (the facts just read say), so a run with nothing to install fetches no lists; not reported as a change.',
    query: {
      argv: (n) => [word('dpkg-query'), str('-W'), str('-f=${Status}'), unsafe(n)],
      installed: (reg) => `${reg}.stdout == 'install ok installed'`,
    },
    versionArgv: (n) => [word('dpkg-query'), str('-W'), str('-f=${db:Status-Status} ${Version}'), unsafe(n)],
    hold: (n, held) => ({ module: 'ansible.builtin.dpkg_selections', args: map({ name: unsafe(n), selection: word(held ? 'hold' : 'install') }) }),
    upgrade: (dist) => ({
      args: map({ upgrade: word(dist ? 'dist' : 'safe'), update_cache: bool(true), force_apt_get: bool(true), install_recommends: bool(false), policy_rc_d: int(101) }),
      comment: dist ? 'apt-get dist-upgrade: dependencies may be added or removed; held packages stay.' : 'apt-get upgrade --with-new-pkgs: nothing is removed; held packages stay.',
    }),
  },
  runner: {
    python: ['python3', aptBinding],
    pythonReady: "python3 -c 'import apt, apt_pkg'",
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
        update_cache: refresh,
      }),
    remove: dnfRemove,
    purge: dnfRemove,
    refreshNote: 'Refresh the dnf metadata first when a package here is not installed (the facts just read say).',
    query: {
      argv: (n) => [word('rpm'), str('-q'), str('--quiet'), unsafe(n)],
      installed: (reg) => `${reg}.rc == 0`,
    },
    versionArgv: (n) => [word('rpm'), str('-q'), str('--qf'), str('installed %{VERSION}-%{RELEASE}'), unsafe(n)],
  },
  runner: {
    python: ['python3'],
    pythonReady: 'command -v python3',
    install: (ns) => `dnf install -y -q --setopt=install_weak_deps=False ${safe(ns)} && dnf clean all`,
  },
};

/**
 * A Jinja test, over the packages `ansible.builtin.package_facts` just read,
 * that is true when one of `specs` is not installed as asked: an install
 * refreshes the index only then, as the shell's imgc_apt_install does, so a
 * second run on a root whose lists were cleaned (sysprep) changes nothing. A
 * pinned version may end in `*`, as apt takes it; the arch is not compared.
 */
export const ansibleMissing = (specs: readonly string[], family: Family): string =>
  `not (${specs
    .map((spec) => {
      const { name, version } = parsePackageSpec(spec, family);
      const has = `ansible_facts.packages[${jinjaString(name)}]`;
      if (version === undefined) return `${has} is defined`;
      const glob = version.endsWith('*');
      const exact = `${jinjaValue(glob ? version.slice(0, -1) : version)} | regex_escape`;
      return `${has} | default([]) | selectattr('version', 'match', '^' ~ (${exact}) ~ '${glob ? '.*' : ''}$') | list | length > 0`;
    })
    .map((t) => `(${t})`)
    .join(' and ')})`;

/** The task that reads the installed packages for {@link ansibleMissing}. */
export const ansiblePackageFacts = { module: 'ansible.builtin.package_facts', args: map({ manager: word('auto') }) } as const;

export const packageManagers: Readonly<Record<Family, PackageManagerRecord>> = { apt, dnf };
