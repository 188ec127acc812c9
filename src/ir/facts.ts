import type { Fact, FactKind } from './schema.js';

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
