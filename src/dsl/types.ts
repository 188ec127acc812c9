// Type-level facts: the builder carries, as unions of string literals, the
// users, groups, packages, paths, services and commands that the base and the
// earlier steps provide. A reference to one that is not there is a type error,
// and the editor completes the ones that are. A non-literal `string` turns the
// check off for that kind; the runtime contract checker still runs.

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
 * A reference to a fact of kind Known: a literal must be one of Known (and the
 * error lists them); a plain `string` is accepted and left to the checker.
 */
export type Ref<Known extends string, S extends string> = string extends S ? S : S extends Known ? S : [Open] extends [Known] ? S : Known;

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

/** What installing a package provides, as the catalog of a base records it. */
export interface PackageFacts {
  readonly services?: readonly string[];
  readonly commands?: readonly string[];
  readonly paths?: readonly string[];
  readonly users?: readonly string[];
  readonly groups?: readonly string[];
  /** The repository (an apt repository step's name) the package comes from. */
  readonly repo?: string;
}
export type PackageCatalog = { readonly [name: string]: PackageFacts };

/** The package name of an apt spec: `kubelet=1.30.2-1.1` and `kubelet:amd64` name `kubelet` (see src/core/packages.ts). */
export type PackageNameOf<N extends string> = N extends `${infer A}=${string}` ? PackageNameOf<A> : N extends `${infer A}:${string}` ? A : N;

/** What catalog C says installing packages P provides, of kind K. */
export type Listed<C extends PackageCatalog, P extends string, K extends Exclude<keyof PackageFacts, 'repo'>> = P extends keyof C
  ? C[P] extends { readonly [Q in K]: readonly (infer S extends string)[] }
    ? S
    : never
  : never;

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

/** The facts a builder carries: `FactsOf<typeof p>['user']` lists the known users. */
export type FactsOf<B> = B extends { readonly __facts?: infer F extends Facts } ? F : never;
