// The phase-aware builder. Each call records one step (with the facts it
// provides and requires, and where it was written) and returns a builder whose
// type parameters carry the facts known so far. Builders are persistent: a
// step links to the previous one, so building is O(n) and nothing is mutated.
import type { Base, Fact, HookAction, Image, Phase, PhaseStep, SourceLocation, Step, StepKind, StepOf } from '../ir/types.js';
import { Fleet, IR_VERSION } from '../ir/schema.js';
import { aptSourcesPath } from '../core/apt.js';
import { hasMarker } from '../core/variables.js';
import { bootFiles } from '../ir/boot.js';
import { fact, parentDir, uniqueFacts } from '../core/facts.js';
import { callerLocation } from './location.js';
import { lifecycle } from '../ir/lifecycle.js';
import { readTextFile, readTextTree } from './tree.js';
import { kinds } from '../steps/index.js';
import { archiveFormats, formatOfUrl, type ArchiveFormat } from '../steps/archive.js';
import type { LineInFileOptions } from '../steps/line-in-file.js';
import type { BlockInFileOptions } from '../steps/block-in-file.js';
import type { IniKeyOptions } from '../steps/ini-key.js';
import type { DataKeyOptions } from '../steps/data-key.js';
import type { RebootOptions } from '../steps/reboot.js';
import { packageFacts, packageProviding, packageRepo } from './catalog.js';
import type { Condition } from '../core/conditions.js';
import type { ListVariable, Variable } from './variables.js';
import type { PackageManager } from '../core/packages.js';
import type { Facts, Listed, NoFacts, PackageCatalog, PackageNameOf, Ref } from './types.js';
import type { Added, Module } from './module.js';

/** A base image (phase 0) and the catalog of its package manager. */
export interface BaseImage<F extends Facts = Facts, C extends PackageCatalog = PackageCatalog> {
  readonly ir: Omit<Base, 'loc'>;
  readonly catalog: C;
  /** Phantom: the facts the base provides, for the builder's types. */
  readonly __facts?: F;
}

type StepInput<K extends StepKind> = Omit<StepOf<K>, 'id' | 'loc' | 'provides' | 'requires' | 'removes'> & {
  provides?: Fact[];
  requires?: Fact[];
  removes?: Fact[];
};

// A step as its method was called, made into IR (with its id) once, by toIR.
interface Link {
  readonly input: StepInput<StepKind>;
  readonly loc: SourceLocation | undefined;
  readonly prev: Link | undefined;
}

const toArray = <T>(link: Link | undefined, pick: (l: Link) => T): T[] => {
  const out: T[] = [];
  for (let l = link; l; l = l.prev) out.push(pick(l));
  return out.reverse();
};

const record = ({ input, loc }: Link, id: string): Step => {
  const { provides = [], requires = [], removes = [], ...rest } = input;
  return {
    id,
    ...rest,
    ...(loc ? { loc } : {}),
    provides: uniqueFacts(provides),
    requires: uniqueFacts(requires),
    removes: uniqueFacts(removes),
  } as Step;
};

/** Declared facts of an escape-hatch step (raw command, script hook). */
export interface DeclaredFacts {
  provides?: Partial<Record<Fact['kind'], readonly string[]>>;
  requires?: Partial<Record<Fact['kind'], readonly string[]>>;
  removes?: Partial<Record<Fact['kind'], readonly string[]>>;
}

const declared = (m: DeclaredFacts[keyof DeclaredFacts]): Fact[] =>
  Object.entries(m ?? {}).flatMap(([kind, keys]) => (keys ?? []).map((k) => fact(kind as Fact['kind'], k)));

export interface HookOptions extends DeclaredFacts {
  description?: string;
}

/** Hook actions; pass them to `.pre()` / `.post()` of any phase. */
export const script = (run: string): HookAction => ({ type: 'script', run });
export const webhook = (
  url: string,
  opts: { timeoutSeconds?: number; retries?: number; onFailure?: 'fail' | 'warn' } = {},
): HookAction => ({
  type: 'webhook',
  url,
  timeoutSeconds: opts.timeoutSeconds ?? 10,
  retries: opts.retries ?? 2,
  onFailure: opts.onFailure ?? 'fail',
});
export const event = (target: 'stdout' | `/${string}` = 'stdout'): HookAction => ({ type: 'event', target });

/** What every phase builder shares: hooks and the step chain. */
abstract class StepChain<F extends Facts, C extends PackageCatalog> {
  /** @internal */
  constructor(
    protected readonly catalog: C,
    protected readonly last: Link | undefined,
    protected readonly hooks: Link | undefined,
    /** How the base's package manager spells a pinned package. */
    protected readonly family: PackageManager = 'apt',
    /** The conditions of the `when` blocks the steps are written in. */
    protected readonly conditions: readonly Condition[] = [],
  ) {}

  protected abstract derive(last: Link | undefined, hooks: Link | undefined): this;

  /** @internal Records a step; the public methods narrow the returned type. */
  protected add<K extends StepKind>(input: StepInput<K>): this {
    const conditioned = this.conditions.length ? { ...input, conditions: [...this.conditions] } : input;
    return this.derive({ input: conditioned, loc: callerLocation(), prev: this.last }, this.hooks);
  }

  /** A hook run before the phase's first step. */
  pre(action: HookAction, opts: HookOptions = {}): this {
    return this.hook('pre', action, opts);
  }

  /** A hook run after the phase's last step. */
  post(action: HookAction, opts: HookOptions = {}): this {
    return this.hook('post', action, opts);
  }

  private hook(when: 'pre' | 'post', action: HookAction, opts: HookOptions): this {
    if (this.conditions.length) throw new DefinitionError(`a ${when} hook runs with its phase: write it outside the when(...) block`);
    const input: StepInput<'hook'> = {
      kind: 'hook',
      when,
      action,
      ...(opts.description ? { description: opts.description } : {}),
      provides: declared(opts.provides),
      requires: declared(opts.requires),
      removes: declared(opts.removes),
    };
    return this.derive(this.last, { input, loc: callerLocation(), prev: this.hooks });
  }

