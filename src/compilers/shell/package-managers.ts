// Package managers, by the base's `packageManager`. A step speaks of packages;
// this table says how one package manager checks, installs and removes them.
// Adding dnf means adding an entry (and its helpers: `rpm -q` before
// `dnf install -y --setopt=install_weak_deps=False`); nothing else changes.
import { diagnostic } from '../../check/diagnostic.js';
import type { Base } from '../../ir/schema.js';
import { CompileError } from '../types.js';
import type { ShellPackageManager } from '../../emit/shell/emitted.js';
import { words } from '../../emit/shell/quote.js';

export type PackageManager = ShellPackageManager;

const apt: PackageManager = {
  install: (names) => ({ lines: [`imgc_apt_install ${words(names)}`], helpers: ['aptInstall'] }),
  remove: (names) => ({ lines: [`imgc_apt_remove ${words(names)}`], helpers: ['aptRemove'] }),
  repositoryChanged: {
    lines: ['if [ "$imgc_dirty" -eq 1 ]; then', '  imgc_apt_fresh=0', 'fi'],
    helpers: ['aptState'],
  },
};

const packageManagers: Partial<Record<Base['packageManager'], PackageManager>> = { apt };

/** The base's package manager, or a CompileError (IMGC2002) when the shell backend has none for it. */
export const packageManagerOf = (base: Base): PackageManager => {
  const pm = packageManagers[base.packageManager];
  if (pm) return pm;
  throw new CompileError([
    diagnostic('IMGC2002', `the shell backend cannot drive the package manager '${base.packageManager}' of base '${base.name}' yet (it supports: ${Object.keys(packageManagers).join(', ')})`, {
      loc: base.loc,
      hint: 'use an apt-based base for --target shell',
    }),
  ]);
};
