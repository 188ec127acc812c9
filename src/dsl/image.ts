// An image under construction: its name, base and phases, each phase a
// chain of steps (./builder.ts), and `toIR`, which numbers the steps and
// writes the Image IR.
import type { Base, Hook, Image, Phase, PhaseStep, SourceLocation, Step } from '../ir/types.js';
import { Fleet as FleetSchema, IR_VERSION } from '../ir/schema.js';
import type { Fleet } from '../ir/types.js';
import { lifecycle } from '../ir/lifecycle.js';
import { hasMarker } from '../core/variables.js';
import { DefinitionError } from '../core/definition-error.js';
import { callerLocation } from './location.js';
import { HookBuilder, phaseBuilder, record, VerifyBuilder, type Link, type PhaseBuilder, type StepBuilder, type StepChain } from './builder.js';
import { ArtifactBuilder } from './artifacts.js';
import type { Facts, FactsRecord, NoFacts, PackageCatalog } from './types.js';
import type { PackageArchive } from '../core/catalog.js';

/** A base image (phase 0) and the catalog of its package manager. */
export interface BaseImage<F extends Facts = Facts, C extends PackageCatalog = PackageCatalog> {
  readonly ir: Omit<Base, 'loc'>;
  readonly catalog: C;
  /** Every package of the base's archive, for the checker (the catalog holds those the types know). */
  readonly archive?: PackageArchive;
  /** Phantom: the facts the base provides, for the builder's types. */
  readonly __facts?: F;
}

interface PhaseRecord {
  name: string;
  runtime: boolean;
  runtimeOnly: boolean;
  loc: SourceLocation | undefined;
  chain: StepChain<Facts, PackageCatalog>;
}

export interface PhaseOptions {
  /** The phase may also run on existing hosts (only provision does by default). */
  runtime?: boolean;
}

/** An image under construction; the type parameters are the facts so far. */
export class ImageBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> {
  /** @internal */
  constructor(
    private readonly name: string,
    private readonly baseImage: BaseImage<Facts, C>,
    private readonly baseLoc: SourceLocation | undefined,
    private readonly phases: readonly PhaseRecord[],
    private readonly fleetOpts?: Fleet,
  ) {}

  private with<B, R>(name: string, opts: PhaseOptions & { runtimeOnly?: boolean }, chain: B, build: (b: B) => R): R {
    // A variable here is the checker's to report (IMGC0011, naming it).
    if (!hasMarker(name) && !/^[a-z][a-z0-9-]*$/.test(name)) throw new DefinitionError(`phase name '${name}' must be lower-case words joined by "-"`);
    if (this.phases.some((p) => p.name === name)) throw new DefinitionError(`phase '${name}' is declared twice`);
    const loc = callerLocation();
    const built = build(chain) as unknown as StepChain<Facts, PackageCatalog>;
    return new ImageBuilder(this.name, this.baseImage, this.baseLoc, [
      ...this.phases,
      { name, runtime: opts.runtimeOnly === true || (opts.runtime ?? name === 'provision'), runtimeOnly: opts.runtimeOnly === true, loc, chain: built },
    ], this.fleetOpts) as R;
  }

  /**
   * How the runtime outputs go through many hosts (Ansible's `serial` and
   * `max_fail_percentage`): `serial` hosts at a time (a number, or a
   * percentage as '25%'); the run stops once more than `maxFailPercentage`
   * percent of a batch failed. `imgc compile --serial/--max-fail` override them.
   */
  fleet(opts: { serial?: number | `${number}%`; maxFailPercentage?: number }): ImageBuilder<F, C> {
    const serial = opts.serial === undefined ? undefined : String(opts.serial);
    const parsed = FleetSchema.safeParse({ ...(serial !== undefined ? { serial } : {}), ...(opts.maxFailPercentage !== undefined ? { maxFailPercentage: opts.maxFailPercentage } : {}) });
    if (!parsed.success) throw new DefinitionError(`fleet(): ${parsed.error.issues.map((i) => (i.path[0] === 'maxFailPercentage' ? 'maxFailPercentage is a whole percentage from 0 to 100' : i.message)).join('; ')}`);
    return new ImageBuilder<F, C>(this.name, this.baseImage, this.baseLoc, this.phases, { ...this.fleetOpts, ...parsed.data });
  }

  /** The builder a phase's steps start from: no steps yet, the facts so far. */
  private emptyPhase(): PhaseBuilder<F, C> {
    return phaseBuilder<F, C>(this.baseImage, this.baseImage.ir.packageManager);
  }

  /** A phase of your own, run in declaration order. */
  phase<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, I2 extends Facts = never>(
    name: string,
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>,
    opts: PhaseOptions = {},
  ): ImageBuilder<FactsRecord<U2, G2, K2, P2, S2, X2, I2>, C> {
    return this.with(name, opts, this.emptyPhase(), build) as never;
  }

