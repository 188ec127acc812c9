// The base's package manager as a target renders it (src/steps/package-managers.ts),
// or IMGC2002 at the base when that target has no rendering for the family yet.
import { diagnostic } from '../check/diagnostic.js';
import type { Base } from '../ir/schema.js';
import { packageManagers, type PackageManagerRecord } from '../steps/package-managers.js';
import { CompileError } from './types.js';

const targetNames = { shell: 'shell', cloudInit: 'cloud-init' } as const;

export const packageManagerOf = <T extends keyof typeof targetNames>(base: Base, target: T): NonNullable<PackageManagerRecord[T]> => {
  const pm = packageManagers[base.packageManager][target];
  if (pm) return pm as NonNullable<PackageManagerRecord[T]>;
  const supports = Object.entries(packageManagers)
    .filter(([, r]) => r[target])
    .map(([f]) => f);
  const name = targetNames[target];
  throw new CompileError([
    diagnostic('IMGC2002', `the ${name} backend cannot drive the package manager '${base.packageManager}' of base '${base.name}' yet (it supports: ${supports.join(', ')})`, {
      loc: base.loc,
      hint: `use an apt-based base for --target ${name}`,
    }),
  ]);
};
