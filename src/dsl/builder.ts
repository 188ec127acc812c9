// The phase-aware builder. Each call records one step (with the facts it
// provides and requires, and where it was written) and returns a builder whose
// type parameters carry the facts known so far. Builders are persistent: a
// step links to the previous one, so building is O(n) and nothing is mutated.
// What a step is, and the facts it provides, requires and removes, is its
// kind's `make` (src/steps/<kind>.ts): each method here is one line that adds it.
import type { HookAction, SourceLocation, Step } from '../ir/types.js';
import { uniqueFacts } from '../core/facts.js';
import { DefinitionError } from '../core/definition-error.js';
import type { Condition } from '../core/conditions.js';
import type { PackageManager } from '../core/packages.js';
import type { PackageArchive } from '../core/catalog.js';
import { archOf, type Arch } from '../core/arch.js';
import { callerLocation } from './location.js';
import { readTextFile, readTextTree } from './tree.js';
import { kinds } from '../steps/index.js';
import type { MakeContext, StepCommon, StepInput } from '../steps/kind.js';
import type { DeclaredFacts, Owned } from '../steps/shared.js';
// The steps' options, each from its kind's file (not the registry: a definition's type-check then reads only these kinds' declarations); public through this builder.
import { script, webhook, event, type HookOptions } from '../steps/hook.js';
import type { CommandOptions } from '../steps/command.js';
import type { AnsibleRoleOptions } from '../steps/ansible-role.js';
import type { PuppetApplyOptions } from '../steps/puppet-apply.js';
import type { ArchiveFormat } from '../steps/archive.js';
import type { LineInFileOptions } from '../steps/line-in-file.js';
import type { BlockInFileOptions } from '../steps/block-in-file.js';
import type { IniKeyOptions } from '../steps/ini-key.js';
import type { DataKeyOptions } from '../steps/data-key.js';
import type { RebootOptions } from '../steps/reboot.js';
export { script, webhook, event, type HookOptions, type CommandOptions, type AnsibleRoleOptions, type PuppetApplyOptions };
import type { ListVariable, Variable } from './variables.js';
import type { Added, Declared, Facts, FactsRecord, GlobPattern, Listed, Module, NoFacts, Ownership, PackageCatalog, PackageNameOf, Ref, Removed, UserOptions, Without, WithoutTree } from './types.js';

// A step as its kind's `make` returned it, made into IR (with its id) once, by toIR.
export interface Link {
  readonly input: StepInput<StepCommon>;
  readonly loc: SourceLocation | undefined;
  readonly prev: Link | undefined;
}

const toArray = <T>(link: Link | undefined, pick: (l: Link) => T): T[] => {
  const out: T[] = [];
  for (let l = link; l; l = l.prev) out.push(pick(l));
  return out.reverse();
};

