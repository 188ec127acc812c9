// The preflight of an existing host, from a contract: the host contract the
// runtime outputs render (src/compilers/runtime.ts `HostContract`), made of
// the contract's facts of the kinds a host can be asked about before anything
// runs. So a contract that was exported, probed or diffed is also what the
// preflight checks, fact for fact.
import { contractKinds, type ContractKind, type HostContract } from '../compilers/runtime.js';
import { describeFact } from '../core/facts.js';
import type { Contract, ContractFact } from './contract.js';

const checkable = (f: ContractFact): f is ContractFact & { kind: ContractKind } => (contractKinds as readonly string[]).includes(f.kind);

/**
 * The host contract of `c`: its distro and release, and each of its facts a
 * preflight can check (`only` keeps those the runtime phases need, when the
 * whole contract is more than they ask), in the preflight's kind order.
 */
export const preflightOf = (c: Contract, only: (f: ContractFact) => boolean = () => true): HostContract => {
  const facts = c.facts.filter(checkable).filter(only);
  const rank = (k: ContractKind) => contractKinds.indexOf(k);
  return {
    distro: c.base.distro,
    release: c.base.release,
    facts: facts.map((f) => ({ kind: f.kind, key: f.key, label: describeFact(f) })).sort((a, b) => rank(a.kind) - rank(b.kind)),
  };
};
