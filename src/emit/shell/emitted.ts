// What a shell rendering of a step is: its lines and the helper functions
// they call, and what a helper function is.

/**
 * A shell function a step's lines may call, by name (`imgc_<name>`, as
 * src/emit/cloud-init/calls.ts `fn` spells it). Its body is a `ShellHelper`
 * of the shell frame (those several kinds call), of the package-manager
 * registry, or of the kind whose renderings call it (`shellHelpers`).
 */
export type HelperName = string;

/**
 * The code of one shell helper: static POSIX sh (no IR values: steps pass
 * them as arguments), which checks before it acts and sets imgc_dirty=1 only
 * when it changed something; its variables are globals prefixed imgc_.
 */
export interface ShellHelper {
  /** The helpers it calls: a script that defines it defines them too. */
  readonly deps: readonly HelperName[];
  /** Its lines: a comment saying what it does, then the function. */
  readonly code: readonly string[];
  /** cloud-init's runcmd code, where a live machine needs more than a phase script does. Absent: `code` without its change tracking. */
  readonly runcmd?: readonly string[];
}

/** Shell lines for a step's body and the helpers they call. */
export interface Emitted {
  readonly lines: string[];
  readonly helpers: HelperName[];
}

/** How a package manager's operations are written in a phase script (src/steps/package-managers.ts). */
export interface ShellPackageManager {
  install(names: readonly string[]): Emitted;
  /** Installs the function's positional parameters (checked package specs); nothing for none. */
  readonly installArgs: Emitted;
  remove(names: readonly string[]): Emitted;
  /** Appended to a repository step: lets the next install see what the step changed. */
  readonly repositoryChanged: Emitted;
  /** Holds (`held`) or releases installed packages at their version. */
  hold(names: readonly string[], held: boolean): Emitted;
  /** The installed packages at the newest versions of the sources; `dist`: dependencies may change. */
  upgrade(dist: boolean): Emitted;
}