/** The IR step of a link, with its id. */
export const record = ({ input, loc }: Link, id: string): Step => {
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

/** What a builder knows of the base's packages: its typed catalog and, for the checker, its archive. */
export interface BasePackages<C extends PackageCatalog> {
  readonly catalog: C;
  readonly archive?: PackageArchive;
  /** The base's IR, for its architecture (absent: amd64). */
  readonly ir?: { readonly arch?: Arch | undefined };
}

/** What every phase builder shares: hooks and the step chain. */
export abstract class StepChain<F extends Facts, C extends PackageCatalog> {
  /** @internal */
  constructor(
    /** The base's package catalog (its type drives the facts of an install) and archive. */
    protected readonly base: BasePackages<C>,
    protected readonly last: Link | undefined,
    protected readonly hooks: Link | undefined,
    /** How the base's package manager spells a pinned package. */
    protected readonly family: PackageManager = 'apt',
    /** The conditions of the `when` blocks the steps are written in. */
    protected readonly conditions: readonly Condition[] = [],
  ) {}

  protected abstract derive(last: Link | undefined, hooks: Link | undefined): this;

  /** @internal What a kind's `make` may need besides its arguments. */
  protected get context(): MakeContext {
    return { catalog: this.base.catalog, ...(this.base.archive ? { archive: this.base.archive } : {}), family: this.family, arch: archOf(this.base.ir ?? {}), readTextFile, readTextTree };
  }

  /** @internal Records a step (its kind's `make`); the public methods narrow the returned type. */
  protected add(input: StepInput<StepCommon>): this {
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
    return this.derive(this.last, { input: kinds.hook.make(when, action, opts), loc: callerLocation(), prev: this.hooks });
  }

  /** @internal The phase's steps and hooks, in the order written. */
  collect(): { steps: Link[]; hooks: Link[] } {
    return { steps: toArray(this.last, (l) => l), hooks: toArray(this.hooks, (l) => l) };
  }

  /** Facts the raw steps of this kind declare; `FactsOf` on the builder. */
  declare readonly __facts?: F;
}

// Each step's signature, named (U … I: the facts of the builder it is called on, inferred from `this`): a property
// typed by a non-generic type alias is the one member TypeScript does not make anew for each StepBuilder type.

/**
 * The signature of every step that leaves the type-level facts as they are:
 * its parameters `A`, after a reference to a known service, path or list of
 * packages when it takes one (a literal must be known: `Ref`). `Q` is decided
 * when the alias is written, so a call sees a plain signature.
 */
type Keeps<A extends unknown[], Q extends 'none' | 'service' | 'path' | 'packages' = 'none'> = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  ...args: Q extends 'service' ? [name: Ref<S, N, I['service']>, ...A] : Q extends 'path' ? [path: Ref<P, N, I['path']>, ...A] : Q extends 'packages' ? [names: readonly Ref<K, N, I['package']>[], ...A] : A
) => StepBuilder<U, G, K, P, S, X, C, I>;
type WhenMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, I2 extends Facts, U3 extends string = U, G3 extends string = G, K3 extends string = K, P3 extends string = P, S3 extends string = S, X3 extends string = X, I3 extends Facts = I>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  condition: Condition | Variable<boolean>,
  then: (p: StepBuilder<U, G, K, P, S, X, C, I>) => StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>,
  otherwise?: (p: StepBuilder<U, G, K, P, S, X, C, I>) => StepBuilder<U3, G3, K3, P3, S3, X3, C, I3>,
) => StepBuilder<Extract<U2 | I2['user'], U3 | I3['user']>, Extract<G2 | I2['group'], G3 | I3['group']>, Extract<K2 | I2['package'], K3 | I3['package']>, Extract<P2 | I2['path'], P3 | I3['path']>, Extract<S2 | I2['service'], S3 | I3['service']>, Extract<X2 | I2['command'], X3 | I3['command']>, C>;

type GroupMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  name: N,
  opts?: { gid?: number; system?: boolean },
) => StepBuilder<U, G | N, K, P, S, X, C, I>;

type UserMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const N extends string, UG extends string = never, PG extends string = never, const H extends `/${string}` = `/home/${N}`>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  name: N,
  opts?: UserOptions<G, UG, PG, H, I['group']>,
) => StepBuilder<U | N, G | ([PG] extends [never] ? N : never), K, P | H, S, X, C, I>;

type DirectoryMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const D extends `/${string}`, O extends string = never, OG extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  path: D,
  opts?: Ownership<U, G, O, OG, I>,
) => StepBuilder<U, G, K, P | D, S, X, C, I>;

type FileMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const D extends `/${string}`, O extends string = never, OG extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  path: D,
  opts: Ownership<U, G, O, OG, I> & { content: string },
) => StepBuilder<U, G, K, P | D, S, X, C, I>;

type SymlinkMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const D extends `/${string}`>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  path: D,
  target: string,
) => StepBuilder<U, G, K, P | D, S, X, C, I>;

