import type { Compiler } from '../types.js';

// Placeholder until the shell backend lands; compile refuses rather than emit nothing.
export const shellCompiler: Compiler = {
  target: 'shell',
  description: 'shell (not implemented yet)',
  compile: () => {
    throw new Error('the shell backend is not implemented yet');
  },
};
