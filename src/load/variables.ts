// Resolves a definition's variables: --var > IMGC_VAR_<NAME> > imgc.toml [vars]
// > the declared default. Each value is checked with the variable's zod schema
// (IMGC1008 names where it came from); the IR gets the variables its steps
// reference, with the value only when the variable is not sensitive. No
// sensitive value is ever put in a message.
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import { declaredVariables, type ListVariable, type Variable } from '../dsl/variables.js';
import type { Image } from '../ir/schema.js';
import { listItems, usedVariables, type VariableValue } from '../core/variables.js';
import { packageSpecPattern, packageSpecRule } from '../core/packages.js';

export interface GivenValue {
  name: string;
  value: string | number | boolean | readonly string[];
  /** Where it came from, for messages: `--var`, `IMGC_VAR_X`, `imgc.toml:LINE`. */
  from: string;
  /** A string from the command line or the environment, converted to the variable's type. */
  text?: boolean;
}

const convert = (v: Variable | ListVariable, g: GivenValue): unknown => {
  // A list given as text (the command line, the environment, a var file, or a TOML string): its items separated by white space (`--var extra_debs="a b"`).
  if (v.type === 'list' && typeof g.value === 'string') return listItems(g.value);
  if (!g.text || typeof g.value !== 'string') return g.value;
  if (v.type === 'number') return /^\s*$/.test(g.value) ? NaN : Number(g.value);
  if (v.type === 'boolean') return g.value === 'true' ? true : g.value === 'false' ? false : g.value;
  return g.value;
};

/** The IR's `variables`, and IMGC1008 for every value that does not fit. */
export const resolveVariables = (phases: unknown, given: readonly GivenValue[]): { variables: Image['variables']; diagnostics: Diagnostic[] } => {
  const declared = declaredVariables();
  const diagnostics: Diagnostic[] = [];
  // Unknown names on the command line or in imgc.toml are mistakes; the environment may hold anything.
  for (const g of given) {
    if (!declared.has(g.name) && !g.from.startsWith('IMGC_VAR_'))
      diagnostics.push(diagnostic('IMGC1008', `${g.from}: no variable '${g.name}' is declared by the definition`, { hint: `declared: ${[...declared.keys()].sort().join(', ') || '(none)'}` }));
  }
  // Without a declared variable no reference can be resolved (an undeclared one is IMGC2001's): the IR is not scanned.
  const variables = (declared.size ? usedVariables(phases) : []).flatMap((name) => {
    const v = declared.get(name);
    if (!v) return []; // an undeclared marker: refused by the representability pass (IMGC2001)
    const g = given.find((x) => x.name === name);
    const sensitive = v.options.sensitive === true;
    let value: unknown = v.options.default;
    if (g) {
      const parsed = v.schema.safeParse(convert(v, g));
      if (!parsed.success) {
        const why = parsed.error.issues.map((i) => i.message).join('; ');
        diagnostics.push(diagnostic('IMGC1008', `${g.from}: invalid value for variable '${name}'${sensitive ? ' (sensitive, not shown)' : ` ${JSON.stringify(g.value)}`}: ${why}`));
        return [];
      }
      value = parsed.data;
    }
    // A list variable is a package list: each item a package spec, checked here where the value has a source to name.
    const bad = v.type === 'list' && Array.isArray(value) ? (value as unknown[]).find((i) => typeof i !== 'string' || !packageSpecPattern.test(i)) : undefined;
    if (bad !== undefined) {
      diagnostics.push(diagnostic('IMGC1008', `${g?.from ?? 'the default'}: item ${JSON.stringify(bad)} of list variable '${name}' is not a package spec`, { hint: packageSpecRule }));
      return [];
    }
    if (value === undefined && !sensitive) {
      diagnostics.push(diagnostic('IMGC1008', `variable '${name}' has no value`, { hint: `pass --var ${name}=VALUE, set IMGC_VAR_${name.toUpperCase()}, or add it to imgc.toml's [vars]` }));
      return [];
    }
    return [{
      name,
      type: v.type,
      ...(v.options.description !== undefined ? { description: v.options.description } : {}),
      sensitive,
      ...(sensitive ? {} : { value: (Array.isArray(value) ? [...(value as string[])] : value) as Exclude<VariableValue, readonly string[]> | string[] }),
      ...(v.type !== 'list' && v.oneOf ? { oneOf: [...v.oneOf] } : {}),
    }];
  });
  return { variables, diagnostics };
};