/** `packages(['chrony'])`: what the catalog says the packages bring, and what `opts` declares, become facts. */
type PackagesFromNames = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const N extends string, const D extends Pick<DeclaredFacts, 'provides'> = {}, M extends string = PackageNameOf<N>>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  names: readonly N[],
  opts?: D,
) => StepBuilder<
    U | Listed<C, M, 'users'> | Declared<D, 'user'>,
    G | Listed<C, M, 'groups'> | Declared<D, 'group'>,
    K | M,
    P | Listed<C, M, 'paths'> | Declared<D, 'path'>,
    S | Listed<C, M, 'services'> | Declared<D, 'service'>,
    X | Listed<C, M, 'commands'> | Declared<D, 'command'>,
    C, I
  >;

type RemovePackagesMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const N extends string, M extends string = PackageNameOf<N>>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  names: readonly Ref<K, N, I['package']>[],
) => StepBuilder<
    Without<U | I['user'], Listed<C, M, 'users'>>,
    Without<G | I['group'], Listed<C, M, 'groups'>>,
    Without<K | I['package'], M>,
    Without<P | I['path'], Listed<C, M, 'paths'>>,
    Without<S | I['service'], Listed<C, M, 'services'>>,
    Without<X | I['command'], Listed<C, M, 'commands'>>,
    C
  >;

type MaskServiceMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const N extends string>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  name: N,
) => StepBuilder<U | I['user'], G | I['group'], K | I['package'], P | I['path'], Without<S | I['service'], N>, X | I['command'], C>;

/** The directories of the root's PATH: a file directly in one is a command (src/steps/download.ts, commandAt). */
type PathDir = '/usr/local/sbin' | '/usr/local/bin' | '/usr/sbin' | '/usr/bin' | '/sbin' | '/bin';
/** The command a file at D is, if D is directly in a PATH directory. */
type CommandAt<D extends string> = { [K in PathDir]: D extends `${K}/${infer N}` ? (N extends '' | `${string}/${string}` ? never : N) : never }[PathDir];
type Octal = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7';
/** A mode with the owner's x bit: '0755', '755'. */
type ExecutableMode = `${Octal | ''}${'1' | '3' | '5' | '7'}${Octal}${Octal}`;

type DownloadMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const D extends `/${string}`, O extends string = never, OG extends string = never, const M extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  url: string,
  path: D,
  opts: Ownership<U, G, O, OG, I> & { sha256: string; mode?: M },
) => StepBuilder<U, G, K, P | D, S, X | ([M] extends [never] ? never : M extends ExecutableMode ? CommandAt<D> : never), C, I>;

type ArchiveMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const D extends `/${string}`, const R extends `/${string}`, O extends string = never, OG extends string = never>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  url: string,
  dest: D,
  opts: Ownership<U, G, O, OG, I> & { sha256: string; format?: ArchiveFormat; strip?: number; creates: readonly R[] },
) => StepBuilder<U, G, K, P | D | R, S, X | CommandAt<R>, C, I>;

type UnitMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const N extends `${string}.${'service' | 'socket' | 'timer' | 'target' | 'path' | 'mount' | 'automount' | 'swap' | 'slice'}`>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  name: N,
  content: string,
) => StepBuilder<U, G, K, P | `/etc/systemd/system/${N}`, S | N | (N extends `${infer B}.service` ? B : never), X, C, I>;

type DropInMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, N extends string, const F extends `${string}.conf`>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  unit: Ref<S, N, I['service']> | `${Ref<S, N, I['service']>}.service`,
  name: F,
  content: string,
) => StepBuilder<U, G, K, P | `/etc/systemd/system/${string}.d/${F}`, S, X, C, I>;

type RebootMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  opts?: RebootOptions,
) => StepBuilder<U | I['user'], G | I['group'], K | I['package'], WithoutTree<P | I['path'], GlobPattern<'/run/*'>>, S | I['service'], X | I['command'], C>;

