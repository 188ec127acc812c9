import { unrepresentable } from '../check/representable.js';
import { validateImage } from '../check/validate.js';
import type { Image } from '../ir/schema.js';
import { CompileError } from './types.js';

/**
 * Every compiler's first call. Compilers are also called as a library with
 * hand-made IR, so the IR is checked here as `imgc check` checks a
 * definition: against the schema (IMGC1004 at the nearest step) and for
 * strings no backend can carry (IMGC2001). Throws CompileError with all of
 * them; what is left for a backend to refuse is only what its target cannot
 * express (IMGC2002).
 */
export const assertCompilable = (ir: Image): void => {
  const found = [...validateImage(ir).diagnostics, ...unrepresentable(ir)];
  if (found.length) throw new CompileError(found);
};
