// `variable(name, schema, opts)`: a typed value the definition leaves open,
// given by imgc.toml's [vars], IMGC_VAR_<NAME> or --var at compile time (and,
// when sensitive, only at run time). In strings it stands as an opaque marker
// (src/core/variables.ts) that each backend renders as its native reference.
// A list variable (`z.array(z.string())`) stands only as a package list
// (`p.packages(extraDebs)`, src/steps/package-list.ts): it is no string.
import type { z } from 'zod';
import { marker, variableName } from '../core/variables.js';
import { condition, type Condition } from '../core/conditions.js';
import { DefinitionError } from '../core/definition-error.js';

export type VariableType = 'string' | 'number' | 'boolean' | 'list';

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
    /** A z.enum variable's values. */
    readonly oneOf?: readonly string[],
  ) {}
  /** Phantom: the value's type. */
  declare readonly __value?: T;
  toString(): string {
    return marker(this.name);
  }
  [Symbol.toPrimitive](): string {
    return marker(this.name);
  }
  /** A condition for `p.when(...)`: the variable has this value when the output runs. */
  is(value: T): Condition {
    return this.compared(value, false);
  }
  /** A condition for `p.when(...)`: the variable does not have this value. */
  isNot(value: T): Condition {
    return this.compared(value, true);
  }
  private compared(value: T, negate: boolean): Condition {
    if (this.options.sensitive) throw new DefinitionError(`variable '${this.name}' is sensitive: it cannot decide which steps run (which steps ran would tell its value)`);
    if (typeof value !== this.type) throw new DefinitionError(`variable '${this.name}' is a ${this.type}: compare it with a ${this.type}, not ${JSON.stringify(value)}`);
    if (this.oneOf && !this.oneOf.includes(value as string)) throw new DefinitionError(`variable '${this.name}' is one of ${this.oneOf.map((o) => `'${o}'`).join(', ')}: '${String(value)}' is none of them`);
    return condition(this.name, value, negate);
  }
}

/**
 * A declared list variable (`variable('extra_debs', z.array(z.string()), { default: [] })`):
 * its items are known only when the output runs. It is not a string: pass it
 * to `packages(...)`; in a template string it is a definition error.
 */
export class ListVariable {
  /** @internal */
  constructor(
    readonly name: string,
    /** @internal */ readonly schema: z.ZodType,
    readonly options: VariableOptions<readonly string[]>,
  ) {}
  readonly type = 'list' as const;
  /** The marker `packages(list)` puts in the IR (src/core/variables.ts). @internal */
  get reference(): string {
    return marker(this.name);
  }
  toString(): string {
    return this.refused();
  }
  [Symbol.toPrimitive](): string {
    return this.refused();
  }
  private refused(): never {
    throw new DefinitionError(`variable '${this.name}' is a list: it cannot stand in a string; a list variable is a package list (p.packages(${this.name}))`);
  }
}

/** Whether `x` is a list variable (by shape: the definition may load its own copy of this module). */
export const isListVariable = (x: unknown): x is ListVariable =>
  typeof x === 'object' && x !== null && !Array.isArray(x) && (x as { type?: unknown }).type === 'list' && typeof (x as { name?: unknown }).name === 'string';

/** Every variable declared in this process, by name (shared by all copies of this module). */
const registryKey = Symbol.for('imgc.variables');
export const declaredVariables = (): Map<string, Variable | ListVariable> => {
  const g = globalThis as { [registryKey]?: Map<string, Variable | ListVariable> };
  return (g[registryKey] ??= new Map());
};

const typeOf = (schema: unknown): { type: VariableType; oneOf?: string[] } | undefined => {
  const def = (schema as { _zod?: { def?: { type?: unknown; entries?: unknown } } } | null)?._zod?.def;
  const t = def?.type;
  if (t === 'string' || t === 'number' || t === 'boolean') return { type: t };
  // z.array(z.string()): a list of strings (its items' own checks kept by the schema).
  if (t === 'array') return typeOf((def as { element?: unknown }).element)?.type === 'string' ? { type: 'list' } : undefined;
  // z.enum(['a', 'b']): a string with known values.
  const values = t === 'enum' && typeof def?.entries === 'object' && def.entries !== null ? Object.values(def.entries) : [];
  return values.length && values.every((v) => typeof v === 'string') ? { type: 'string', oneOf: values as string[] } : undefined;
};

/**
 * What `variable()` needs of a zod schema: its output type and `safeParse`.
 * Not `z.ZodType<Scalar>`: checking a schema against zod's whole ZodType
 * structure made TypeScript compute the variance of zod's generic types, two
 * thirds of the reference example's type-check time.
 */
export interface ScalarSchema {
  readonly _zod: { readonly output: Scalar | string[] };
  safeParse(value: unknown): { readonly success: boolean };
}

type Out<S extends ScalarSchema> = S['_zod']['output'];
/** What `variable()` returns for a schema: a list variable for z.array(z.string()). */
type VariableOf<T> = [T] extends [readonly string[]] ? ListVariable : Variable<Extract<T, Scalar>>;

/** Declares a variable: `variable('k8s_minor', z.string().regex(/^\d+\.\d+$/), { default: '1.30' })`. */
export const variable = <S extends ScalarSchema>(name: string, schema: S, opts: VariableOptions<Out<S>> = {}): VariableOf<Out<S>> => {
  if (!variableName.test(name)) throw new DefinitionError(`variable name '${name}' must be lower-case letters, digits and "_", starting with a letter`);
  if (name.startsWith('imgc_')) throw new DefinitionError(`variable name '${name}': names starting with imgc_ are imgc's own`);
  const typed = typeOf(schema);
  if (!typed) throw new DefinitionError(`variable '${name}': the schema must be a zod string, number, boolean, string enum or string list schema (z.string(), z.number(), z.boolean(), z.enum([...]), z.array(z.string()))`);
  if (opts.sensitive && opts.default !== undefined) throw new DefinitionError(`variable '${name}' is sensitive: it cannot have a default (a default would be written into the outputs)`);
  if (opts.default !== undefined && !schema.safeParse(opts.default).success) throw new DefinitionError(`variable '${name}': its default does not match its schema`);
  if (typed.type === 'list' && opts.sensitive) throw new DefinitionError(`variable '${name}' is a list: a package list is not sensitive (it decides what the image holds, and the outputs name it)`);
  // typeOf() found a zod string/number/boolean/array schema's internals: it is a ZodType.
  const v =
    typed.type === 'list'
      ? new ListVariable(name, schema as unknown as z.ZodType, opts as VariableOptions<readonly string[]>)
      : new Variable<Scalar>(name, typed.type, schema as unknown as z.ZodType, opts as VariableOptions<Scalar>, typed.oneOf);
  declaredVariables().set(name, v);
  return v as VariableOf<Out<S>>;
};