  /** @internal The phase's steps and hooks, in the order written. */
  collect(): { steps: Link[]; hooks: Link[] } {
    return { steps: toArray(this.last, (l) => l), hooks: toArray(this.hooks, (l) => l) };
  }

  /** Facts the raw steps of this kind declare; `FactsOf` on the builder. */
  declare readonly __facts?: F;
}

export interface UserOptions<KnownGroup extends string, G extends string, PG extends string, H extends string> {
  uid?: number;
  /** Primary group; by default a group of the user's own name is created. */
  primaryGroup?: Ref<KnownGroup, PG>;
  groups?: readonly Ref<KnownGroup, G>[];
  /** Home directory, created; default /home/NAME (none for system users). */
  home?: H;
  shell?: string;
  system?: boolean;
}

export interface Ownership<KnownUser extends string, KnownGroup extends string, O extends string, G extends string> {
  owner?: Ref<KnownUser, O>;
  group?: Ref<KnownGroup, G>;
  mode?: string;
}

export interface CommandOptions extends DeclaredFacts {
  description?: string;
  /** Skip the command when this path exists (idempotence). */
  creates?: `/${string}`;
  /** Mount /proc, /sys and /dev in a chroot before running it. */
  needsMounts?: boolean;
}

export interface AnsibleRoleOptions extends DeclaredFacts {
  description?: string;
  /** The role's variables, passed with the import (role vars: they override its defaults). */
  vars?: Readonly<Record<string, string | number | boolean>>;
}

export interface PuppetApplyOptions extends DeclaredFacts {
  description?: string;
  /** A directory of Puppet modules, relative to this file: the run's whole --modulepath. */
  modulePath?: string;
}

// Each step's signature, named (U … C: the facts of the builder it is called
// on, inferred from `this`): a property typed by a non-generic type alias is
// the one member TypeScript does not make anew for each StepBuilder type.
type WhenStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, U3 extends string = U, G3 extends string = G, K3 extends string = K, P3 extends string = P, S3 extends string = S, X3 extends string = X>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  condition: Condition | Variable<boolean>,
  then: (p: StepBuilder<U, G, K, P, S, X, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C>,
  otherwise?: (p: StepBuilder<U, G, K, P, S, X, C>) => StepBuilder<U3, G3, K3, P3, S3, X3, C>,
) => StepBuilder<Extract<U2, U3>, Extract<G2, G3>, Extract<K2, K3>, Extract<P2, P3>, Extract<S2, S3>, Extract<X2, X3>, C>;

type GroupStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: N,
  opts?: { gid?: number; system?: boolean },
) => StepBuilder<U, G | N, K, P, S, X, C>;

type UserStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string, UG extends string = never, PG extends string = never, const H extends `/${string}` = `/home/${N}`>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: N,
  opts?: UserOptions<G, UG, PG, H>,
) => StepBuilder<U | N, G | ([PG] extends [never] ? N : never), K, P | H, S, X, C>;

type DirectoryStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends `/${string}`, O extends string = never, OG extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  path: D,
  opts?: Ownership<U, G, O, OG>,
) => StepBuilder<U, G, K, P | D, S, X, C>;

type FileStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends `/${string}`, O extends string = never, OG extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  path: D,
  opts: Ownership<U, G, O, OG> & { content: string },
) => StepBuilder<U, G, K, P | D, S, X, C>;

type SymlinkStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends `/${string}`>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  path: D,
  target: string,
) => StepBuilder<U, G, K, P | D, S, X, C>;

type PackagesStep = PackagesFromNames & PackagesFromList;

/**
 * `packages(extraDebs)`: the packages a list variable names, known only when
 * the output runs. They provide no fact a later step could require (docs/variables.md).
 */
type PackagesFromList = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  list: ListVariable,
) => StepBuilder<U, G, K, P, S, X, C>;

type PackagesFromNames = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string, const D extends Pick<DeclaredFacts, 'provides'> = {}, M extends string = PackageNameOf<N>>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  names: readonly N[],
  opts?: D,
) => StepBuilder<
    U | Listed<C, M, 'users'> | Declared<D, 'user'>,
    G | Listed<C, M, 'groups'> | Declared<D, 'group'>,
    K | M,
    P | Listed<C, M, 'paths'> | Declared<D, 'path'>,
    S | Listed<C, M, 'services'> | Declared<D, 'service'>,
    X | Listed<C, M, 'commands'> | Declared<D, 'command'>,
    C
  >;

type RemovePackagesStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string, M extends string = PackageNameOf<N>>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  names: readonly Ref<K, N>[],
) => StepBuilder<
    Without<U, Listed<C, M, 'users'>>,
    Without<G, Listed<C, M, 'groups'>>,
    Without<K, M>,
    Without<P, Listed<C, M, 'paths'>>,
    Without<S, Listed<C, M, 'services'>>,
    Without<X, Listed<C, M, 'commands'>>,
    C
  >;

type AptRepositoryStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: N,
  opts: { uri: string; suites: readonly string[]; components?: readonly string[]; key?: string; keyUrl?: string },
) => StepBuilder<U, G, K, P, S, X, C>;

type EnableServiceStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: Ref<S, N>,
) => StepBuilder<U, G, K, P, S, X, C>;

type DisableServiceStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: Ref<S, N>,
) => StepBuilder<U, G, K, P, S, X, C>;

type HoldStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  names: readonly Ref<K, N>[],
) => StepBuilder<U, G, K, P, S, X, C>;

type UnholdStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  names: readonly Ref<K, N>[],
) => StepBuilder<U, G, K, P, S, X, C>;

type MaskServiceStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: N,
) => StepBuilder<U, G, K, P, Without<S, N>, X, C>;

type UnmaskServiceStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: N,
) => StepBuilder<U, G, K, P, S, X, C>;

type SysctlStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  key: string,
  value: string | number,
  opts?: { file?: `/${string}` },
) => StepBuilder<U, G, K, P, S, X, C>;

type KernelModuleStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: string,
  opts?: { file?: `/${string}` },
) => StepBuilder<U, G, K, P, S, X, C>;

