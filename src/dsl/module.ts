import type { PhaseBuilder, StepBuilder } from './builder.js';
import type { Added, AddedTo, Facts, FactsOf, Module, Open, PackageCatalog } from './types.js';

/** The builder a module body gets: every kind open to the caller's facts, and catalog C for what packages bring. */
export type ModuleBuilder<C extends PackageCatalog = PackageCatalog> = StepBuilder<Open, Open, Open, Open, Open, Open, C>;

/** What a module body's result added to the open builder it was given. */
export type AddedBy<R> = { [K in keyof Facts]: AddedTo<FactsOf<R>[K]> };

/** What a module body returns; as the default (a type argument given, nothing inferred) it adds no facts. */
type Result = { readonly __facts?: unknown };

/** The facts a type argument declares and those the body's steps add, together. */
type Both<A extends Partial<Record<keyof Facts, string>>, R> = { [K in keyof Facts]: Added<A>[K] | AddedBy<R>[K] };

/**
 * Defines a module. The body sees a builder open to every fact (a module
 * cannot know the caller's), and what its steps add reaches the caller's
 * types by inference: `defineModule((p) => p.packages(['chrony']))` gives the
 * caller package 'chrony'. A type argument A may still name facts the steps
 * do not show (a raw command's, say). The runtime checker still checks the
 * module's steps against the caller's facts.
 */
export const defineModule = <const A extends Partial<Record<keyof Facts, string>> = {}, R extends Result = Result>(
  body: (p: ModuleBuilder) => R,
): Module<Both<A, R>> => ((p: PhaseBuilder<Facts, PackageCatalog>) => body(p as never)) as unknown as Module<Both<A, R>>;

/** `defineModule` whose body knows catalog C's packages (what installing each provides), as the stdlib's modules know the apt catalog. */
export const defineModuleFor =
  <C extends PackageCatalog>() =>
  <const A extends Partial<Record<keyof Facts, string>> = {}, R extends Result = Result>(
    body: (p: ModuleBuilder<C>) => R,
  ): Module<Both<A, R>> =>
    defineModule<A, R>(body as never);

/**
 * One module for a union of modules: a module function whose result depends
 * on a union-typed option (a source not known until the caller picks it) adds
 * any of their facts, and `use` takes one module, not a union of them.
 */
export type EitherModule<M> = Module<{
  [K in keyof Facts]: M extends Module<infer A extends Partial<Record<keyof Facts, string>>> ? (K extends keyof A ? A[K] : never) : never;
}>;
