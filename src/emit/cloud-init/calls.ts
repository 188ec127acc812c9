// What a runcmd (or bootcmd) rendering of a step is: calls `[imgc_helper, ARG…]`
// of the helper functions the cloud-init frame defines in the script's first
// entry (src/compilers/cloud-init/helpers.ts).
import type { HelperName } from '../shell/emitted.js';

/** The shell functions runcmd entries call: the phase scripts' helpers (without change tracking) and runcmd's own. */
export type { HelperName };

/**
 * cloud-init's modules a step may run in, in the order cloud-init runs them
 * (src/compilers/cloud-init/plan.ts explains the order).
 */
export const stages = ['bootcmd', 'write_files', 'groups', 'users', 'packages', 'write_files_deferred', 'runcmd'] as const;
export type Stage = (typeof stages)[number];

export interface Call {
  readonly argv: readonly string[];
  readonly helpers: readonly HelperName[];
}

/** The shell function a helper defines. */
export const fn = (h: HelperName): string => `imgc_${h.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;

/** How runcmd entries drive a package manager (src/steps/package-managers.ts). */
export interface CloudInitPackageManager {
  install(names: readonly string[]): Call;
  remove(names: readonly string[]): Call;
  /** After an apt source (or the like) changed: the next install refreshes the package lists. */
  readonly sourcesChanged: Call;
  hold(names: readonly string[], held: boolean): Call;
  /** The installed packages at the newest versions of the sources; `dist`: dependencies may change. */
  upgrade(dist: boolean): Call;
}

