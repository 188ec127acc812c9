import type { PhaseBuilder } from './builder.js';
import type { Facts, PackageCatalog } from './types.js';

/** The facts a module adds, as a full Facts record (absent kinds add nothing). */
export type Added<A extends Partial<Record<keyof Facts, string>>> = {
  [K in keyof Facts]: K extends keyof A ? (A[K] extends string ? A[K] : never) : never;
};

/** A reusable group of steps: `p.use(myModule(...))`. */
export type Module<A extends Partial<Record<keyof Facts, string>>> = <F extends Facts, C extends PackageCatalog>(
  p: PhaseBuilder<F, C>,
) => PhaseBuilder<{ [K in keyof Facts]: F[K] | Added<A>[K] }, C>;

/**
 * Defines a module. The body sees a builder with every fact kind open
 * (`string`), since a module cannot know the caller's facts; the type
 * argument A says what it adds, for the caller's editor. The runtime checker
 * still checks the module's steps against the caller's facts.
 */
export const defineModule = <const A extends Partial<Record<keyof Facts, string>> = {}>(
  body: (p: PhaseBuilder<Facts, PackageCatalog>) => PhaseBuilder<Facts, PackageCatalog>,
): Module<A> => ((p: PhaseBuilder<Facts, PackageCatalog>) => body(p)) as unknown as Module<A>;