type RemoveMethod = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const R extends `/${string}`>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  paths: readonly R[],
) => StepBuilder<U | I['user'], G | I['group'], K | I['package'], WithoutTree<P | I['path'], GlobPattern<R>>, S | I['service'], X | I['command'], C>;

/** The builder after a step that declares what it provides and removes (a raw command, an Ansible role); one that removes sees the used modules' facts as its own. */
type WithDeclared<U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, D extends DeclaredFacts> = D extends { removes: object }
  ? Declaring<U | I['user'], G | I['group'], K | I['package'], P | I['path'], S | I['service'], X | I['command'], C, never, D> : Declaring<U, G, K, P, S, X, C, I, D>;
type Declaring<U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, D extends DeclaredFacts> = StepBuilder<
    Without<U, Removed<D, 'user'>> | Declared<D, 'user'>,
    Without<G, Removed<D, 'group'>> | Declared<D, 'group'>,
    Without<K, Removed<D, 'package'>> | Declared<D, 'package'>,
    WithoutTree<P, Removed<D, 'path'>> | Declared<D, 'path'>,
    Without<S, Removed<D, 'service'>> | Declared<D, 'service'>,
    Without<X, Removed<D, 'command'>> | Declared<D, 'command'>,
    C, I>;

/** A raw step (command, role, manifest): its parameters `A`, then its options `O` with the facts it declares. */
type DeclaringMethod<A extends unknown[], O> = <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, const D extends DeclaredFacts>(
  this: StepBuilder<U, G, K, P, S, X, C, I>,
  ...args: [...A, opts?: O & D]
) => WithDeclared<U, G, K, P, S, X, C, I, D>;

interface UseMethod {
  <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, U2 extends string, G2 extends string, K2 extends string, P2 extends string, S2 extends string, X2 extends string, I2 extends Facts>(
    this: StepBuilder<U, G, K, P, S, X, C, I>,
    module: (p: StepBuilder<U, G, K, P, S, X, C, I>) => StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>,
  ): StepBuilder<U2, G2, K2, P2, S2, X2, C, I2>;
  <U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, C extends PackageCatalog, I extends Facts, A extends Partial<Record<keyof Facts, string>>>(
    this: StepBuilder<U, G, K, P, S, X, C, I>,
    module: Module<A>,
  ): StepBuilder<U, G, K, P, S, X, C, I | Added<A>>;
}

