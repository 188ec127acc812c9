// The preflight of an existing host, from a contract: the host contract the
// runtime outputs render (src/compilers/runtime.ts renders it through
// `hostContract`), made of the contract's facts of the kinds a host can be
// asked about before anything runs. The runtime outputs' preflight is the
// contract of the phase before the runtime phases, narrowed to what those
// phases need; so a contract that was exported, probed or diffed is also what
// the preflight checks, fact for fact.
import { describeFact, detailText, factId, type FactDetails } from '../core/facts.js';
import type { Fact } from '../ir/schema.js';
import type { Contract, ContractFact } from './contract.js';

/** The kinds of facts a preflight checks on a host (sysctl and kernelModule values, artifacts: not checkable before the run). */
export const contractKinds = ['user', 'group', 'package', 'path', 'command', 'service', 'repo'] as const;
export type ContractKind = (typeof contractKinds)[number];

/** One fact a preflight checks. */
export interface PreflightFact {
  readonly kind: ContractKind;
  readonly key: string;
  /** e.g. "user 'kube'": what the preflight prints when it is missing. */
  readonly label: string;
  /**
   * What the host's fact must be beyond being there, when the contract states
   * it: a path's type, owner, group and mode (mode as 4 octal digits), a
   * package's version.
   */
  readonly details?: PreflightDetails;
}

export type PreflightDetails = Pick<FactDetails, 'type' | 'owner' | 'group' | 'mode' | 'version'>;

/** "path '/etc/x' (type dir, owner root, group root, mode 0755)": a fact with what the preflight asks of it. */
export const preflightLabel = (f: PreflightFact): string => {
  const d = f.details ? detailText(f.details) : '';
  return d ? `${f.label} (${d})` : f.label;
};

/** The details a preflight asks of a contract's fact: a path's type, owner, group and mode; a package's version. */
const askedOf = (f: ContractFact): PreflightDetails | undefined => {
  const d: PreflightDetails =
    f.kind === 'path'
      ? {
          ...(f.type !== undefined ? { type: f.type } : {}),
          ...(f.owner !== undefined ? { owner: f.owner } : {}),
          ...(f.group !== undefined ? { group: f.group } : {}),
          ...(f.mode !== undefined && /^[0-7]{1,5}$/.test(f.mode) ? { mode: parseInt(f.mode, 8).toString(8).padStart(4, '0') } : {}),
        }
      : f.kind === 'package' && f.version !== undefined
        ? { version: f.version }
        : {};
  return Object.keys(d).length ? d : undefined;
};

export interface HostContract {
  /** /etc/os-release ID and VERSION_ID the host must have. */
  readonly distro: string;
  readonly release: string;
  readonly facts: readonly PreflightFact[];
}

const checkable = (f: ContractFact): f is ContractFact & { kind: ContractKind } => (contractKinds as readonly string[]).includes(f.kind);

/**
 * The host contract of `c`: its distro and release, and each of its facts a
 * preflight can check, in the preflight's kind order. With `needed` (the
 * facts the runtime phases need, in the order they first need them), only
 * those of them that the contract holds, in that order within a kind.
 */
export const preflightOf = (c: Contract, needed?: readonly Fact[]): HostContract => {
  const held = new Map(c.facts.filter(checkable).map((f) => [factId(f), f]));
  const ids = needed ? [...new Set(needed.map(factId))] : [...held.keys()];
  const facts = ids.flatMap((id) => held.get(id) ?? []);
  return {
    distro: c.base.distro,
    release: c.base.release,
    facts: inPreflightOrder(
      facts.map((f) => {
        const details = askedOf(f);
        return { kind: f.kind, key: f.key, label: describeFact(f), ...(details ? { details } : {}) };
      }),
    ),
  };
};

/** The preflight's order: by kind (users before the paths they own…), the given order within a kind; each fact once. */
export const inPreflightOrder = (facts: readonly PreflightFact[]): PreflightFact[] => {
  const seen = new Set<string>();
  const once = facts.filter((f) => {
    const id = `${f.kind}:${f.key}`;
    return seen.has(id) ? false : (seen.add(id), true);
  });
  const rank = (k: ContractKind) => contractKinds.indexOf(k);
  return once.sort((a, b) => rank(a.kind) - rank(b.kind));
};
