// Type-level facts: the builder carries, as unions of string literals, the
// users, groups, packages, paths, services and commands that the base and the
// earlier steps provide. A reference to one that is not there is a type error,
// and the editor completes the ones that are. A non-literal `string` turns the
// check off for that kind; the runtime contract checker still runs.
import type { PackageCatalog, PackageFacts } from '../core/catalog.js';
import type { DeclaredFacts } from '../steps/shared.js';

/** Facts tracked in the types; each is a union of string literals. */
export interface Facts {
  user: string;
  group: string;
  package: string;
  path: string;
  service: string;
  command: string;
}

export interface NoFacts extends Facts {
  user: never;
  group: never;
  package: never;
  path: never;
  service: never;
  command: never;
}

/**
 * A reference to a fact of one kind: a literal must be one of Known (the
 * builder's own) or Used (those of the modules it used), and the error lists
 * both; a plain `string` is accepted and left to the checker. NoInfer: a wrong
 * literal is an error here, not a fact inferred into the builder.
 */
export type Ref<Known extends string, S extends string, Used extends string = never> = string extends S ? S : S extends Known ? S : S extends Used ? S : [Open] extends [Known] ? S : NoInfer<Known | Used>;

declare const openFacts: unique symbol;
/**
 * The facts a module body cannot know: those of whichever builder it is
 * applied to. A module's builder starts with `Open` for every kind, so any
 * reference is accepted (the checker checks it against the caller's facts),
 * and the literals its steps add stay apart from it: that is how a module's
 * facts reach the caller's types without being written out again.
 */
export type Open = string & { readonly [openFacts]: true };

/** The literals a module body added to a union that started as `Open`; a plain `string` (a non-literal fact) stays `string`. */
export type AddedTo<X extends string> = string extends X ? string : X extends unknown ? (Open extends X ? never : X) : never;

export type { PackageCatalog, PackageFacts };

/** The package name of an apt spec: `kubelet=1.30.2-1.1` and `kubelet:amd64` name `kubelet` (see src/core/packages.ts). */
export type PackageNameOf<N extends string> = N extends `${infer A}=${string}` ? PackageNameOf<A> : N extends `${infer A}:${string}` ? A : N;

/**
 * What catalog C says installing packages P provides, of kind K. A package
 * the catalog does not list (the base's archive has thousands the types
 * do not carry) may bring any fact: `string`, which accepts every later
 * reference of the kind, and the checker, which reads the archive, judges it.
 */
export type Listed<C extends PackageCatalog, P extends string, K extends Exclude<keyof PackageFacts, 'repo'>> = P extends keyof C
  ? C[P] extends { readonly [Q in K]: readonly (infer S extends string)[] }
    ? S
    : never
  : string;

/** F after installing packages P, using what catalog C says they provide. */
export type WithPackages<F extends Facts, C extends PackageCatalog, P extends string> = {
  [K in keyof Facts]: K extends 'package'
    ? F[K] | P
    : K extends 'service'
      ? F[K] | Listed<C, P, 'services'>
      : K extends 'command'
        ? F[K] | Listed<C, P, 'commands'>
        : K extends 'path'
          ? F[K] | Listed<C, P, 'paths'>
          : K extends 'user'
            ? F[K] | Listed<C, P, 'users'>
            : K extends 'group'
              ? F[K] | Listed<C, P, 'groups'>
              : F[K];
};

/** Merges the facts two builders carry (used by modules). */
export type Union<A extends Facts, B extends Facts> = { [K in keyof Facts]: A[K] | B[K] };

/** The facts of a builder with its own facts U … X and the used modules' I, as one record. */
export type FactsRecord<U extends string, G extends string, K extends string, P extends string, S extends string, X extends string, I extends Facts = never> = {
  user: U | I['user'];
  group: G | I['group'];
  package: K | I['package'];
  path: P | I['path'];
  service: S | I['service'];
  command: X | I['command'];
};

/** The facts a builder carries: `FactsOf<typeof p>['user']` lists the known users. */
export type FactsOf<B> = B extends { readonly __facts?: infer F extends Facts } ? F : never;

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

/** The facts a module adds, as a full Facts record (absent kinds add nothing). */
export type Added<A extends Partial<Record<keyof Facts, string>>> = {
  [K in keyof Facts]: K extends keyof A ? (A[K] extends string ? A[K] : never) : never;
};

declare const moduleFacts: unique symbol;
/**
 * A reusable group of steps: `p.use(myModule(...))`; A names the facts it
 * adds. At run time a function of a builder; in the types only the facts it
 * adds, which `use` reads from the type argument: a generic signature matched
 * against a caller's thousands of facts, as a module's type was, rebuilt those
 * unions several times per module (docs/performance.md, 2026-12-04 22:30 UTC).
 */
export interface Module<A extends Partial<Record<keyof Facts, string>>> {
  /** Phantom: the facts the module adds. */
  readonly [moduleFacts]?: A;
}

export interface UserOptions<KnownGroup extends string, G extends string, PG extends string, H extends string, UsedGroup extends string = never> {
  uid?: number;
  /** Primary group; by default a group of the user's own name is created. */
  primaryGroup?: Ref<KnownGroup, PG, UsedGroup>;
  groups?: readonly Ref<KnownGroup, G, UsedGroup>[];
  /** Home directory, created; default /home/NAME (none for system users). */
  home?: H;
  shell?: string;
  system?: boolean;
}

export interface Ownership<KnownUser extends string, KnownGroup extends string, O extends string, G extends string, Used extends Facts = never> {
  owner?: Ref<KnownUser, O, Used['user']>;
  group?: Ref<KnownGroup, G, Used['group']>;
  mode?: string;
}
