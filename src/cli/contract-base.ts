// `imgc build` of a definition whose base is facts (fromContract,
// fromDefinition): where its root comes from, and the check that the root has
// those facts before any step runs.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseContract, type ContractFact } from '../contract/contract.js';
import { unmetFacts } from '../probe/holds.js';
import type { Image, Phase } from '../ir/schema.js';
import { phaseKind, throughPhase } from '../ir/phases.js';
import { DirView } from '../verify/rootview.js';

/** The facts the base's root must have: the contract file's (with owners, modes, versions) when it is there, else the IR's. */
const baseFacts = (ir: Image, definitionDir: string): ContractFact[] => {
  const origin = ir.base.origin;
  const file = origin?.kind === 'contract' ? path.resolve(definitionDir, origin.file) : undefined;
  if (file && existsSync(file)) return parseContract(readFileSync(file, 'utf8'), origin!.file).facts;
  return ir.base.provides;
};

const shown = 12;

/** `BuildOptions.checkBase` for a base made of facts; undefined for a distro's base. */
export const contractBaseCheck = (ir: Image, definitionDir: string, rootFrom: string): ((root: string) => string | undefined) | undefined => {
  const origin = ir.base.origin;
  if (!origin) return undefined;
  const facts = baseFacts(ir, definitionDir);
  return (root) => {
    const unmet = unmetFacts(facts, new DirView(root, rootFrom));
    if (!unmet.length) return undefined;
    const what = origin.kind === 'contract' ? `the contract ${origin.file}` : `definition ${origin.file} after phase '${origin.phase}'`;
    const lines = unmet.slice(0, shown).map((u) => `  ${u.what}: ${u.reason}`);
    if (unmet.length > shown) lines.push(`  … and ${unmet.length - shown} more`);
    return `the root ${rootFrom} lacks ${unmet.length} of the ${facts.length} facts of ${what}, which the phases after it may rely on:\n${lines.join('\n')}`;
  };
};

/**
 * The other definition of a fromDefinition base, cut after the base's phase
 * and given one artifact: its root as a tarball. Its phases' cache keys are
 * the full definition's, so a root it built before is taken from the cache.
 */
export const upToPhase = (other: Image, phase: string): Image => {
  const kept = (throughPhase(other, phase)?.phases ?? []).filter((p) => phaseKind(p) === 'root');
  const artifact: Phase = {
    name: 'artifact',
    runtime: false,
    pre: [],
    steps: [{ id: 'artifact.1.artifact', kind: 'artifact', format: 'tar', output: 'rootfs.tar', compression: 'none', provides: [{ kind: 'artifact', key: 'rootfs.tar' }], requires: [], removes: [] }],
    post: [],
  };
  return { ...other, phases: [...kept, artifact] };
};