  /** Phase 1: users, groups, files, repositories, hardening. */
  customize<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, I2 extends Facts = never>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>,
  ): ImageBuilder<FactsRecord<U2, G2, K2, P2, S2, X2, I2>, C> {
    return this.phase('customize', build);
  }

  /** Phase 2: the node software; may also run at runtime on existing hosts. */
  provision<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, I2 extends Facts = never>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>,
  ): ImageBuilder<FactsRecord<U2, G2, K2, P2, S2, X2, I2>, C> {
    return this.phase('provision', build, { runtime: true });
  }

  /**
   * On existing hosts only, after the runtime phases: the node joins its
   * cluster (kubeadm join, with a sensitive token variable). Never part of an
   * image build, so nothing secret reaches an image; `imgc compile --runtime`
   * runs it, with its pre/post hooks, after provision. Its steps see the
   * facts of the phases before it; what it provides stays on the host (the
   * image's later phases do not see it).
   */
  bootstrap<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, I2 extends Facts = never>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>,
  ): ImageBuilder<F, C> {
    return this.with('bootstrap', { runtimeOnly: true }, this.emptyPhase(), build) as never;
  }

  /**
   * On existing hosts only, when the node leaves (ready -> draining): its
   * steps (kubectl drain with the node's kubeconfig, kubelet stopped) and
   * pre/post hooks — a pre webhook lets a controller answer retryAfterSeconds
   * until it has drained the node. The decommission outputs run it before the
   * decommission hooks and the undo; a failing step stops them with nothing
   * undone. Its steps see the facts of every phase before it; what they
   * change is not recorded, so decommission does not undo it.
   */
  drain<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, I2 extends Facts = never>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>,
  ): ImageBuilder<F, C> {
    return this.with('drain', { runtimeOnly: true }, this.emptyPhase(), build) as never;
  }

  /**
   * Hooks on the decommission edge: the decommission outputs (`imgc compile
   * --decommission`) fire the pre hooks before they undo anything and the post
   * hooks after (result failed, with the message, when the undo failed).
   */
  decommission(build: (d: HookBuilder<F, C>) => HookBuilder<F, C>): ImageBuilder<F, C> {
    return this.with('decommission', { runtimeOnly: true }, new HookBuilder<F, C>(this.baseImage, undefined, undefined, this.baseImage.ir.packageManager), build) as unknown as ImageBuilder<F, C>;
  }

  /** Phase 3: files made from the finished root. */
  artifact(build: (a: ArtifactBuilder<F, C>) => ArtifactBuilder<F, C>): ImageBuilder<F, C> {
    return this.with('artifact', {}, new ArtifactBuilder<F, C>(this.baseImage, undefined, undefined, this.baseImage.ir.packageManager), build) as unknown as ImageBuilder<F, C>;
  }

  /** Phase 4: checks and publishing. */
  verify(build: (v: VerifyBuilder<F, C>) => VerifyBuilder<F, C>): ImageBuilder<F, C> {
    return this.with('verify', {}, new VerifyBuilder<F, C>(this.baseImage, undefined, undefined, this.baseImage.ir.packageManager), build) as unknown as ImageBuilder<F, C>;
  }

  /** The Image IR: plain, deterministic JSON. */
  toIR(source = this.baseLoc?.file ?? 'definition.ts'): Image {
    // The phases for existing hosts only run after every phase of the image, wherever they were declared,
    // in the order of their lifecycle edges (bootstrap, drain, decommission).
    const edge = (p: PhaseRecord) => lifecycle.findIndex((e) => e.phase === p.name);
    const ordered = [...this.phases.filter((p) => !p.runtimeOnly), ...this.phases.filter((p) => p.runtimeOnly).sort((a, b) => edge(a) - edge(b))];
    const phases: Phase[] = ordered.map((p) => {
      const { steps, hooks } = p.chain.collect();
      const withId = (l: Link, i: number, prefix: string): Step => record(l, `${p.name}.${prefix}${i + 1}.${l.input.kind}`);
      const when = (w: 'pre' | 'post') => hooks.filter((h) => (h.input as { when?: string }).when === w).map((h, i) => withId(h, i, w) as Hook);
      return {
        name: p.name,
        runtime: p.runtime,
        ...(p.runtimeOnly ? { runtimeOnly: true as const } : {}),
        pre: when('pre'),
        steps: steps.map((s, i) => withId(s, i, '')) as PhaseStep[],
        post: when('post'),
        ...(p.loc ? { loc: p.loc } : {}),
      };
    });
    return {
      irVersion: IR_VERSION,
      name: this.name,
      source,
      base: { ...this.baseImage.ir, ...(this.baseLoc ? { loc: this.baseLoc } : {}) },
      phases,
      ...(this.fleetOpts ? { fleet: this.fleetOpts } : {}),
    };
  }

  /** @internal the image's name (a matrix's variant is named by it). */
  get imageName(): string {
    return this.name;
  }

  /** @internal the base's package catalog, for the checker's hints. */
  get packageCatalog(): C {
    return this.baseImage.catalog;
  }
}

/** Starts a definition; the base (phase 0) comes next. */
export const image = (name: string) => {
  if (!hasMarker(name) && !/^[a-z0-9][a-z0-9._-]*$/.test(name)) throw new DefinitionError(`image name '${name}' must be lower-case letters, digits, ".", "_" or "-"`);
  return {
    base<BF extends Facts, C extends PackageCatalog>(base: BaseImage<BF, C>): ImageBuilder<BF, C> {
      return new ImageBuilder<BF, C>(name, base, callerLocation(), []);
    },
  };
};
