import { unrepresentable } from '../check/representable.js';
import type { Image } from '../ir/schema.js';
import { CompileError } from './types.js';

/** Every compiler's first call: refuses IR holding strings no backend can carry. */
export const assertRepresentable = (ir: Image): void => {
  const found = unrepresentable(ir);
  if (found.length) throw new CompileError(found);
};