/** The directories of the root's PATH: a file directly in one is a command (src/steps/download.ts, commandAt). */
type PathDir = '/usr/local/sbin' | '/usr/local/bin' | '/usr/sbin' | '/usr/bin' | '/sbin' | '/bin';
/** The command a file at D is, if D is directly in a PATH directory. */
type CommandAt<D extends string> = { [K in PathDir]: D extends `${K}/${infer N}` ? (N extends '' | `${string}/${string}` ? never : N) : never }[PathDir];
type Octal = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7';
/** A mode with the owner's x bit: '0755', '755'. */
type ExecutableMode = `${Octal | ''}${'1' | '3' | '5' | '7'}${Octal}${Octal}`;

type DownloadStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends `/${string}`, O extends string = never, OG extends string = never, const M extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  url: string,
  path: D,
  opts: Ownership<U, G, O, OG> & { sha256: string; mode?: M },
) => StepBuilder<U, G, K, P | D, S, X | ([M] extends [never] ? never : M extends ExecutableMode ? CommandAt<D> : never), C>;

type ArchiveStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends `/${string}`, const R extends `/${string}`, O extends string = never, OG extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  url: string,
  dest: D,
  opts: Ownership<U, G, O, OG> & { sha256: string; format?: ArchiveFormat; strip?: number; creates: readonly R[] },
) => StepBuilder<U, G, K, P | D | R, S, X | CommandAt<R>, C>;

type UnitStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const N extends `${string}.${'service' | 'socket' | 'timer' | 'target' | 'path' | 'mount' | 'automount' | 'swap' | 'slice'}`>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: N,
  content: string,
) => StepBuilder<U, G, K, P | `/etc/systemd/system/${N}`, S | N | (N extends `${infer B}.service` ? B : never), X, C>;

type DropInStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, N extends string, const F extends `${string}.conf`>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  unit: Ref<S, N> | `${Ref<S, N>}.service`,
  name: F,
  content: string,
) => StepBuilder<U, G, K, P | `/etc/systemd/system/${string}.d/${F}`, S, X, C>;

type StartServiceStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: Ref<S, N>,
) => StepBuilder<U, G, K, P, S, X, C>;

type RestartServiceStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  name: Ref<S, N>,
) => StepBuilder<U, G, K, P, S, X, C>;

type RebootStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  opts?: RebootOptions,
) => StepBuilder<U, G, K, WithoutTree<P, GlobPattern<'/run/*'>>, S, X, C>;

type SwapOffStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog>(
  this: StepBuilder<U, G, K, P, S, X, C>,
) => StepBuilder<U, G, K, P, S, X, C>;

type RemoveStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const R extends `/${string}`>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  paths: readonly R[],
) => StepBuilder<U, G, K, WithoutTree<P, GlobPattern<R>>, S, X, C>;

type TruncateStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  paths: readonly `/${string}`[],
) => StepBuilder<U, G, K, P, S, X, C>;

type LineInFileStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  path: Ref<P, D>,
  opts: LineInFileOptions,
) => StepBuilder<U, G, K, P, S, X, C>;

type UpgradeStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  opts?: { dist?: boolean },
) => StepBuilder<U, G, K, P, S, X, C>;

type BlockInFileStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  path: Ref<P, D>,
  block: string,
  opts?: BlockInFileOptions,
) => StepBuilder<U, G, K, P, S, X, C>;

type IniKeyStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  path: Ref<P, D>,
  key: string,
  opts: IniKeyOptions,
) => StepBuilder<U, G, K, P, S, X, C>;

type DataKeyStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends string>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  path: Ref<P, D>,
  key: string | readonly string[],
  opts: DataKeyOptions,
) => StepBuilder<U, G, K, P, S, X, C>;

/** The builder after a step that declares what it provides and removes (a raw command, an Ansible role). */
type WithDeclared<U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, D extends DeclaredFacts> = StepBuilder<
    Without<U, Removed<D, 'user'>> | Declared<D, 'user'>,
    Without<G, Removed<D, 'group'>> | Declared<D, 'group'>,
    Without<K, Removed<D, 'package'>> | Declared<D, 'package'>,
    WithoutTree<P, Removed<D, 'path'>> | Declared<D, 'path'>,
    Without<S, Removed<D, 'service'>> | Declared<D, 'service'>,
    Without<X, Removed<D, 'command'>> | Declared<D, 'command'>,
    C
  >;

type CommandStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends DeclaredFacts>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  run: string,
  opts?: CommandOptions & D,
) => WithDeclared<U, G, K, P, S, X, C, D>;

type AnsibleRoleStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends DeclaredFacts>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  dir: string,
  opts?: AnsibleRoleOptions & D,
) => WithDeclared<U, G, K, P, S, X, C, D>;

type PuppetApplyStep = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, const D extends DeclaredFacts>(
  this: StepBuilder<U, G, K, P, S, X, C>,
  manifest: string,
  opts?: PuppetApplyOptions & D,
) => WithDeclared<U, G, K, P, S, X, C, D>;

interface UseStep {
  <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string>(
    this: StepBuilder<U, G, K, P, S, X, C>,
    module: (p: StepBuilder<U, G, K, P, S, X, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C>,
  ): StepBuilder<U2, G2, K2, P2, S2, X2, C>;
  <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, A extends Partial<Record<keyof Facts, string>>>(
    this: StepBuilder<U, G, K, P, S, X, C>,
    module: Module<A>,
  ): StepBuilder<U | Added<A>['user'], G | Added<A>['group'], K | Added<A>['package'], P | Added<A>['path'], S | Added<A>['service'], X | Added<A>['command'], C>;
}

/**
 * The steps of StepBuilder. Each step's type reads the builder's facts from
 * its `this`, and each is a property of a named type, not a method:
 * TypeScript makes every method of a generic class anew for each of its
 * instantiations, and every step that adds a fact makes a new StepBuilder
 * type. So the ~40 steps are made once, not once per step of a definition
 * (docs/performance.md, 2026-12-04 22:30 UTC).
 */
interface Steps {
  /**
   * Steps taken only when a condition holds when the output runs:
   * `p.when(runtime.is('crio'), (p) => p.packages(['cri-o']))`, a boolean
   * variable standing for `is(true)`; `otherwise` takes the other branch.
   * After the block the types know what both branches keep (without the
   * `otherwise`: what the block keeps of the facts before it); the checker
   * checks every combination of values the conditions tell apart.
   */
  readonly when: WhenStep;

