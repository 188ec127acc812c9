// What each package of a Debian archive brings, read from the archive's own
// indexes (`npm run gen:packages`, scripts/gen-packages.mjs): its commands,
// systemd units and files under /etc and /opt from `Contents-<arch>.gz` and
// `Contents-all.gz`, and from `Packages` its dependencies built from the same
// source (nginx → nginx-common: what a user means by installing nginx). A
// Contents index lists files only, so an empty directory a package ships and
// what its maintainer scripts create are read from a real install instead
// (./installed-facts.ts) for the packages the typed catalog covers.
import { archiveTableHeader, type ArchiveEntry } from '../core/catalog.js';

/** One package's facts as the generator collects them. */
export interface Collected {
  deps: Set<string>;
  services: Set<string>;
  commands: Set<string>;
  paths: Set<string>;
  users: Set<string>;
  groups: Set<string>;
}

const empty = (): Collected => ({ deps: new Set(), services: new Set(), commands: new Set(), paths: new Set(), users: new Set(), groups: new Set() });

/** The directories a root's PATH holds in a Debian archive's file lists (no usr/local: packages ship nothing there). */
const commandRe = /^(?:usr\/)?s?bin\/([^/]+)$/;
/** Unit files systemd loads from the package's directory; a template (`x@.service`) names no unit by itself. */
const unitRe = /^(?:usr\/)?lib\/systemd\/system\/([^/@]+)\.(service|timer|socket)$/;
/** The trees a definition writes into or edits: a package's config and its /opt tree. */
const pathRe = /^(?:etc|opt)\//;

/** The fact a Contents path gives, if any. */
export const contentsFact = (file: string): { kind: 'commands' | 'services' | 'paths'; key: string } | undefined => {
  let m = commandRe.exec(file);
  if (m) return { kind: 'commands', key: m[1]! };
  m = unitRe.exec(file);
  if (m) return { kind: 'services', key: m[2] === 'service' ? m[1]! : `${m[1]}.${m[2]}` };
  if (pathRe.test(file)) return { kind: 'paths', key: `/${file}` };
  return undefined;
};

/** A path and its parents below its top directory (/etc, /opt): `/etc/a/b` → `/etc/a`, `/etc/a/b`. */
export const withParents = (p: string): string[] => {
  const parts = p.split('/');
  return parts.slice(3).map((_, i) => parts.slice(0, i + 3).join('/')).concat(p);
};

/** The table's words are printable ASCII, separated by spaces: the few names with white space or other characters are left out. */
export const isTableWord = (key: string): boolean => /^[\x21-\x7e]+$/.test(key);

/**
 * Adds one line of a Contents index (`path  section/pkg,section/pkg`; the
 * path has no leading slash and may hold spaces) to the collection.
 */
export const addContentsLine = (into: Map<string, Collected>, line: string): void => {
  const m = /^(.*\S)\s+(\S+)$/.exec(line);
  if (!m) return;
  const fact = contentsFact(m[1]!);
  if (!fact || !isTableWord(fact.key)) return;
  for (const qualified of m[2]!.split(',')) {
    const name = qualified.slice(qualified.lastIndexOf('/') + 1);
    let c = into.get(name);
    if (!c) into.set(name, (c = empty()));
    if (fact.kind === 'paths') for (const p of withParents(fact.key)) c.paths.add(p);
    else c[fact.kind].add(fact.key);
  }
};

/** A stanza of a `Packages` index: the fields the generator reads. */
export interface PackageStanza {
  name: string;
  source: string;
  /** Depends and Pre-Depends, each alternative group's first name (apt's own first choice). */
  depends: string[];
  provides: string[];
}

const firstNames = (field: string | undefined): string[] =>
  (field ?? '')
    .split(',')
    .map((group) => group.split('|')[0]!.trim().split(/[\s(:]/)[0]!)
    .filter((n) => n !== '');

/** The stanzas of a `Packages` index. */
export const parsePackages = (text: string): PackageStanza[] =>
  text
    .split(/\n\n+/)
    .filter((s) => s.trim() !== '')
    .map((stanza) => {
      const fields = new Map<string, string>();
      let key = '';
      for (const line of stanza.split('\n')) {
        if (/^\s/.test(line)) fields.set(key, `${fields.get(key) ?? ''} ${line.trim()}`);
        else {
          const i = line.indexOf(':');
          key = line.slice(0, i);
          fields.set(key, line.slice(i + 1).trim());
        }
      }
      const name = fields.get('Package')!;
      return {
        name,
        source: (fields.get('Source') ?? name).split(' ')[0]!,
        depends: [...firstNames(fields.get('Pre-Depends')), ...firstNames(fields.get('Depends'))],
        provides: firstNames(fields.get('Provides')),
      };
    });

/**
 * Every package name of the archive with its collected facts: a package
 * depends (in the table) on the packages built from its own source that it
 * depends on, and a virtual name one package alone provides stands for that
 * package (apt installs it); a virtual name several provide is no package.
 */
export const archiveEntries = (stanzas: readonly PackageStanza[], contents: ReadonlyMap<string, Collected>): Map<string, Collected> => {
  const out = new Map<string, Collected>();
  const sourceOf = new Map(stanzas.map((s) => [s.name, s.source]));
  for (const s of stanzas) {
    const c = contents.get(s.name) ?? empty();
    const mine = { ...c, deps: new Set(s.depends.filter((d) => d !== s.name && sourceOf.get(d) === s.source)) };
    out.set(s.name, mine);
  }
  const providers = new Map<string, Set<string>>();
  for (const s of stanzas) for (const v of s.provides) if (!sourceOf.has(v)) providers.set(v, (providers.get(v) ?? new Set()).add(s.name));
  for (const [v, by] of providers) if (by.size === 1) out.set(v, { ...empty(), deps: new Set(by) });
  // A dependency that brings nothing, itself or through its own, is left out: most of the archive's
  // same-source dependencies are library packages' (-dev on the library, Rust crates' features).
  const brings = new Map<string, boolean>();
  const bringsAny = (name: string, seen = new Set<string>()): boolean => {
    const known = brings.get(name);
    if (known !== undefined) return known;
    const c = out.get(name);
    if (!c || seen.has(name)) return false;
    seen.add(name);
    const any = c.services.size + c.commands.size + c.paths.size + c.users.size + c.groups.size > 0 || [...c.deps].some((d) => bringsAny(d, seen));
    brings.set(name, any);
    return any;
  };
  for (const c of out.values()) c.deps = new Set([...c.deps].filter((d) => bringsAny(d)));
  return out;
};

const sorted = (s: ReadonlySet<string>): string[] => [...s].sort();

/** The plain data of a collected entry. */
export const entryOf = (c: Collected): ArchiveEntry => ({
  deps: sorted(c.deps),
  services: sorted(c.services),
  commands: sorted(c.commands),
  paths: sorted(c.paths),
  users: sorted(c.users),
  groups: sorted(c.groups),
});

/** One line of the table src/core/catalog.ts reads: the name, then each field's words, tab-separated, trailing empty fields left off. */
export const tableLine = (name: string, e: ArchiveEntry): string => {
  const fields = [name, ...archiveTableHeader.map((f) => e[f].join(' '))];
  while (fields.length > 1 && fields.at(-1) === '') fields.pop();
  return fields.join('\t');
};
