// What installing a package provides. Two sources, read by the packages
// kind's `make` and the type-level facts (src/dsl/types.ts): the base's typed
// catalog (a literal object whose `typeof` the builder's types read), and the
// base's archive, generated from the distribution's own indexes for every
// package (src/build/archive-facts.ts) and read only by the checker.
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

/** The fields of an archive table line after the package name, in order (src/build/archive-facts.ts writes them). */
export const archiveTableHeader = ['deps', 'services', 'commands', 'paths', 'users', 'groups'] as const;

/** What one archive package brings by itself; `deps` are the packages of its own source it pulls in. */
export type ArchiveEntry = { readonly [K in (typeof archiveTableHeader)[number]]: readonly string[] };

/** Every package of a base's archive: what each brings, for the checker. */
export interface PackageArchive {
  /** Which archive, for messages: `Debian 12 "bookworm" main (amd64)`. */
  readonly describe: string;
  entry(name: string): ArchiveEntry | undefined;
  /** Every package name, for did-you-mean. */
  names(): readonly string[];
}

/** A sorted table's lines, read on first use: `name`'s by a binary search of the text itself, or all of them. */
const tableLines = (table: () => string) => {
  let text: string | undefined;
  return {
    line: (name: string): string | undefined => {
      text ??= table();
      let lo = 0;
      let hi = text.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const start = text.lastIndexOf('\n', mid - 1) + 1;
        let end = text.indexOf('\n', start);
        if (end < 0) end = text.length;
        const tab = text.indexOf('\t', start);
        const key = text.slice(start, tab >= 0 && tab < end ? tab : end);
        if (key === name) return text.slice(start, end);
        if (key < name) lo = end + 1;
        else hi = start;
      }
      return undefined;
    },
    // The file's last newline ends a line: it starts no empty one.
    all: (): string[] => (text ??= table()).split('\n').filter((l) => l !== ''),
  };
};

const nameOfLine = (line: string): string => line.split('\t', 1)[0]!;

/** A table line's entry: the name, then tab-separated fields of space-separated words (trailing empty fields left off). */
const entryOfLine = (found: string): ArchiveEntry => {
  const fields = found.split('\t');
  const words = (i: number): string[] => (fields[i + 1] ? fields[i + 1]!.split(' ') : []);
  return { deps: words(0), services: words(1), commands: words(2), paths: words(3), users: words(4), groups: words(5) };
};

/**
 * An archive read from its generated table: one line a package, sorted by
 * name, tab-separated fields of space-separated words. A look-up is a binary
 * search of the text itself, so nothing is parsed or indexed up front; the
 * text is read on first use, and a definition that installs nothing never
 * reads it.
 */
export const tableArchive = (describe: string, table: () => string): PackageArchive => {
  const lines = tableLines(table);
  return {
    describe,
    entry: (name) => {
      const found = lines.line(name);
      return found === undefined ? undefined : entryOfLine(found);
    },
    names: () => lines.all().map(nameOfLine),
  };
};

/**
 * A delta's line saying its archive lacks a package the base archive has: the
 * name, then `-` alone, which no table line holds (its first field is
 * dependency names, and a Debian package name never is `-`).
 */
export const removedLine = (name: string): string => `${name}\t-`;

/**
 * An archive as a delta against another (arm64's against amd64's table,
 * npm run gen:packages): a sorted table of the lines that differ, with a
 * removedLine for each package the base has and this archive does not.
 * Read like tableArchive's, on first use.
 */
export const overlayArchive = (describe: string, base: PackageArchive, delta: () => string): PackageArchive => {
  const lines = tableLines(delta);
  return {
    describe,
    entry: (name) => {
      const found = lines.line(name);
      if (found === undefined) return base.entry(name);
      return found === removedLine(name) ? undefined : entryOfLine(found);
    },
    names: () => {
      const removed = new Set<string>();
      const added: string[] = [];
      for (const line of lines.all()) {
        const name = nameOfLine(line);
        if (line === removedLine(name)) removed.add(name);
        else added.push(name);
      }
      return [...new Set([...base.names(), ...added])].filter((n) => !removed.has(n)).sort();
    },
  };
};

/** The archive entries installing `name` brings: its own and, transitively, those of the packages of its source it depends on. */
const closure = (archive: PackageArchive, name: string): ArchiveEntry[] => {
  const seen = new Set<string>();
  const out: ArchiveEntry[] = [];
  const visit = (n: string): void => {
    if (seen.has(n)) return;
    seen.add(n);
    const e = archive.entry(n);
    if (!e) return;
    out.push(e);
    e.deps.forEach(visit);
  };
  visit(name);
  return out;
};

/** A catalog's own entry for `name` (not one an object inherits: `constructor`, `toString`). */
const catalogEntry = (catalog: PackageCatalog, name: string): PackageFacts | undefined => (Object.hasOwn(catalog, name) ? catalog[name] : undefined);

const kinds = [
  ['services', 'service'],
  ['commands', 'command'],
  ['paths', 'path'],
  ['users', 'user'],
  ['groups', 'group'],
] as const;

/**
 * The facts installing package `spec` (a name, or a pinned one:
 * `kubelet=1.30.2-1.1`) provides: what the typed catalog lists for it or,
 * for a package the catalog does not list, what the base's archive says it
 * and the packages of its source it depends on bring.
 */
export const packageFacts = (catalog: PackageCatalog, spec: string, family: PackageManager = 'apt', archive?: PackageArchive): Fact[] => {
  const name = packageName(spec, family);
  const listed = catalogEntry(catalog, name);
  // A typed entry of an archive package already holds what the archive says (npm run gen:packages writes it).
  const entries: PackageFacts[] = listed ? [listed] : archive ? closure(archive, name) : [];
  const out = [fact('package', name)];
  const seen = new Set<string>();
  for (const [field, kind] of kinds)
    for (const e of entries)
      for (const key of e[field] ?? []) {
        const id = `${kind}:${key}`;
        if (!seen.has(id)) (seen.add(id), out.push(fact(kind, key)));
      }
  return out;
};

/** Whether the base knows package `spec`: its typed catalog lists it, or its archive has it (a base with no archive knows every name). */
export const knownPackage = (catalog: PackageCatalog, spec: string, family: PackageManager = 'apt', archive?: PackageArchive): boolean => {
  const name = packageName(spec, family);
  return !archive || catalogEntry(catalog, name) !== undefined || archive.entry(name) !== undefined;
};

/** The repository package `spec` comes from, per the base's catalog. */
export const packageRepo = (catalog: PackageCatalog, spec: string, family: PackageManager = 'apt'): string | undefined => catalogEntry(catalog, packageName(spec, family))?.repo;

/** The package whose catalog entry provides `kind` fact `key`, for hints. */
export const packageProviding = (catalog: PackageCatalog, kind: 'services' | 'commands' | 'paths' | 'users' | 'groups', key: string): string | undefined =>
  Object.entries(catalog).find(([, f]) => f[kind]?.includes(key))?.[0];
