import type { HelperName } from './helpers.js';

/** Shell lines for a step's body and the helpers they call. */
export interface Emitted {
  readonly lines: string[];
  readonly helpers: HelperName[];
}
