// `variable(name, schema, opts)`: a typed value the definition leaves open,
// given by imgc.toml's [vars], IMGC_VAR_<NAME> or --var at compile time (and,
// when sensitive, only at run time). In strings it stands as an opaque marker
// (src/core/variables.ts) that each backend renders as its native reference.
import type { z } from 'zod';
import { marker, variableName } from '../core/variables.js';
import { DefinitionError } from './builder.js';

export type VariableType = 'string' | 'number' | 'boolean';

export interface VariableOptions<T> {
  default?: T;
  description?: string;
  /** Never written into the IR, any emitted file, log or diagnostic; given at run time. */
  sensitive?: boolean;
}

type Scalar = string | number | boolean;

/** A declared variable. Use it in a template string: `${v}` is its reference. */
export class Variable<T extends Scalar = Scalar> {
  /** @internal */
  constructor(
    readonly name: string,
    readonly type: VariableType,
    /** @internal */ readonly schema: z.ZodType,
    readonly options: VariableOptions<T>,
  ) {}
  /** Phantom: the value's type. */
  declare readonly __value?: T;
  toString(): string {
    return marker(this.name);
  }
  [Symbol.toPrimitive](): string {
    return marker(this.name);
  }
}

/** Every variable declared in this process, by name (shared by all copies of this module). */
const registryKey = Symbol.for('imgc.variables');
export const declaredVariables = (): Map<string, Variable> => {
  const g = globalThis as { [registryKey]?: Map<string, Variable> };
  return (g[registryKey] ??= new Map());
};

const typeOf = (schema: unknown): VariableType | undefined => {
  const t = (schema as { _zod?: { def?: { type?: unknown } } } | null)?._zod?.def?.type;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : undefined;
};

/**
 * What `variable()` needs of a zod schema: its output type and `safeParse`.
 * Not `z.ZodType<Scalar>`: checking a schema against zod's whole ZodType
 * structure made TypeScript compute the variance of zod's generic types, two
 * thirds of the reference example's type-check time.
 */
export interface ScalarSchema {
  readonly _zod: { readonly output: Scalar };
  safeParse(value: unknown): { readonly success: boolean };
}

type Out<S extends ScalarSchema> = S['_zod']['output'];

/** Declares a variable: `variable('k8s_minor', z.string().regex(/^\d+\.\d+$/), { default: '1.30' })`. */
export const variable = <S extends ScalarSchema>(name: string, schema: S, opts: VariableOptions<Out<S>> = {}): Variable<Out<S>> => {
  if (!variableName.test(name)) throw new DefinitionError(`variable name '${name}' must be lower-case letters, digits and "_", starting with a letter`);
  if (name.startsWith('imgc_')) throw new DefinitionError(`variable name '${name}': names starting with imgc_ are imgc's own`);
  const type = typeOf(schema);
  if (!type) throw new DefinitionError(`variable '${name}': the schema must be a zod string, number or boolean schema (z.string(), z.number(), z.boolean())`);
  if (opts.sensitive && opts.default !== undefined) throw new DefinitionError(`variable '${name}' is sensitive: it cannot have a default (a default would be written into the outputs)`);
  if (opts.default !== undefined && !schema.safeParse(opts.default).success) throw new DefinitionError(`variable '${name}': its default does not match its schema`);
  // typeOf() found a zod string/number/boolean schema's internals: it is a ZodType.
  const v = new Variable<Out<S>>(name, type, schema as unknown as z.ZodType, opts);
  declaredVariables().set(name, v as Variable);
  return v;
};
