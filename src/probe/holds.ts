// What it means for a contract's fact to hold on a real root: one check per
// fact, built from verify's checks of the same kinds (so a fact means the same
// to verify, to the build's check of a base root, to the probe and to a host's
// preflight), plus the details a contract adds: type, owner, group and mode of a
// path, the version of a package, whether a service is enabled.
import { describeFact, detailText } from '../core/facts.js';
import { factCheck, RootFacts, type Check } from '../verify/expectations.js';
import { ownershipProblem } from '../steps/shared.js';
import { readDpkg, serviceEnabled } from '../core/root.js';
import type { RootView } from '../verify/rootview.js';
import type { ContractFact } from '../contract/contract.js';

export interface FactCheck {
  fact: ContractFact;
  /** "user 'ops'", "path '/etc/x' (mode 0440)". */
  what: string;
  check: Check;
}

const detailsShown = (f: ContractFact): string => {
  const d = detailText(f);
  return d ? ` (${d})` : '';
};

const versions = new WeakMap<RootFacts, Map<string, { status: string; version: string }>>();
const versionOf = (r: RootFacts, pkg: string): string | undefined => {
  let m = versions.get(r);
  if (!m) versions.set(r, (m = readDpkg(r.view)));
  return m.get(pkg)?.version;
};

/** The checks that decide whether each fact holds; artifacts (files beside a root) have none. */
export const factChecks = (facts: readonly ContractFact[]): FactCheck[] =>
  facts.flatMap((f) => {
    const plain = factCheck(f);
    if (!plain) return [];
    const check: Check = (r) => {
      const why = plain(r);
      if (why !== undefined) return why;
      if (f.kind === 'path') {
        const type = f.type === undefined ? undefined : r.view.meta(f.key)?.type;
        if (type !== undefined && type !== f.type) return `${f.key} is a ${type}, not a ${f.type}`;
        return ownershipProblem(r, f.key, f);
      }
      if (f.kind === 'service' && f.enabled !== undefined && serviceEnabled(r.view, f.key) !== f.enabled) return f.enabled ? `${f.key} is not enabled` : `${f.key} is enabled`;
      if (f.kind === 'package' && f.version !== undefined) {
        const v = versionOf(r, f.key);
        return v === f.version ? undefined : `version ${v} is installed, not ${f.version}`;
      }
      return undefined;
    };
    return [{ fact: f, what: `${describeFact(f)}${detailsShown(f)}`, check }];
  });

/** The facts that do not hold on the root `view` reads, with the reason each. */
export const unmetFacts = (facts: readonly ContractFact[], view: RootView): { fact: ContractFact; what: string; reason: string }[] => {
  const r = new RootFacts(view);
  return factChecks(facts).flatMap(({ fact, what, check }) => {
    const reason = check(r);
    return reason === undefined ? [] : [{ fact, what, reason }];
  });
};