  readonly group: GroupStep;

  readonly user: UserStep;

  readonly directory: DirectoryStep;

  readonly file: FileStep;

  readonly symlink: SymlinkStep;

  /**
   * Installs packages with the base's package manager. What a package brings
   * comes from the base's catalog; one the catalog does not know declares it:
   * `packages(['chrony'], { provides: { service: ['chrony'] } })`.
   */
  readonly packages: PackagesStep;

  /** Removes packages and what they provided: later references to those are type errors too. */
  readonly removePackages: RemovePackagesStep;

  /** An apt source (deb822 .sources file) with its signing key, given as text or a URL. */
  readonly aptRepository: AptRepositoryStep;

  /** Enables a systemd unit (at boot; nothing is started in a chroot). */
  readonly enableService: EnableServiceStep;

  readonly disableService: DisableServiceStep;

  /** Holds installed packages at their version (apt-mark hold): an upgrade on the node leaves them. */
  readonly hold: HoldStep;

  /** Releases held packages. */
  readonly unhold: UnholdStep;

  /** Masks a systemd unit (a link to /dev/null): nothing starts or enables it; the unit need not be installed. */
  readonly maskService: MaskServiceStep;

  /** Unmasks a systemd unit masked before (links only; what provides the unit is the install's to say). */
  readonly unmaskService: UnmaskServiceStep;

  /** A kernel parameter, persisted in /etc/sysctl.d. */
  readonly sysctl: SysctlStep;

  /** A kernel module loaded at boot, listed in /etc/modules-load.d. */
  readonly kernelModule: KernelModuleStep;

  /**
   * A file fetched from `url` (a variable may stand in it) and checked against
   * its sha256 (required; a variable may hold it) before it takes `path`'s place.
   */
  readonly download: DownloadStep;

  /**
   * A tar (gz/xz/zst) or zip archive fetched from `url` with its sha256 and
   * unpacked into `dest`; `creates` lists the paths the image relies on (the
   * checker cannot see into an archive): they become facts, e.g.
   * `archive(url, '/usr/local/bin', { sha256, creates: ['/usr/local/bin/crictl'] })`.
   */
  readonly archive: ArchiveStep;

  /** A systemd unit file in /etc/systemd/system: it provides its service (`kubelet.service` answers to `kubelet` too). */
  readonly unit: UnitStep;

  /** A drop-in of a unit (/etc/systemd/system/UNIT.d/NAME.conf); the unit must be known (a package, a unit step, the base). */
  readonly dropIn: DropInStep;

  /** Starts a service now: live hosts only (runtime outputs, cloud-init); an image build refuses it (IMGC2002). */
  readonly startService: StartServiceStep;

  /** Restarts a service now: live hosts only (runtime outputs, cloud-init); an image build refuses it (IMGC2002). */
  readonly restartService: RestartServiceStep;

  /**
   * Reboots the machine here and goes on once it is back (up to `timeout`
   * seconds, default 600): `reboot({ reason: 'new kernel' })`. Only where a
   * machine can come back: Packer (its VM) and `--target ansible --runtime`;
   * a chroot build, cloud-init and provision.sh refuse it (IMGC2002). It
   * provides nothing and forgets what lies under /run (a tmpfs); docs/reboot.md.
   */
  readonly reboot: RebootStep;

  /** Disables swap: comments swap entries out of /etc/fstab (kubelet refuses swap). */
  readonly swapOff: SwapOffStep;

  /**
   * Removes paths and what lies below them: `remove(['/etc/machine-id', '/tmp/*'])`.
   * The last segment may be an sh glob; the checker takes what it names from the
   * known facts, and a later step that needs one of those paths is IMGC0005.
   */
  readonly remove: RemoveStep;

  /** Empties files, keeping them, their owner and mode (logs, machine-id); globs as for `remove`. */
  readonly truncate: TruncateStep;

  /**
   * One line of an existing file, as Ansible's lineinfile: present replaces the
   * last line `regexp` matches (else appends `line`); absent removes the lines
   * `regexp` matches, or equal to `line`. The regexp is the syntax Python and awk
   * share (docs/file-edits.md).
   */
  readonly lineInFile: LineInFileStep;

  /** Upgrades the installed packages (apt-get upgrade; `dist: true`: dist-upgrade); held packages stay. */
  readonly upgrade: UpgradeStep;

  /** Lines of an existing file between marker lines, as Ansible's blockinfile: replaced, appended, or removed (state absent). */
  readonly blockInFile: BlockInFileStep;

  /**
   * One key of an existing ini-style file, as community.general.ini_file: present
   * sets `key = value` in `section` (left out: the keys before the first section,
   * as in /etc/default files), absent removes the key's lines (docs/file-edits.md).
   */
  readonly iniKey: IniKeyStep;

  /**
   * One key of an existing TOML file, by its dotted key in TOML's syntax
   * (`plugins."io.containerd.grpc.v1.cri".containerd`) or its segments: present
   * sets it to `value`, making the tables on the way; absent removes it. The
   * root needs python3-tomlkit, which does the edit (docs/file-edits.md).
   */
  readonly tomlKey: DataKeyStep;

  /**
   * One key of an existing YAML file (one document), by its dotted key
   * (`authentication.x509.clientCAFile`) or its segments when a key holds a
   * dot: present sets it to `value`, making the mappings on the way; absent
   * removes it. The root needs python3-ruamel.yaml, which does the edit.
   */
  readonly yamlKey: DataKeyStep;

  /** The escape hatch: a raw shell command with the facts it declares. */
  readonly command: CommandStep;

  /**
   * An existing Ansible role applied as one step, with the facts it declares
   * (imgc cannot see into it, as with `command`). `dir` is relative to this
   * file and holds tasks/main.yml (or main.yaml); its files are read now and
   * every output that applies the role carries a copy. The ansible target
   * imports it natively; the shell target's build.sh applies it from the
   * build machine; provision.sh, Packer's shell provisioner and cloud-init
   * refuse it (docs/ansible-role.md).
   */
  readonly ansibleRole: AnsibleRoleStep;

