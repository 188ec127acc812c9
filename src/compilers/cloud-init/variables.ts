// Variables in user-data. A booting machine has no one to ask for a value, so
// each reference is replaced by the variable's value at compile time; a
// sensitive variable has no value there (it must never be written into a
// file), so an image that uses one is refused for this target. Conditions on
// steps are decided with the same values.
import { diagnostic } from '../../check/diagnostic.js';
import type { Image } from '../../ir/schema.js';
import { describeConditions, runWith, valuesOf } from '../../core/conditions.js';
import { CompileError } from '../types.js';

/**
 * The image with every variable reference replaced by its value, and the
 * steps whose conditions these values do not take, each with its conditions
 * (user-data says which were left out); CompileError (IMGC2002) for a sensitive variable.
 */
export const substituteVariables = (ir: Image): { ir: Image; leftOut: string[] } => {
  const vars = ir.variables ?? [];
  if (!vars.length) return { ir, leftOut: [] };
  const sensitive = vars.filter((v) => v.sensitive);
  if (sensitive.length)
    throw new CompileError(
      sensitive.map((v) =>
        diagnostic(
          'IMGC2002',
          `cloud-init cannot take sensitive variable '${v.name}': user-data is read by a booting machine that cannot ask for a value, and a sensitive value is never written into an output file`,
          { hint: 'compile this image for shell, ansible or packer (they take sensitive values at run time), or make the value a non-sensitive variable' },
        ),
      ),
    );
  // Conditions are decided the same way: a step they do not take is left out.
  const { variables: _, ...rest } = runWith(ir, valuesOf(vars) as ReadonlyMap<string, string | number | boolean>);
  const kept = new Set(rest.phases.flatMap((p) => p.steps.map((s) => s.id)));
  const leftOut = ir.phases.flatMap((p) => p.steps.filter((s) => !kept.has(s.id)).map((s) => `${s.id} (when ${describeConditions(s.conditions ?? [])})`));
  return { ir: rest, leftOut };
};
