// A matrix of images from one definition (docs/variants.md): axes and their
// values declared once, exclusions, one image per remaining combination. The
// combinations are made here, while the definition runs, so that a mistake in
// the matrix is a DefinitionError at the user's `variants(...)` call.
import { DefinitionError } from '../core/definition-error.js';
import type { Image } from '../ir/types.js';
import type { PackageCatalog } from './types.js';

/** Each axis's name and its values, at least one (in the order the names are made from). */
export type Axes = { readonly [axis: string]: readonly [string, ...string[]] };

/** One combination: a value of every axis, typed with the axis's literal values. */
export type Combination<A extends Axes> = { readonly [K in keyof A]: A[K][number] };

/** Combinations left out: every one whose values equal all those given here. */
export type Exclusion<A extends Axes> = { readonly [K in keyof A]?: A[K][number] };

export interface VariantsOptions<A extends Axes> {
  exclude?: readonly Exclusion<A>[];
  /**
   * The combination a command takes when it is given neither --variant nor --all (a local build, the README's
   * example); without one, such a command refuses the matrix and lists its names. `imgc check` checks them all.
   */
  default?: Combination<A>;
}

/** An image of a matrix, whatever its facts: what `image(...)...` makes (an ImageBuilder). */
export interface MatrixImage {
  readonly imageName: string;
  readonly packageCatalog: PackageCatalog;
  toIR(source?: string): Image;
}

/** One combination and its image; `name` is the image's name. */
export interface Variant<A extends Axes = Axes> {
  readonly name: string;
  readonly values: Combination<A>;
  readonly image: MatrixImage;
  /** The matrix's default combination (VariantsOptions.default). */
  readonly default?: true;
}

/** The images of a matrix, one per combination, in declaration order (the first axis varies slowest). */
export class Matrix<A extends Axes = Axes> {
  /** @internal */
  constructor(readonly axes: A, private readonly list: readonly Variant<A>[]) {}

  /** The combinations and their images. */
  variants(): readonly Variant<A>[] {
    return this.list;
  }
}

const show = (values: Readonly<Record<string, string>>) => `{ ${Object.entries(values).map(([k, v]) => `${k}: '${v}'`).join(', ')} }`;

/**
 * Many images from one definition: `export default variants({ k8s: ['1.30', '1.31'], source: ['upstream', 'debian'] },
 * (v) => image(`k8s-node-${v.k8s}-${v.source}`)…, { exclude: [{ k8s: '1.30', source: 'debian' }], default: { k8s: '1.31',
 * source: 'upstream' } })`. Name each image from its values in the axes' order; the names must differ.
 */
export const variants = <const A extends Axes>(axes: A, imageOf: (v: Combination<A>) => MatrixImage, options: VariantsOptions<A> = {}): Matrix<A> => {
  const names = Object.keys(axes);
  if (!names.length) throw new DefinitionError('variants() needs at least one axis, e.g. variants({ k8s: [\'1.30\', \'1.31\'] }, (v) => image(...))');
  for (const axis of names) {
    const values: readonly string[] = axes[axis] ?? [];
    if (!Array.isArray(values) || !values.length) throw new DefinitionError(`variants(): axis '${axis}' has no values`);
    const twice = values.find((v, i) => values.indexOf(v) !== i);
    if (twice !== undefined) throw new DefinitionError(`variants(): axis '${axis}' lists '${twice}' twice`);
  }
  const exclude = (options.exclude ?? []) as readonly Readonly<Record<string, string>>[];
  exclude.forEach((ex, i) => {
    const entries = Object.entries(ex);
    if (!entries.length) throw new DefinitionError(`variants(): exclusion ${i + 1} is empty; it would leave out every combination`);
    for (const [axis, value] of entries) {
      const values: readonly string[] | undefined = Object.hasOwn(axes, axis) ? axes[axis] : undefined;
      if (!values) throw new DefinitionError(`variants(): exclusion ${show(ex)} names axis '${axis}', which is not one of ${names.map((n) => `'${n}'`).join(', ')}`);
      if (!values.includes(value)) throw new DefinitionError(`variants(): exclusion ${show(ex)} gives axis '${axis}' the value '${value}', which is not one of ${values.map((v) => `'${v}'`).join(', ')}`);
    }
  });
  // Every combination, the first axis varying slowest.
  const all = names.reduce<Record<string, string>[]>((acc, axis) => acc.flatMap((c) => (axes[axis] ?? []).map((value) => ({ ...c, [axis]: value }))), [{}]);
  const kept = all.filter((c) => !exclude.some((ex) => Object.entries(ex).every(([k, v]) => c[k] === v)));
  if (!kept.length) throw new DefinitionError(`variants(): the exclusions leave none of the ${all.length} combinations`);
  const given = options.default as Readonly<Record<string, string>> | undefined;
  const isDefault = (c: Record<string, string>) => given !== undefined && names.every((n) => c[n] === given[n]);
  if (given !== undefined) {
    const extra = Object.keys(given).find((k) => !names.includes(k));
    if (extra !== undefined) throw new DefinitionError(`variants(): the default ${show(given)} names axis '${extra}', which is not one of ${names.map((n) => `'${n}'`).join(', ')}`);
    const missing = names.find((n) => !Object.hasOwn(given, n));
    if (missing !== undefined) throw new DefinitionError(`variants(): the default ${show(given)} gives no value of axis '${missing}'; a default is one whole combination`);
    if (!all.some(isDefault)) throw new DefinitionError(`variants(): the default ${show(given)} is not a combination of the axes`);
    if (!kept.some(isDefault)) throw new DefinitionError(`variants(): the default ${show(given)} is one of the combinations the exclusions leave out`);
  }
  const seen = new Map<string, Record<string, string>>();
  const list = kept.map((values) => {
    const frozen = Object.freeze(values) as Combination<A>;
    const image = imageOf(frozen);
    const name = image.imageName;
    const other = seen.get(name);
    if (other) throw new DefinitionError(`variants(): ${show(other)} and ${show(values)} both make the image '${name}'; name each image from all its values, e.g. image(\`name-${names.map((n) => `\${v.${n}}`).join('-')}\`)`);
    seen.set(name, values);
    return isDefault(values) ? { name, values: frozen, image, default: true as const } : { name, values: frozen, image };
  });
  return new Matrix(axes, list);
};