  /**
   * An existing Puppet manifest applied inside the root with `puppet apply`,
   * as one step with the facts it declares (imgc cannot see into it, as with
   * `command`). `manifest` (a .pp file) and `modulePath` are relative to this
   * file; their files are read now and every output carries them. The root
   * needs the puppet package from an earlier step (docs/puppet-apply.md).
   */
  readonly puppetApply: PuppetApplyStep;

  /**
   * Applies a module: a function of a builder, or one of `defineModule` (the
   * stdlib's are), whose facts come from its type's argument (`Module`).
   */
  readonly use: UseStep;
}

// The class that carries the steps' code; merged with this interface, it has their types.
interface RootSteps extends Steps {}
abstract class RootSteps extends StepChain<Facts, PackageCatalog> {
  static {
    // The steps' code, on the prototype; written in this block, it may use the chain's protected members.
    const service = (b: RootSteps, name: string, enabled: boolean): never => {
      const pkg = packageProviding(b.catalog, 'services', name);
      return b.add<'service'>({
        kind: 'service',
        name,
        enabled,
        ...(pkg ? { package: pkg } : {}),
        requires: [fact('service', name), fact('command', 'systemctl')],
      }) as never;
    };
    const dataKey = (b: RootSteps, format: 'toml' | 'yaml', path: string, key: string | readonly string[], opts: DataKeyOptions): never => {
      try {
        return b.add<'dataKey'>(kinds.dataKey.make(format, path, key, opts, b.family)) as never;
      } catch (e) {
        throw new DefinitionError(`${format}Key('${path}'): ${(e as Error).message}`);
      }
    };
    const steps: Steps = {
      when(condition, then, otherwise) {
        const c: Condition = 'equals' in condition ? condition : condition.is(true);
        const branch = (cond: Condition, last: Link | undefined): typeof this => new StepBuilder(this.catalog, last, this.hooks, this.family, [...this.conditions, cond]) as never;
        let last = then(branch(c, this.last)).last;
        if (otherwise) last = otherwise(branch({ ...c, negate: !c.negate }, last)).last;
        return this.derive(last, this.hooks) as never;
      },
      group(name, opts = {}) {
        return this.add<'group'>({
          kind: 'group',
          name,
          ...(opts.gid !== undefined ? { gid: opts.gid } : {}),
          system: opts.system ?? false,
          provides: [fact('group', name)],
        }) as never;
      },
      user(name, opts = {}) {
        const groups = [...(opts.groups ?? [])] as string[];
        const home = opts.home ?? (opts.system ? undefined : `/home/${name}`);
        const primaryGroup = opts.primaryGroup as string | undefined;
        return this.add<'user'>({
          kind: 'user',
          name,
          ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
          ...(primaryGroup ? { primaryGroup } : {}),
          groups,
          ...(home ? { home } : {}),
          ...(opts.shell ? { shell: opts.shell } : {}),
          system: opts.system ?? false,
          provides: [fact('user', name), ...(primaryGroup ? [] : [fact('group', name)]), ...(home ? [fact('path', home)] : [])],
          requires: [
            ...(primaryGroup ? [fact('group', primaryGroup)] : []),
            ...groups.map((g) => fact('group', g)),
            ...(home ? [fact('path', parentDir(home))] : []),
          ],
        }) as never;
      },
      directory(path, opts = {}) {
        return this.add<'directory'>({ kind: 'directory', path, ...ownership(opts), provides: [fact('path', path)], requires: ownershipRequires(path, opts) }) as never;
      },
      file(path, opts) {
        return this.add<'file'>({
          kind: 'file',
          path,
          content: opts.content,
          ...ownership(opts),
          provides: [fact('path', path)],
          requires: ownershipRequires(path, opts),
        }) as never;
      },
      symlink(path, target) {
        return this.add<'symlink'>({ kind: 'symlink', path, target, provides: [fact('path', path)], requires: [fact('path', parentDir(path))] }) as never;
      },
      packages(this: RootSteps, names: readonly string[] | ListVariable, opts: Pick<DeclaredFacts, 'provides'> = {}): never {
        if (!Array.isArray(names)) return this.add<'packageList'>(kinds.packageList.make((names as ListVariable).reference)) as never;
        const provides = [...names.flatMap((n) => packageFacts(this.catalog, n, this.family)), ...declared(opts.provides)];
        const requires = names.flatMap((n) => {
          const repo = packageRepo(this.catalog, n, this.family);
          return repo ? [fact('repo', repo)] : [];
        });
        return this.add<'packages'>({ kind: 'packages', action: 'install', names: [...names], provides, requires }) as never;
      },
      removePackages(names) {
        const removes = (names as readonly string[]).flatMap((n) => packageFacts(this.catalog, n, this.family));
        return this.add<'packages'>({ kind: 'packages', action: 'remove', names: [...(names as readonly string[])], removes }) as never;
      },
      aptRepository(name, opts) {
        const signed = opts.key !== undefined || opts.keyUrl !== undefined;
        const keyPath = signed ? `/etc/apt/keyrings/${name}.asc` : undefined;
        return this.add<'aptRepository'>({
          kind: 'aptRepository',
          name,
          uri: opts.uri,
          suites: [...opts.suites],
          components: [...(opts.components ?? [])],
          ...(opts.key !== undefined ? { key: opts.key } : {}),
          ...(opts.keyUrl !== undefined ? { keyUrl: opts.keyUrl } : {}),
          ...(keyPath ? { keyPath } : {}),
          provides: [fact('repo', name), fact('path', aptSourcesPath(name)), ...(keyPath ? [fact('path', keyPath)] : [])],
          requires: [
            fact('path', '/etc/apt/sources.list.d'),
            ...(keyPath ? [fact('path', '/etc/apt/keyrings')] : []),
            ...(opts.keyUrl !== undefined ? [fact('command', 'curl')] : []),
          ],
        }) as never;
      },
      enableService(name) {
        return service(this, name as string, true);
      },
      disableService(name) {
        return service(this, name as string, false);
      },
      hold(names) {
        return this.add<'hold'>(kinds.hold.make(names as readonly string[], true)) as never;
      },
      unhold(names) {
        return this.add<'hold'>(kinds.hold.make(names as readonly string[], false)) as never;
      },
      maskService(name) {
        return this.add<'mask'>(kinds.mask.make(name, true)) as never;
      },
      unmaskService(name) {
        return this.add<'mask'>(kinds.mask.make(name, false)) as never;
      },
      sysctl(key, value, opts = {}) {
        const file = opts.file ?? '/etc/sysctl.d/99-imgc.conf';
        return this.add<'sysctl'>({ kind: 'sysctl', key, value: String(value), file, provides: [fact('sysctl', key), fact('path', file)] }) as never;
      },
      kernelModule(name, opts = {}) {
        const file = opts.file ?? '/etc/modules-load.d/imgc.conf';
        return this.add<'kernelModule'>({ kind: 'kernelModule', name, file, provides: [fact('kernelModule', name), fact('path', file)] }) as never;
      },
      download(url, path, opts) {
        return this.add<'download'>(kinds.download.make(url, path, opts)) as never;
      },
      archive(url, dest, opts) {
        const format = opts.format ?? formatOfUrl(url);
        if (!format) throw new DefinitionError(`archive ${url}: its format does not show in the URL; say it: { format: ${archiveFormats.map((f) => `'${f}'`).join(' | ')} }`);
        return this.add<'archive'>(kinds.archive.make(url, dest, { ...opts, format })) as never;
      },
      unit(name, content) {
        return this.add<'unit'>(kinds.unit.make(name, content)) as never;
      },
      dropIn(unit, name, content) {
        return this.add<'unit'>(kinds.unit.make(/\.[a-z]+$/.test(unit) ? unit : `${unit}.service`, content, name)) as never;
      },
      startService(name) {
        return this.add<'restart'>(kinds.restart.make(name as string, 'start')) as never;
      },
      restartService(name) {
        return this.add<'restart'>(kinds.restart.make(name as string, 'restart')) as never;
      },
      reboot(opts = {}) {
        return this.add<'reboot'>(kinds.reboot.make(opts)) as never;
      },
      swapOff() {
        return this.add<'swapOff'>(kinds.swapOff.make()) as never;
      },
      remove(paths) {
        return this.add<'clean'>(kinds.clean.make('remove', paths)) as never;
      },
      truncate(paths) {
        return this.add<'clean'>(kinds.clean.make('truncate', paths)) as never;
      },
      lineInFile(path, opts) {
        return this.add<'lineInFile'>(kinds.lineInFile.make(path as string, opts)) as never;
      },
      upgrade(opts = {}) {
        return this.add<'upgrade'>(kinds.upgrade.make(opts)) as never;
      },
      blockInFile(path, block, opts = {}) {
        return this.add<'blockInFile'>(kinds.blockInFile.make(path as string, block, opts)) as never;
      },
      iniKey(path, key, opts) {
        return this.add<'iniKey'>(kinds.iniKey.make(path as string, key, opts)) as never;
      },
      tomlKey(path, key, opts) {
        return dataKey(this, 'toml', path as string, key, opts);
      },
      yamlKey(path, key, opts) {
        return dataKey(this, 'yaml', path as string, key, opts);
      },
      command(run, opts = {} as never) {
        return this.add<'command'>({
          kind: 'command',
          run,
          ...(opts.description ? { description: opts.description } : {}),
          ...(opts.creates ? { creates: opts.creates } : {}),
          needsMounts: opts.needsMounts ?? false,
          provides: declared(opts.provides),
          requires: declared(opts.requires),
          removes: declared(opts.removes),
        }) as never;
      },
      ansibleRole(dir, opts = {} as never) {
        let role: { name: string; files: { path: string; text: string }[] };
        try {
          const tree = readTextTree(dir);
          role = kinds.ansibleRole.role(tree.root, tree.files);
        } catch (e) {
          throw new DefinitionError(`ansibleRole('${dir}'): ${(e as Error).message}`);
        }
        return this.add<'ansibleRole'>({
          ...kinds.ansibleRole.make(role.name, dir, role.files, opts.vars ?? {}),
          ...(opts.description ? { description: opts.description } : {}),
          provides: declared(opts.provides),
          requires: declared(opts.requires),
          removes: declared(opts.removes),
        }) as never;
      },
      puppetApply(manifest, opts = {} as never) {
        let read: { text: string; modules?: { source: string; files: { path: string; text: string }[] } };
        try {
          const modules = opts.modulePath !== undefined ? readTextTree(opts.modulePath) : undefined;
          if (modules && !modules.files.length) throw new Error(`${modules.root} holds no files: not a Puppet module directory`);
          read = { text: readTextFile(manifest).text, ...(modules ? { modules: { source: opts.modulePath!, files: modules.files } } : {}) };
        } catch (e) {
          throw new DefinitionError(`puppetApply('${manifest}'): ${(e as Error).message}`);
        }
        return this.add<'puppetApply'>({
          ...kinds.puppetApply.make(manifest, { name: manifest.split('/').pop() ?? manifest, text: read.text }, read.modules, declared(opts.requires)),
          ...(opts.description ? { description: opts.description } : {}),
          provides: declared(opts.provides),
          removes: declared(opts.removes),
        }) as never;
      },
      use(module: unknown) {
        return (module as (p: unknown) => never)(this);
      },
    };
    Object.assign(RootSteps.prototype, steps);
  }
}

/**
 * Steps that change the root: phases customize, provision and custom ones.
 * One type parameter per fact kind (users U, groups G, packages K, paths P,
 * services S, commands X), each a union of literals: unions stay flat however
 * long the chain, where a record type would nest one level per step and hit
 * TypeScript's instantiation depth after a few dozen steps.
 */
export class StepBuilder<
  // Invariant (`in out`), as the parameters are used both ways (`owner:
  // Ref<U, O>` takes them, the results extend them); declared, so TypeScript
  // does not measure it by comparing instantiations of this whole class on
  // every `use()`, which was most of a definition's type-check time.
  in out U extends string = never,
  in out G extends string = never,
  in out K extends string = never,
  in out P extends string = never,
  in out S extends string = never,
  in out X extends string = never,
  in out C extends PackageCatalog = PackageCatalog,
> extends RootSteps {
  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new StepBuilder(this.catalog, last, hooks, this.family, this.conditions) as this;
  }

