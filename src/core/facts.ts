// Facts: what a step provides, requires or removes (`user:kube`,
// `path:/etc/fstab`), and the source locations diagnostics point at. Every
// step kind and every later stage uses them, so they sit at the bottom.
import { z } from '../util/zod.js';

export const factKinds = [
  'user',
  'group',
  'path',
  'package',
  'service',
  'kernelModule',
  'sysctl',
  'command',
  'repo',
  'artifact',
] as const;
export const FactKind = z.enum(factKinds);
export type FactKind = z.infer<typeof FactKind>;

export const Fact = z.object({ kind: FactKind, key: z.string().min(1) }).strict();
export type Fact = z.infer<typeof Fact>;

export const SourceLocation = z
  .object({
    /** Path relative to the definition file's directory, POSIX separators. */
    file: z.string(),
    line: z.number().int().positive(),
    column: z.number().int().positive(),
  })
  .strict();
export type SourceLocation = z.infer<typeof SourceLocation>;

/**
 * What a fact may say beyond its key, where it is known: a path's type,
 * owner, group and mode; a package's version. A contract carries them, a
 * base's generated data knows them, a root's check compares them.
 */
export const FactDetails = z
  .object({
    /** Paths: what the path is (as a root's lstat says: a symlink is not followed). */
    type: z.enum(['dir', 'file', 'symlink', 'other']).optional(),
    owner: z.string().optional(),
    group: z.string().optional(),
    /** Paths: the permission bits in octal, e.g. '0755'. */
    mode: z.string().optional(),
    /** Packages: the installed or pinned version. */
    version: z.string().optional(),
    /** Services: started at boot (a link in a target's .wants or .requires directory, not masked). */
    enabled: z.boolean().optional(),
  })
  .strict();
export type FactDetails = z.infer<typeof FactDetails>;

/** The detail fields, in the order contracts and messages name them. */
export const detailKeys = ['type', 'owner', 'group', 'mode', 'version', 'enabled'] as const;

/** "type dir, owner root, mode 0755", "enabled": the details a fact states ('' when none). */
export const detailText = (d: FactDetails): string =>
  detailKeys
    .filter((k) => d[k] !== undefined)
    .map((k) => (typeof d[k] === 'boolean' ? (d[k] ? k : `not ${k}`) : `${k} ${d[k]}`))
    .join(', ');

export const fact = (kind: FactKind, key: string): Fact => ({ kind, key });

export const factId = (f: Fact): string => `${f.kind}:${f.key}`;

/** Human wording of a fact, as diagnostics print it: "user 'kube'". */
export const describeFact = (f: Fact): string => {
  const noun: Record<FactKind, string> = {
    user: 'user',
    group: 'group',
    path: 'path',
    package: 'package',
    service: 'service',
    kernelModule: 'kernel module',
    sysctl: 'sysctl',
    command: 'command',
    repo: 'repository',
    artifact: 'artifact',
  };
  return `${noun[f.kind]} '${f.key}'`;
};

/** Parent directory of an absolute POSIX path ("/" for top-level entries). */
export const parentDir = (path: string): string => {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const i = trimmed.lastIndexOf('/');
  return i <= 0 ? '/' : trimmed.slice(0, i);
};

/**
 * Facts imgc made from its own tables (a stdlib base's thousand and more, its paths' details), frozen
 * so that they stay as made: the IR's validation takes them as they are (src/check/validate.ts), where
 * they were half of its cost for every image (docs/performance.md, 2026-12-06 19:45 UTC). A test holds
 * every stdlib base to the schema. A list a definition makes or changes is a new one, and validated.
 */
const ownFacts = new WeakSet<object>();
export const asOwnFacts = <T extends object>(value: T): T => {
  for (const v of Object.values(value)) if (typeof v === 'object' && v !== null) Object.freeze(v);
  ownFacts.add(Object.freeze(value));
  return value;
};
export const areOwnFacts = (value: unknown): boolean => typeof value === 'object' && value !== null && ownFacts.has(value);

/** Removes duplicates, keeping first occurrences, so IR stays deterministic. */
export const uniqueFacts = (facts: readonly Fact[]): Fact[] => {
  const seen = new Set<string>();
  return facts.filter((f) => {
    const id = factId(f);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
};
