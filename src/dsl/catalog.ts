import type { Fact } from '../ir/types.js';
import { fact } from '../ir/facts.js';
import type { PackageCatalog } from './types.js';

/** The facts installing package `name` provides, per the base's catalog. */
export const packageFacts = (catalog: PackageCatalog, name: string): Fact[] => {
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

/** The package whose catalog entry provides `kind` fact `key`, for hints. */
export const packageProviding = (catalog: PackageCatalog, kind: 'services' | 'commands' | 'paths' | 'users' | 'groups', key: string): string | undefined =>
  Object.entries(catalog).find(([, f]) => f[kind]?.includes(key))?.[0];
