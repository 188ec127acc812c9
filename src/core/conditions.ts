// Conditions on steps: `p.when(v.is('x'), …)` takes the steps of its block only
// when variable v has that value when the output runs. A condition names its
// variable by marker (./variables.ts), so everything that finds a step's
// variables (the backends' prologues, the phase cache keys) finds it too.
//
// The checker cannot know the value, so it checks every combination of the
// values the conditions tell apart (variants): a boolean's two values, and
// for any other variable each value a condition compares it with plus "none of
// them" (docs/conditions.md).
import { z } from '../util/zod.js';
import { marker, substituteAll, valueText, wholeReference, type IRVariable } from './variables.js';

export type Scalar = string | number | boolean;


export const Condition = z
  .object({
    /** The variable, as its marker (one reference, nothing else). */
    variable: z.string().regex(wholeReference, 'a condition tests one variable reference'),
    equals: z.union([z.string(), z.number(), z.boolean()]),
    /** True: the step runs when the variable does not equal the value. */
    negate: z.boolean(),
  })
  .strict();
export type Condition = z.infer<typeof Condition>;

/** The name of the variable a condition tests. */
export const conditionVariable = (c: Condition): string => wholeReference.exec(c.variable)?.[1] ?? '';

export const condition = (name: string, equals: Scalar, negate = false): Condition => ({ variable: marker(name), equals, negate });

/** The condition's value compared as text, as the shell compares it (`true`, `3`). */
export const conditionText = (v: Scalar): string => String(v);

/** Whether a condition holds for a variable's value (undefined: a value none of the conditions names). */
export const holds = (c: Condition, value: Scalar | undefined): boolean => (value !== undefined && conditionText(value) === conditionText(c.equals)) !== c.negate;

/** A value as conditions read in words: a string quoted, `true` and `3` as they are. */
const shown = (v: Scalar): string => (typeof v === 'string' ? `'${v}'` : String(v));

/** How a condition reads in comments, explain and diagnostics: `runtime is 'crio'`, `gpu is not true`. */
export const describeCondition = (c: Condition): string => `${conditionVariable(c)} ${c.negate ? 'is not' : 'is'} ${shown(c.equals)}`;

export const describeConditions = (cs: readonly Condition[]): string => cs.map(describeCondition).join(' and ');

/** A value of each variable the conditions test; undefined: none of the values they name. */
export type Assignment = ReadonlyMap<string, Scalar | undefined>;

/** Whether a step with these conditions runs under the assignment. */
export const runsUnder = (conditions: readonly Condition[] | undefined, a: Assignment): boolean =>
  (conditions ?? []).every((c) => holds(c, a.get(conditionVariable(c))));

/** The assignment the IR's own values make (what `imgc build` and cloud-init run with); a list as its text (`valueText`). */
export const valuesOf = (variables: readonly IRVariable[] | undefined): Assignment =>
  new Map((variables ?? []).map((v) => [v.name, v.value === undefined ? undefined : typeof v.value === 'object' ? valueText(v.value) : v.value]));

/**
 * The phases with the steps these values take, their conditions dropped: what
 * runs when the values are known (cloud-init's compile, the build's verify).
 */
export const decideConditions = <P extends { readonly steps: readonly (Conditioned & object)[] }>(phases: readonly P[], a: Assignment): P[] =>
  phases.map((p) => ({ ...p, steps: p.steps.filter((s) => runsUnder(s.conditions, a)).map(({ conditions: _, ...s }) => s) }));

/**
 * An image as it runs with these values: the steps its conditions take, and
 * every variable reference replaced. Conditions first: they name their
 * variable by marker, which the substitution replaces.
 */
export const runWith = <I extends { readonly phases: readonly P[] }, P extends { readonly steps: readonly (Conditioned & object)[] }>(
  ir: I,
  values: ReadonlyMap<string, Scalar>,
): I => substituteAll({ ...ir, phases: decideConditions(ir.phases, values) }, values);

interface Conditioned {
  readonly conditions?: readonly Condition[] | undefined;
}

/**
 * Every combination of values the conditions of `steps` tell apart: per
 * variable, true and false for a boolean, each value of a z.enum, else each
 * value compared with and "none of them".
 */
export const variants = (steps: Iterable<Conditioned>, variables: readonly IRVariable[] | undefined): Assignment[] => {
  let out: Map<string, Scalar | undefined>[] = [new Map()];
  for (const [name, values] of comparedValues(steps)) {
    const v = variables?.find((x) => x.name === name);
    const domain: (Scalar | undefined)[] = v?.type === 'boolean' ? [true, false] : v?.oneOf ? [...v.oneOf] : [...values, undefined];
    out = out.flatMap((a) => domain.map((d) => new Map(a).set(name, d)));
  }
  return out;
};

/** Per variable the conditions of `steps` test, the values they compare it with. */
const comparedValues = (steps: Iterable<Conditioned>): Map<string, Set<Scalar>> => {
  const compared = new Map<string, Set<Scalar>>();
  for (const s of steps) for (const c of s.conditions ?? []) compared.set(conditionVariable(c), (compared.get(conditionVariable(c)) ?? new Set()).add(c.equals));
  return compared;
};

/** An assignment in words: `runtime is 'crio'`, `runtime is none of 'crio', 'containerd'`. */
export const describeAssignment = (a: Assignment, steps: Iterable<Conditioned>): string => {
  const compared = comparedValues(steps);
  return [...a].map(([name, v]) => (v === undefined ? `${name} is none of ${[...(compared.get(name) ?? [])].map(shown).join(', ')}` : `${name} is ${shown(v)}`)).join(' and ');
};
