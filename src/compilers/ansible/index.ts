import type { Compiler } from '../types.js';

// Placeholder until the ansible backend lands; compile refuses rather than emit nothing.
export const ansibleCompiler: Compiler = {
  target: 'ansible',
  description: 'ansible (not implemented yet)',
  compile: () => {
    throw new Error('the ansible backend is not implemented yet');
  },
};