  /** The facts the builder knows; `FactsOf` on it. */
  declare readonly __facts?: { user: U; group: G; package: K; path: P; service: S; command: X };
}

/** A phase builder named by the facts record it knows: `PhaseBuilder<{ user: 'ops' | 'root'; … }>`. */
export type PhaseBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> = StepBuilder<
  F['user'],
  F['group'],
  F['package'],
  F['path'],
  F['service'],
  F['command'],
  C
>;

/** The keys of kind Q that a raw step declares it provides. */
export type Declared<D extends DeclaredFacts, Q extends keyof Facts> = D extends { provides: { [R in Q]: readonly (infer V extends string)[] } } ? V : never;

/** The keys of kind Q that a raw step declares it removes (none when they are not literals: the checker alone sees those). */
export type Removed<D extends DeclaredFacts, Q extends keyof Facts> = D extends { removes: { [R in Q]: readonly (infer V extends string)[] } } ? (string extends V ? never : V) : never;

/**
 * Known facts F without the removed R. Checked as a whole first: most steps
 * remove nothing, and then no conditional type distributes over F (hundreds
 * of base paths and commands) on each of them. A non-literal R (a plain
 * string) removes nothing from the types: the checker alone sees it.
 */
export type Without<F extends string, R extends string> = [R] extends [never] ? F : string extends R ? F : Exclude<F, R>;

