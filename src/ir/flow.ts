// The run order of an image's steps and the flow of facts along it: which
// step provides what another requires, what is unmet, and what holds after a
// prefix of the steps. The checker reports from it; the runtime outputs, the
// contracts and the graph read it.
import type { Fact, Image, Step } from './schema.js';
import { factId, parentDir } from '../core/facts.js';
import { globMatches, isGlob } from '../core/glob.js';
import { kindOf } from '../steps/index.js';

/** A step in run order, with the phase it belongs to. */
export interface Placed {
  step: Step;
  phase: string;
  phaseIndex: number;
  order: number;
  /** The phase runs on existing hosts only (bootstrap), never in the image. */
  hostOnly: boolean;
}

/** Every step of the image in run order: per phase its pre hooks, steps, post hooks. */
export const runOrder = (ir: Image): Placed[] =>
  ir.phases.flatMap((p, phaseIndex) => [...p.pre, ...p.steps, ...p.post].map((step) => ({ step, phase: p.name, phaseIndex, hostOnly: p.runtimeOnly === true }))).map((s, order) => ({ ...s, order }));

/** Who provides a requirement to whom: one edge per met requirement. */
export interface FactEdge {
  fact: Fact;
  /** The providing step's id, or 'base'. */
  from: string;
  to: string;
}

interface Walk {
  edges: FactEdge[];
  unmet: { placed: Placed; req: Fact; removal: Placed | undefined }[];
  /** The facts available after the walk, by id, with their provider. */
  available: () => ReadonlyMap<string, string>;
}

/** Whether `path` lies strictly below directory `dir`. */
export const isBelow = (path: string, dir: string): boolean => path.startsWith(dir === '/' ? '/' : `${dir}/`) && path !== dir;

/**
 * The facts a step removes, with what goes with them: a path removed by
 * anything but a package manager goes with everything below it (rm -r). A
 * package's removal takes only its own files (dpkg leaves what others wrote).
 */
export const removedWith = (step: Step, fact: Fact, known: Iterable<string>): string[] => {
  const id = factId(fact);
  if (fact.kind !== 'path' || kindOf(step).removesListedOnly) return [id];
  // A glob (remove('/tmp/*')) removes every known path it names, each with what lies below it.
  const paths = [...known].filter((k) => k.startsWith('path:')).map((k) => k.slice(5));
  const roots = isGlob(fact.key) ? paths.filter((k) => globMatches(fact.key, k)) : [fact.key];
  return [id, ...roots.map((r) => `path:${r}`), ...paths.filter((k) => roots.some((r) => isBelow(k, r))).map((k) => `path:${k}`)];
};

/** Walks the steps in run order from the base's facts: met and unmet requirements. */
export const walkFacts = (ir: Image, steps: Placed[]): Walk => {
  const availableFrom = new Map<string, string>(ir.base.provides.map((f) => [factId(f), 'base']));
  const available = (): Map<string, string> => availableFrom;
  const removedBy = new Map<string, Placed>();
  const walk: Walk = { edges: [], unmet: [], available };
  /** The removal of `req` or, for a path, of the nearest directory above it not made again since. */
  const removalOf = (req: Fact): Placed | undefined => {
    const own = removedBy.get(factId(req));
    if (own || req.kind !== 'path') return own;
    for (let dir = parentDir(req.key); ; dir = parentDir(dir)) {
      if (availableFrom.has(`path:${dir}`)) return undefined;
      const r = removedBy.get(`path:${dir}`);
      if (r) return r;
      if (dir === '/') return undefined;
    }
  };
  for (const placed of steps) {
    const { step } = placed;
    for (const req of step.requires) {
      const from = availableFrom.get(factId(req));
      if (from !== undefined) walk.edges.push({ fact: req, from, to: step.id });
      else walk.unmet.push({ placed, req, removal: removalOf(req) });
    }
    for (const f of step.removes) {
      for (const id of removedWith(step, f, availableFrom.keys())) {
        availableFrom.delete(id);
        removedBy.set(id, placed);
      }
    }
    for (const f of step.provides) {
      availableFrom.set(factId(f), step.id);
      removedBy.delete(factId(f));
    }
  }
  return walk;
};

export const factFlow = (ir: Image): FactEdge[] => walkFacts(ir, runOrder(ir)).edges;

/** The facts that hold once `steps` (a prefix of the run order) have run: each fact's id and the step that provided it ('base' for the base). */
export const factsAfter = (ir: Image, steps: Placed[]): ReadonlyMap<string, string> => walkFacts(ir, steps).available();