/**
 * The steps of StepBuilder. Each step's type reads the builder's facts from
 * its `this`, and each is a property of a named type, not a method:
 * TypeScript makes every method of a generic type anew for each of its
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
  readonly when: WhenMethod;

  readonly group: GroupMethod;

  readonly user: UserMethod;

  readonly directory: DirectoryMethod;

  readonly file: FileMethod;

  readonly symlink: SymlinkMethod;

  /**
   * Installs packages with the base's package manager. What a package brings
   * comes from the base's catalog; one the catalog does not know declares it:
   * `packages(['chrony'], { provides: { service: ['chrony'] } })`.
   */
  readonly packages: PackagesFromNames & Keeps<[list: ListVariable]>;

  /** Removes packages and what they provided: later references to those are type errors too. */
  readonly removePackages: RemovePackagesMethod;

  /** An apt source (deb822 .sources file) with its signing key, given as text or a URL. */
  readonly aptRepository: Keeps<[name: string, opts: { uri: string; suites: readonly string[]; components?: readonly string[]; key?: string; keyUrl?: string }]>;

  /** Enables a systemd unit (at boot; nothing is started in a chroot). */
  readonly enableService: Keeps<[], 'service'>;

  readonly disableService: Keeps<[], 'service'>;

  /** Holds installed packages at their version (apt-mark hold): an upgrade on the node leaves them. */
  readonly hold: Keeps<[], 'packages'>;

  /** Releases held packages. */
  readonly unhold: Keeps<[], 'packages'>;

  /** Masks a systemd unit (a link to /dev/null): nothing starts or enables it; the unit need not be installed. */
  readonly maskService: MaskServiceMethod;

  /** Unmasks a systemd unit masked before (links only; what provides the unit is the install's to say). */
  readonly unmaskService: Keeps<[name: string]>;

  /** A kernel parameter, persisted in /etc/sysctl.d. */
  readonly sysctl: Keeps<[key: string, value: string | number, opts?: { file?: `/${string}` }]>;

  /** A kernel module loaded at boot, listed in /etc/modules-load.d. */
  readonly kernelModule: Keeps<[name: string, opts?: { file?: `/${string}` }]>;

  /**
   * A file fetched from `url` (a variable may stand in it) and checked against
   * its sha256 (required; a variable may hold it) before it takes `path`'s place.
   */
  readonly download: DownloadMethod;

  /**
   * A tar (gz/xz/zst) or zip archive fetched from `url` with its sha256 and
   * unpacked into `dest`; `creates` lists the paths the image relies on (the
   * checker cannot see into an archive): they become facts, e.g.
   * `archive(url, '/usr/local/bin', { sha256, creates: ['/usr/local/bin/crictl'] })`.
   */
  readonly archive: ArchiveMethod;

  /** A systemd unit file in /etc/systemd/system: it provides its service (`kubelet.service` answers to `kubelet` too). */
  readonly unit: UnitMethod;

  /** A drop-in of a unit (/etc/systemd/system/UNIT.d/NAME.conf); the unit must be known (a package, a unit step, the base). */
  readonly dropIn: DropInMethod;

  /**
   * Starts a service now (unless it is active), where an init runs: Packer's
   * VM (e.g. containerd, to pull images into the image), live hosts
   * (--runtime) and cloud-init's first boot; a chroot build refuses it
   * (IMGC2002). It is not a fact of the image: enableService says what runs at boot.
   */
  readonly startService: Keeps<[], 'service'>;

  /** Restarts a service now, where an init runs (as startService); a chroot build refuses it (IMGC2002). */
  readonly restartService: Keeps<[], 'service'>;

  /** Stops a service now (if it is active), where an init runs (as startService); a chroot build refuses it (IMGC2002). */
  readonly stopService: Keeps<[], 'service'>;

  /**
   * Reboots the machine here and goes on once it is back (up to `timeout`
   * seconds, default 600): `reboot({ reason: 'new kernel' })`. Only where a
   * machine can come back: Packer (its VM) and `--target ansible --runtime`;
   * a chroot build, cloud-init and provision.sh refuse it (IMGC2002). It
   * provides nothing and forgets what lies under /run (a tmpfs); docs/reboot.md.
   */
  readonly reboot: RebootMethod;

  /** Disables swap: comments swap entries out of /etc/fstab (kubelet refuses swap). */
  readonly swapOff: Keeps<[]>;

  /**
   * Removes paths and what lies below them: `remove(['/etc/machine-id', '/tmp/*'])`.
   * The last segment may be an sh glob; the checker takes what it names from the
   * known facts, and a later step that needs one of those paths is IMGC0005.
   */
  readonly remove: RemoveMethod;

  /** Empties files, keeping them, their owner and mode (logs, machine-id); globs as for `remove`. */
  readonly truncate: Keeps<[paths: readonly `/${string}`[]]>;

  /**
   * One line of an existing file, as Ansible's lineinfile: present replaces the
   * last line `regexp` matches (else appends `line`); absent removes the lines
   * `regexp` matches, or equal to `line`. The regexp is the syntax Python and awk
   * share (docs/file-edits.md).
   */
  readonly lineInFile: Keeps<[opts: LineInFileOptions], 'path'>;

  /** Upgrades the installed packages (apt-get upgrade; `dist: true`: dist-upgrade); held packages stay. */
  readonly upgrade: Keeps<[opts?: { dist?: boolean }]>;

  /** Lines of an existing file between marker lines, as Ansible's blockinfile: replaced, appended, or removed (state absent). */
  readonly blockInFile: Keeps<[block: string, opts?: BlockInFileOptions], 'path'>;

  /**
   * One key of an existing ini-style file, as community.general.ini_file: present
   * sets `key = value` in `section` (left out: the keys before the first section,
   * as in /etc/default files), absent removes the key's lines (docs/file-edits.md).
   */
  readonly iniKey: Keeps<[key: string, opts: IniKeyOptions], 'path'>;

  /**
   * One key of an existing TOML file, by its dotted key in TOML's syntax
   * (`plugins."io.containerd.grpc.v1.cri".containerd`) or its segments: present
   * sets it to `value`, making the tables on the way; absent removes it. The
   * root needs python3-tomlkit, which does the edit (docs/file-edits.md).
   */
  readonly tomlKey: Keeps<[key: string | readonly string[], opts: DataKeyOptions], 'path'>;

  /**
   * One key of an existing YAML file (one document), by its dotted key
   * (`authentication.x509.clientCAFile`) or its segments when a key holds a
   * dot: present sets it to `value`, making the mappings on the way; absent
   * removes it. The root needs python3-ruamel.yaml, which does the edit.
   */
  readonly yamlKey: Keeps<[key: string | readonly string[], opts: DataKeyOptions], 'path'>;

  /** The escape hatch: a raw shell command with the facts it declares. */
  readonly command: DeclaringMethod<[run: string], CommandOptions>;

  /**
   * An existing Ansible role applied as one step, with the facts it declares
   * (imgc cannot see into it, as with `command`). `dir` is relative to this
   * file and holds tasks/main.yml (or main.yaml); its files are read now and
   * every output that applies the role carries a copy. The ansible target
   * imports it natively; the shell target's build.sh applies it from the
   * build machine; provision.sh, Packer's shell provisioner and cloud-init
   * refuse it (docs/ansible-role.md).
   */
  readonly ansibleRole: DeclaringMethod<[dir: string], AnsibleRoleOptions>;

  /**
   * An existing Puppet manifest applied inside the root with `puppet apply`,
   * as one step with the facts it declares (imgc cannot see into it, as with
   * `command`). `manifest` (a .pp file) and `modulePath` are relative to this
   * file; their files are read now and every output carries them. The root
   * needs the puppet package from an earlier step (docs/puppet-apply.md).
   */
  readonly puppetApply: DeclaringMethod<[manifest: string], PuppetApplyOptions>;

  /**
   * Applies a module: a function of a builder, or one of `defineModule` (the
   * stdlib's are), whose facts come from its type's argument (`Module`).
   */
  readonly use: UseMethod;
}