/**
 * The paths a glob names, as a template literal type: each `*` (and what
 * follows a `?` or `[`) becomes `${string}`. It may name more than sh would
 * (across a `/`, or a leading dot): the types then forget a little more than
 * the checker, never less.
 */
export type GlobPattern<R extends string> = R extends `${infer A}*${infer B}`
  ? `${A}${string}${GlobPattern<B>}`
  : R extends `${infer A}?${string}`
    ? `${A}${string}`
    : R extends `${infer A}[${string}`
      ? `${A}${string}`
      : R;

/** Known paths without the removed directories R and everything below them (rm -r). */
export type WithoutTree<F extends string, R extends string> = [R] extends [never] ? F : string extends R ? F : Exclude<F, R | `${R}/${string}`>;


const ownership = (o: { owner?: string; group?: string; mode?: string }) => ({
  ...(o.owner !== undefined ? { owner: o.owner } : {}),
  ...(o.group !== undefined ? { group: o.group } : {}),
  ...(o.mode !== undefined ? { mode: o.mode } : {}),
});

const ownershipRequires = (path: string, o: { owner?: string; group?: string }): Fact[] => [
  fact('path', parentDir(path)),
  ...(o.owner !== undefined ? [fact('user', o.owner)] : []),
  ...(o.group !== undefined ? [fact('group', o.group)] : []),
];

/** Produces files from the finished root (phase 3). */
export class ArtifactBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> extends StepChain<F, C> {
  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new ArtifactBuilder(this.catalog, last, hooks, this.family) as this;
  }

  private artifact(format: StepOf<'artifact'>['format'], output: string, extra: Partial<Pick<StepOf<'artifact'>, 'compression' | 'size' | 'bootable'>>): this {
    // A bootable disk is made from the root's kernel, initramfs and systemd-boot: the checker proves a step installed them.
    const requires = extra.bootable ? Object.values(bootFiles).map((p) => fact('path', p)) : [];
    return this.add<'artifact'>({ kind: 'artifact', format, output, ...extra, provides: [fact('artifact', output)], requires });
  }

  /** The root as a plain directory. */
  dir(output = 'rootfs'): this {
    return this.artifact('dir', output, {});
  }

  tar(output = 'rootfs.tar.zst', opts: { compression?: 'none' | 'gzip' | 'zstd' } = {}): this {
    return this.artifact('tar', output, { compression: opts.compression ?? (output.endsWith('.gz') ? 'gzip' : output.endsWith('.tar') ? 'none' : 'zstd') });
  }

  /** The root as a bare ext4 filesystem image (no partition table, not bootable). */
  ext4(output = 'rootfs.ext4', opts: { size?: `${number}${'M' | 'G'}` } = {}): this {
    return this.artifact('ext4', output, { size: opts.size ?? '4G' });
  }

  /**
   * A raw disk image. `bootable: true`: a GPT disk with an EFI system partition
   * (systemd-boot, UEFI only) and the root partition; it needs the root's
   * kernel and systemd-boot (`use(bootable())`). Otherwise a bare ext4 filesystem, as `ext4()`.
   */
  raw(output = 'disk.raw', opts: DiskOptions = {}): this {
    return this.artifact('raw', output, disk(opts));
  }

  /** A qcow2 disk image; `bootable` as for `raw()`. */
  qcow2(output = 'disk.qcow2', opts: DiskOptions = {}): this {
    return this.artifact('qcow2', output, disk(opts));
  }

  /**
   * A Packer source: a cloud image, a VM, or an existing host (`null`).
   * `opts.disk` (qemu): the VM boots the bootable raw/qcow2 artifact of that
   * output, the disk `imgc build` made, instead of a downloaded cloud image.
   */
  cloudImage(builder: StepOf<'cloudImage'>['builder'], name: string, settings: Record<string, StepOf<'cloudImage'>['settings'][string]> = {}, opts: { disk?: string } = {}): this {
    return this.add<'cloudImage'>({
      kind: 'cloudImage',
      builder,
      name,
      settings: sortKeys(settings),
      ...(opts.disk !== undefined ? { disk: opts.disk } : {}),
      provides: [fact('artifact', name)],
      ...(opts.disk !== undefined ? { requires: [fact('artifact', opts.disk)] } : {}),
    });
  }
}

export interface DiskOptions {
  size?: `${number}${'M' | 'G'}`;
  bootable?: boolean;
}

const disk = (opts: DiskOptions) => ({ size: opts.size ?? '4G', ...(opts.bootable ? { bootable: true } : {}) });

