import type { Compiler } from '../types.js';

// Placeholder until the packer backend lands; compile refuses rather than emit nothing.
export const packerCompiler: Compiler = {
  target: 'packer',
  description: 'packer (not implemented yet)',
  compile: () => {
    throw new Error('the packer backend is not implemented yet');
  },
};
