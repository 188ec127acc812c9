// A phase boundary's interface as an artifact: the facts that hold after a
// phase, written as versioned JSON another team can read, diff and (later)
// start from. Deterministic and sorted, one fact a line, so that a diff of two
// versions in review reads as what changed.
import { factsAfter, removedWith, runOrder } from '../ir/flow.js';
import { runsUnder, valuesOf } from '../core/conditions.js';
import { FactKind } from '../ir/schema.js';
import type { Fact, Image, Step } from '../ir/types.js';
import { kindOf } from '../steps/index.js';
import { FactDetails, factId } from '../core/facts.js';
import { phaseKind } from '../ir/phases.js';
import { z } from '../util/zod.js';

export const CONTRACT_VERSION = 1;

/**
 * A fact with what the contract knows of it: a path's type, owner, group and
 * mode; a package's version (the definition's pin, or what the base or the
 * probed root has).
 */
export const ContractFact = z
  .object({
    kind: FactKind,
    key: z.string().min(1),
    ...FactDetails.shape,
  })
  .strict();
export type ContractFact = z.infer<typeof ContractFact>;

export const Contract = z
  .object({
    $schema: z.string().optional(),
    contract: z.literal(CONTRACT_VERSION),
    image: z.string(),
    /** The phase after which these facts hold ('base' for the base alone). */
    phase: z.string(),
    base: z.object({ name: z.string(), distro: z.string(), release: z.string(), suite: z.string() }).strict(),
    facts: z.array(ContractFact),
  })
  .strict();
export type Contract = z.infer<typeof Contract>;

export const contractSchemaId = 'https://imgc.dev/schema/contract-v1.json';

/** The contract's JSON Schema (draft 2020-12). */
export const contractJsonSchema = (): Record<string, unknown> => ({
  ...z.toJSONSchema(Contract, { target: 'draft-2020-12' }),
  $id: contractSchemaId,
  title: 'imgc phase contract',
});

/** What a step says about a fact it provides beyond its key. */
const detailsOf = (step: Step | undefined, f: Fact): FactDetails => (step ? (kindOf(step).factDetails?.(step, f) ?? {}) : {});

/**
 * What the base says about a fact after `steps`. A path a step provides again
 * keeps the base's type, owner, group and mode where the step states none (a
 * package's files, a file written over: the path stays the base's) unless a
 * step removed it; a package keeps the base's version only while no step
 * installed it again or upgraded the installed ones (both move versions).
 */
const baseDetailsOf = (ir: Image, f: Fact, from: string, steps: readonly { step: Step }[], removed: ReadonlySet<string>): FactDetails => {
  const id = `${f.kind}:${f.key}`;
  const d = ir.base.details?.[id];
  if (!d) return {};
  if (f.kind === 'path') return removed.has(id) ? {} : d;
  if (from !== 'base' || steps.some((p) => kindOf(p.step).movesVersions)) return {};
  return d;
};

/** Per fact id, what each step says of it without providing it (`setsDetails`), in run order. */
const laterDetails = (steps: readonly { step: Step }[]): Map<string, { at: number; details: FactDetails }[]> => {
  const out = new Map<string, { at: number; details: FactDetails }[]>();
  steps.forEach((p, at) => {
    for (const { fact: f, details } of kindOf(p.step).setsDetails?.(p.step) ?? []) {
      const id = factId(f);
      out.set(id, [...(out.get(id) ?? []), { at, details }]);
    }
  });
  return out;
};

const kindOrder: readonly FactKind[] = ['user', 'group', 'path', 'package', 'service', 'command', 'kernelModule', 'sysctl', 'repo', 'artifact'];

/** Facts in a contract's order: by kind, then key. */
export const sortFacts = (facts: ContractFact[]): ContractFact[] =>
  facts.sort((a, b) => kindOrder.indexOf(a.kind) - kindOrder.indexOf(b.kind) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

/** The phases a contract can be taken after: 'base', then the definition's. */
export const boundaries = (ir: Image): string[] => ['base', ...ir.phases.map((p) => p.name)];

/**
 * The facts that hold after `phase` (default: the last phase that changes the
 * root, i.e. the whole image), sorted by kind, then key.
 */
export const contractOf = (ir: Image, phase?: string): Contract => {
  const rootPhases = ir.phases.filter((p) => phaseKind(p) === 'root');
  const at = phase ?? rootPhases[rootPhases.length - 1]?.name ?? 'base';
  if (!boundaries(ir).includes(at)) throw new Error(`no phase '${at}' in ${ir.name}; its phases: ${boundaries(ir).join(', ')}`);
  const index = at === 'base' ? -1 : ir.phases.findIndex((p) => p.name === at);
  // Under conditions, the facts of the run with the variables' values (as `imgc build` runs it).
  const values = valuesOf(ir.variables);
  const steps = runOrder(ir).filter((p) => p.phaseIndex <= index && runsUnder(p.step.conditions, values));
  const byId = new Map(steps.map((p) => [p.step.id, p.step]));
  const known = [...ir.base.provides.map(factId), ...steps.flatMap((p) => p.step.provides.map(factId))];
  const removed = new Set(steps.flatMap((p) => p.step.removes.flatMap((r) => removedWith(p.step, r, known))));
  const later = laterDetails(steps);
  const position = new Map(steps.map((p, i) => [p.step.id, i]));
  const facts = [...factsAfter(ir, steps)].map(([id, from]): ContractFact => {
    const colon = id.indexOf(':');
    const f = { kind: id.slice(0, colon) as FactKind, key: id.slice(colon + 1) };
    // What later steps say of it counts from the step that provides it (the last enable of a service installed once).
    const since = position.get(from) ?? -1;
    const set = (later.get(id) ?? []).filter((l) => l.at >= since).reduce<FactDetails>((d, l) => ({ ...d, ...l.details }), {});
    return { ...f, ...baseDetailsOf(ir, f, from, steps, removed), ...detailsOf(byId.get(from), f), ...set };
  });
  const { name, distro, release, suite } = ir.base;
  return { $schema: contractSchemaId, contract: CONTRACT_VERSION, image: ir.name, phase: at, base: { name, distro, release, suite }, facts: sortFacts(facts) };
};

/** The contract as its file holds it: one fact a line, so that line diffs are fact diffs. */
export const contractJson = (c: Contract): string => {
  const { facts, ...head } = c;
  const top = JSON.stringify(head, null, 2).replace(/\n}$/, '');
  return `${top},\n  "facts": [\n${facts.map((f) => `    ${JSON.stringify(f)}`).join(',\n')}\n  ]\n}\n`;
};

/** A contract file's text, checked against the schema; the error names the first problem. */
export const parseContract = (text: string, file: string): Contract => {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`);
  }
  return contractFrom(raw, file);
};

/** A contract's parsed JSON (an imported .json module), checked against the schema. */
export const contractFrom = (raw: unknown, file: string): Contract => {
  const parsed = Contract.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`${file} is not an imgc contract: ${i.path.join('.') || 'the file'}: ${i.message} (imgc schema --contract prints what one is)`);
  }
  return parsed.data;
};