/** A builder as what it is at run time: the class below (StepBuilder, its type, is an interface). */
const at = (builder: unknown): PhaseSteps => builder as PhaseSteps;

// The class of every phase builder at run time, with the steps' code; merged
// with this interface, it has their types. A definition sees it as a StepBuilder.
interface PhaseSteps extends Steps {}
class PhaseSteps extends StepChain<Facts, PackageCatalog> {
  static {
    // The steps' code, on the prototype: each step is its kind's `make` (src/steps), added to the chain.
    // A step's `this` is a StepBuilder to the types, an instance of this class at run time.
    const add = (builder: unknown, input: StepInput<StepCommon>): never => at(builder).add(input) as never;
    const context = (builder: unknown): MakeContext => at(builder).context;
    const steps: Steps = {
      when(condition, then, otherwise) {
        const self = at(this);
        const c: Condition = 'equals' in condition ? condition : condition.is(true);
        const branch = (cond: Condition, last: Link | undefined): typeof this => new PhaseSteps(self.base, last, self.hooks, self.family, [...self.conditions, cond]) as never;
        let last = at(then(branch(c, self.last))).last;
        if (otherwise) last = at(otherwise(branch({ ...c, negate: !c.negate }, last))).last;
        return self.derive(last, self.hooks) as never;
      },
      group(name, opts) {
        return add(this, kinds.group.make(name, opts));
      },
      user(name, opts) {
        return add(this, kinds.user.make(name, opts as Parameters<typeof kinds.user.make>[1]));
      },
      directory(path, opts) {
        return add(this, kinds.directory.make(path, opts as Owned));
      },
      file(path, opts) {
        return add(this, kinds.file.make(path, opts as Owned & { content: string }));
      },
      symlink(path, target) {
        return add(this, kinds.symlink.make(path, target));
      },
      packages(this: unknown, names: readonly string[] | ListVariable, opts?: Pick<DeclaredFacts, 'provides'>): never {
        return add(this, Array.isArray(names) ? kinds.packages.make(context(this), 'install', names, opts) : kinds.packageList.make((names as ListVariable).reference));
      },
      removePackages(names) {
        return add(this, kinds.packages.make(context(this), 'remove', names as readonly string[]));
      },
      aptRepository(name, opts) {
        return add(this, kinds.aptRepository.make(name, opts));
      },
      enableService(name) {
        return add(this, kinds.service.make(context(this), name, true));
      },
      disableService(name) {
        return add(this, kinds.service.make(context(this), name, false));
      },
      hold(names) {
        return add(this, kinds.hold.make(names, true));
      },
      unhold(names) {
        return add(this, kinds.hold.make(names, false));
      },
      maskService(name) {
        return add(this, kinds.mask.make(name, true));
      },
      unmaskService(name) {
        return add(this, kinds.mask.make(name, false));
      },
      sysctl(key, value, opts) {
        return add(this, kinds.sysctl.make(key, value, opts));
      },
      kernelModule(name, opts) {
        return add(this, kinds.kernelModule.make(name, opts));
      },
      download(url, path, opts) {
        return add(this, kinds.download.make(url, path, opts));
      },
      archive(url, dest, opts) {
        return add(this, kinds.archive.make(url, dest, opts));
      },
      unit(name, content) {
        return add(this, kinds.unit.make(name, content));
      },
      dropIn(unit, name, content) {
        return add(this, kinds.unit.make(/\.[a-z]+$/.test(unit) ? unit : `${unit}.service`, content, name));
      },
      startService(name) {
        return add(this, kinds.restart.make(name, 'start'));
      },
      restartService(name) {
        return add(this, kinds.restart.make(name, 'restart'));
      },
      stopService(name) {
        return add(this, kinds.restart.make(name, 'stop'));
      },
      reboot(opts) {
        return add(this, kinds.reboot.make(opts));
      },
      swapOff() {
        return add(this, kinds.swapOff.make());
      },
      remove(paths) {
        return add(this, kinds.clean.make('remove', paths));
      },
      truncate(paths) {
        return add(this, kinds.clean.make('truncate', paths));
      },
      lineInFile(path, opts) {
        return add(this, kinds.lineInFile.make(path, opts));
      },
      upgrade(opts) {
        return add(this, kinds.upgrade.make(opts));
      },
      blockInFile(path, block, opts) {
        return add(this, kinds.blockInFile.make(path, block, opts));
      },
      iniKey(path, key, opts) {
        return add(this, kinds.iniKey.make(path, key, opts));
      },
      tomlKey(path, key, opts) {
        return add(this, kinds.dataKey.make(context(this), 'toml', path, key, opts));
      },
      yamlKey(path, key, opts) {
        return add(this, kinds.dataKey.make(context(this), 'yaml', path, key, opts));
      },
      command(run, opts) {
        return add(this, kinds.command.make(run, opts));
      },
      ansibleRole(dir, opts) {
        return add(this, kinds.ansibleRole.make(context(this), dir, opts));
      },
      puppetApply(manifest, opts) {
        return add(this, kinds.puppetApply.make(context(this), manifest, opts));
      },
      use(module: unknown) {
        return (module as (p: unknown) => never)(this);
      },
    };
    Object.assign(PhaseSteps.prototype, steps);
  }

  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new PhaseSteps(this.base, last, hooks, this.family, this.conditions) as this;
  }
}

