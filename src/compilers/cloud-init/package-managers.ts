// Package managers the runcmd fallback drives, by `ir.base.packageManager`.
// cloud-init's own `packages` module picks the distro's package manager by
// itself; runcmd entries need the commands spelled out. To add dnf: an entry
// here with its helpers in helpers.ts.
import { diagnostic } from '../../check/diagnostic.js';
import type { Base } from '../../ir/schema.js';
import { CompileError } from '../types.js';
import type { Call, CloudInitPackageManager } from '../../emit/cloud-init/calls.js';

export type { Call };

export type PackageManager = CloudInitPackageManager;

const apt: PackageManager = {
  install: (names) => ({ argv: ['imgc_apt_install', ...names], helpers: ['aptInstall'] }),
  remove: (names) => ({ argv: ['imgc_apt_purge', ...names], helpers: ['aptPurge'] }),
  sourcesChanged: { argv: ['imgc_apt_changed'], helpers: ['aptChanged'] },
};

const packageManagers: Partial<Record<Base['packageManager'], PackageManager>> = { apt };

/** The base's package manager, or a CompileError (IMGC2002) when this backend has none for it. */
export const packageManagerOf = (base: Base): PackageManager => {
  const pm = packageManagers[base.packageManager];
  if (pm) return pm;
  throw new CompileError([
    diagnostic('IMGC2002', `the cloud-init backend cannot drive the package manager '${base.packageManager}' of base '${base.name}' yet (it supports: ${Object.keys(packageManagers).join(', ')})`, {
      loc: base.loc,
      hint: 'use an apt-based base for --target cloud-init',
    }),
  ]);
};
