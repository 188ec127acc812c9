// A base's package catalog: what installing a package provides, as the base
// records it, read by the packages kind's `make` and the type-level facts (src/dsl/types.ts).
import { fact, type Fact } from './facts.js';
import { packageName, type PackageManager } from './packages.js';

/** What installing a package provides, as the catalog of a base records it. */
export interface PackageFacts {
  readonly services?: readonly string[];
  readonly commands?: readonly string[];
  readonly paths?: readonly string[];
  readonly users?: readonly string[];
  readonly groups?: readonly string[];
  /** The repository (an apt repository step's name) the package comes from. */
  readonly repo?: string;
}
export type PackageCatalog = { readonly [name: string]: PackageFacts };

/** The facts installing package `spec` (a name, or a pinned one: `kubelet=1.30.2-1.1`) provides, per the base's catalog. */
export const packageFacts = (catalog: PackageCatalog, spec: string, family: PackageManager = 'apt'): Fact[] => {
  const name = packageName(spec, family);
  const entry = catalog[name];
  return [
    fact('package', name),
    ...(entry?.services ?? []).map((s) => fact('service', s)),
    ...(entry?.commands ?? []).map((s) => fact('command', s)),
    ...(entry?.paths ?? []).map((s) => fact('path', s)),
    ...(entry?.users ?? []).map((s) => fact('user', s)),
    ...(entry?.groups ?? []).map((s) => fact('group', s)),
  ];
};

/** The repository package `spec` comes from, per the base's catalog. */
export const packageRepo = (catalog: PackageCatalog, spec: string, family: PackageManager = 'apt'): string | undefined => catalog[packageName(spec, family)]?.repo;

/** The package whose catalog entry provides `kind` fact `key`, for hints. */
export const packageProviding = (catalog: PackageCatalog, kind: 'services' | 'commands' | 'paths' | 'users' | 'groups', key: string): string | undefined =>
  Object.entries(catalog).find(([, f]) => f[kind]?.includes(key))?.[0];