/** A phase's pre or post hook: it returns the builder it was called on. */
type HookMethod = <B>(this: B, action: HookAction, opts?: HookOptions) => B;

/**
 * Steps that change the root: phases customize, provision and custom ones.
 * One type parameter per fact kind (users U, groups G, packages K, paths P,
 * services S, commands X), each a union of literals: unions stay flat however
 * long the chain, where a record type would nest one level per step and hit
 * TypeScript's instantiation depth after a few dozen steps.
 * An interface, not a class: each step that adds a fact makes a new
 * StepBuilder type, and TypeScript gives each instance type of a class a copy
 * of every base's members (their `this`); an interface that never names
 * `this` shares them (docs/performance.md, 2026-12-06 22:30 UTC).
 */
export interface StepBuilder<
  // Invariant (`in out`), as the parameters are used both ways (`owner:
  // Ref<U, O>` takes them, the results extend them); declared, so TypeScript
  // does not measure it by comparing instantiations of this whole type on
  // every `use()`, which was most of a definition's type-check time.
  in out U extends string = never,
  in out G extends string = never,
  in out K extends string = never,
  in out P extends string = never,
  in out S extends string = never,
  in out X extends string = never,
  in out C extends PackageCatalog = PackageCatalog,
  // The used modules' facts, one record each: read where a step needs them, not merged into U … X by each `use`.
  in out I extends Facts = never,