/** Checks the result (phase 4). */
/** A lifecycle edge with hooks only (decommission: its steps are the inverse of the runtime phases). */
export class HookBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> extends StepChain<F, C> {
  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new HookBuilder(this.catalog, last, hooks, this.family) as this;
  }
}

export class VerifyBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> extends StepChain<F, C> {
  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new VerifyBuilder(this.catalog, last, hooks, this.family) as this;
  }

  /** Every fact the earlier phases promised holds in the built root. */
  facts(): this {
    return this.add<'verify'>({ kind: 'verify', check: 'facts' });
  }

  /** Writes sha256 sums of every artifact. */
  checksums(): this {
    return this.add<'verify'>({ kind: 'verify', check: 'checksums' });
  }

  /** Writes manifest.json (artifacts, definition hash, facts) and sbom.spdx.json (the root's packages). */
  manifest(): this {
    return this.add<'verify'>({ kind: 'verify', check: 'manifest' });
  }

  /**
   * Boots a bootable disk artifact in QEMU (no network) and checks on the
   * running node what the definition promised: services active, kernel
   * modules loaded, sysctls applied, swap off, users and groups, commands.
   */
  boot(opts: { disk?: string; timeoutSeconds?: number } = {}): this {
    return this.add<'verify'>({
      kind: 'verify',
      check: 'boot',
      ...(opts.disk ? { disk: opts.disk } : {}),
      ...(opts.timeoutSeconds ? { timeoutSeconds: opts.timeoutSeconds } : {}),
      requires: opts.disk ? [fact('artifact', opts.disk)] : [],
    });
  }

  /** A raw check run in the root; it fails the build by exiting non-zero. */
  command(run: string, opts: CommandOptions = {}): this {
    return this.add<'command'>({
      kind: 'command',
      run,
      ...(opts.description ? { description: opts.description } : {}),
      needsMounts: opts.needsMounts ?? false,
      provides: declared(opts.provides),
      requires: declared(opts.requires),
    });
  }
}

const sortKeys = <T>(o: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

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

  private with<B extends StepChain<Facts, PackageCatalog>, R>(name: string, opts: PhaseOptions & { runtimeOnly?: boolean }, chain: B, build: (b: B) => R): R {
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
    const parsed = Fleet.safeParse({ ...(serial !== undefined ? { serial } : {}), ...(opts.maxFailPercentage !== undefined ? { maxFailPercentage: opts.maxFailPercentage } : {}) });
    if (!parsed.success) throw new DefinitionError(`fleet(): ${parsed.error.issues.map((i) => (i.path[0] === 'maxFailPercentage' ? 'maxFailPercentage is a whole percentage from 0 to 100' : i.message)).join('; ')}`);
    return new ImageBuilder<F, C>(this.name, this.baseImage, this.baseLoc, this.phases, { ...this.fleetOpts, ...parsed.data });
  }

  /** The builder a phase's steps start from: no steps yet, the facts so far. */
  private emptyPhase(): PhaseBuilder<F, C> {
    return new StepBuilder(this.baseImage.catalog, undefined, undefined, this.baseImage.ir.packageManager) as PhaseBuilder<F, C>;
  }

  /** A phase of your own, run in declaration order. */
  phase<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string>(
    name: string,
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C>,
    opts: PhaseOptions = {},
  ): ImageBuilder<{ user: U2; group: G2; package: K2; path: P2; service: S2; command: X2 }, C> {
    return this.with(name, opts, this.emptyPhase(), build) as never;
  }

  /** Phase 1: users, groups, files, repositories, hardening. */
  customize<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C>,
  ): ImageBuilder<{ user: U2; group: G2; package: K2; path: P2; service: S2; command: X2 }, C> {
    return this.phase('customize', build);
  }

  /** Phase 2: the node software; may also run at runtime on existing hosts. */
  provision<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C>,
  ): ImageBuilder<{ user: U2; group: G2; package: K2; path: P2; service: S2; command: X2 }, C> {
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
  bootstrap<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C>,
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
  drain<U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string>(
    build: (p: PhaseBuilder<F, C>) => StepBuilder<U2, G2, K2, P2, S2, X2, C>,
  ): ImageBuilder<F, C> {
    return this.with('drain', { runtimeOnly: true }, this.emptyPhase(), build) as never;
  }

  /**
   * Hooks on the decommission edge: the decommission outputs (`imgc compile
   * --decommission`) fire the pre hooks before they undo anything and the post
   * hooks after (result failed, with the message, when the undo failed).
   */
  decommission(build: (d: HookBuilder<F, C>) => HookBuilder<F, C>): ImageBuilder<F, C> {
    return this.with('decommission', { runtimeOnly: true }, new HookBuilder<F, C>(this.baseImage.catalog, undefined, undefined, this.baseImage.ir.packageManager), build) as unknown as ImageBuilder<F, C>;
  }

  /** Phase 3: files made from the finished root. */
  artifact(build: (a: ArtifactBuilder<F, C>) => ArtifactBuilder<F, C>): ImageBuilder<F, C> {
    return this.with('artifact', {}, new ArtifactBuilder<F, C>(this.baseImage.catalog, undefined, undefined, this.baseImage.ir.packageManager), build) as unknown as ImageBuilder<F, C>;
  }

  /** Phase 4: checks and publishing. */
  verify(build: (v: VerifyBuilder<F, C>) => VerifyBuilder<F, C>): ImageBuilder<F, C> {
    return this.with('verify', {}, new VerifyBuilder<F, C>(this.baseImage.catalog, undefined, undefined, this.baseImage.ir.packageManager), build) as unknown as ImageBuilder<F, C>;
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
      const when = (w: 'pre' | 'post') => hooks.filter((h) => (h.input as StepInput<'hook'>).when === w).map((h, i) => withId(h, i, w) as StepOf<'hook'>);
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

  /** @internal the base's package catalog, for the checker's hints. */
  get packageCatalog(): C {
    return this.baseImage.catalog;
  }
}

/** A mistake in the definition found while it runs (not a contract error). */
export class DefinitionError extends Error {
  override name = 'DefinitionError';
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
