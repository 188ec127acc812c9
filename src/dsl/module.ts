import type { PhaseBuilder, StepBuilder } from './builder.js';
import type { Facts, PackageCatalog } from './types.js';

/** The facts a module adds, as a full Facts record (absent kinds add nothing). */
export type Added<A extends Partial<Record<keyof Facts, string>>> = {
  [K in keyof Facts]: K extends keyof A ? (A[K] extends string ? A[K] : never) : never;
};

/** A reusable group of steps: `p.use(myModule(...))`. */
export type Module<A extends Partial<Record<keyof Facts, string>>> = <
  U extends string,
  G extends string,
  K extends string,
  P extends string,
  S extends string,
  X extends string,
  C extends PackageCatalog,
>(
  p: StepBuilder<U, G, K, P, S, X, C>,
) => StepBuilder<U | Added<A>['user'], G | Added<A>['group'], K | Added<A>['package'], P | Added<A>['path'], S | Added<A>['service'], X | Added<A>['command'], C>;

/**
 * Defines a module. The body sees a builder with every fact kind open
 * (`string`), since a module cannot know the caller's facts; the type
 * argument A says what it adds, for the caller's editor. The runtime checker
 * still checks the module's steps against the caller's facts.
 */
export const defineModule = <const A extends Partial<Record<keyof Facts, string>> = {}>(
  body: (p: PhaseBuilder<Facts, PackageCatalog>) => PhaseBuilder<Facts, PackageCatalog>,
): Module<A> => ((p: PhaseBuilder<Facts, PackageCatalog>) => body(p)) as unknown as Module<A>;