> extends Steps {
  /** A hook run before the phase's first step. */
  readonly pre: HookMethod;

  /** A hook run after the phase's last step. */
  readonly post: HookMethod;

  /** The facts the builder knows; `FactsOf` on it. */
  readonly __facts?: FactsRecord<U, G, K, P, S, X, I>;
}

/** @internal A phase's builder before its first step, knowing facts F. */
export const phaseBuilder = <F extends Facts, C extends PackageCatalog>(base: BasePackages<C>, family: PackageManager): PhaseBuilder<F, C> =>
  new PhaseSteps(base, undefined, undefined, family) as unknown as PhaseBuilder<F, C>;

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

/** A lifecycle edge with hooks only (decommission: its steps are the inverse of the runtime phases). */
export class HookBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> extends StepChain<F, C> {
  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new HookBuilder(this.base, last, hooks, this.family) as this;
  }
}

/** Checks the result (phase 4). */
export class VerifyBuilder<F extends Facts = NoFacts, C extends PackageCatalog = PackageCatalog> extends StepChain<F, C> {
  protected derive(last: Link | undefined, hooks: Link | undefined): this {
    return new VerifyBuilder(this.base, last, hooks, this.family) as this;
  }

  /** Every fact the earlier phases promised holds in the built root. */
  facts(): this {
    return this.add(kinds.verify.make('facts'));
  }

  /** Writes sha256 sums of every artifact. */
  checksums(): this {
    return this.add(kinds.verify.make('checksums'));
  }

  /** Writes manifest.json (artifacts, definition hash, facts) and sbom.spdx.json (the root's packages). */
  manifest(): this {
    return this.add(kinds.verify.make('manifest'));
  }

  /**
   * Boots a bootable disk artifact in QEMU (no network) and checks on the
   * running node what the definition promised: services active, kernel
   * modules loaded, sysctls applied, swap off, users and groups, commands.
   */
  boot(opts: { disk?: string; timeoutSeconds?: number } = {}): this {
    return this.add(kinds.verify.make('boot', opts));
  }

  /** A raw check run in the root; it fails the build by exiting non-zero. */
  command(run: string, opts: CommandOptions = {}): this {
    return this.add(kinds.command.make(run, opts, true));
  }
}
