// A package as a step names it: apt's `name[:arch][=version]` (the version
// may end in `*`, as apt-get's own matching allows). Facts, catalog look-ups
// and duplicate checks use the name; the package manager gets the whole spec.
// One parser per package-manager family: dnf's `name-version` cannot be told
// from a name with a dash without the repository's metadata, so until a dnf
// base exists its specs are taken as plain names.
import { hasMarker } from './variables.js';

/**
 * What a literal package spec is (apt's `name[:arch][=version]`, a version
 * possibly ending in `*`): the IR's rule, and the check every target makes of
 * each item of a list variable before using it (src/steps/package-list.ts).
 * No white space, quote, `$`, `{`, `%` or leading `-`: an item can be neither
 * an option nor shell, YAML or HCL syntax.
 */
export const packageSpecPattern = /^[A-Za-z0-9][A-Za-z0-9+._-]*(:[a-z0-9-]+)?(=[A-Za-z0-9+.:~_-]+[*]?)?$/;
export const packageSpecRule =
  'package names are letters, digits, "+", ".", "_" or "-", starting with a letter or digit, optionally followed by ":arch" and "=version"';

/** The package-manager families a base may have. */
export const packageManagerFamilies = ['apt', 'dnf'] as const;
export type PackageManager = (typeof packageManagerFamilies)[number];

export interface PackageSpec {
  name: string;
  arch?: string;
  version?: string;
}

/** apt: `name[:arch][=version]`. */
const aptSpec = (spec: string): PackageSpec => {
  const eq = spec.indexOf('=');
  const head = eq < 0 ? spec : spec.slice(0, eq);
  const colon = head.indexOf(':');
  return {
    name: colon < 0 ? head : head.slice(0, colon),
    ...(colon < 0 ? {} : { arch: head.slice(colon + 1) }),
    ...(eq < 0 ? {} : { version: spec.slice(eq + 1) }),
  };
};

const parsers: Record<PackageManager, (spec: string) => PackageSpec> = {
  apt: aptSpec,
  dnf: (spec) => ({ name: spec }),
};

/**
 * The parts of `spec`. A variable reference may stand in an apt version
 * (`kubelet=${v}`: the name is still known); a spec with one anywhere else is
 * left whole (the IR refuses it).
 */
export const parsePackageSpec = (spec: string, family: PackageManager = 'apt'): PackageSpec => {
  if (!hasMarker(spec)) return parsers[family](spec);
  const eq = spec.indexOf('=');
  return family === 'apt' && eq > 0 && !hasMarker(spec.slice(0, eq)) ? parsers[family](spec) : { name: spec };
};

/** The package's name without arch qualifier or version pin. */
export const packageName = (spec: string, family: PackageManager = 'apt'): string => parsePackageSpec(spec, family).name;
