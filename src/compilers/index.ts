import { ansibleCompiler } from './ansible/index.js';
import { cloudInitCompiler } from './cloud-init/index.js';
import { packerCompiler } from './packer/index.js';
import { shellCompiler } from './shell/index.js';
import type { Target } from './targets.js';
import type { Compiler } from './types.js';

/** The backends, by `--target` name. */
export const compilers: Readonly<Record<Target, Compiler>> = {
  shell: shellCompiler,
  ansible: ansibleCompiler,
  packer: packerCompiler,
  'cloud-init': cloudInitCompiler,
};

export { assertCompilable } from './representable.js';
export * from './types.js';
export * from './targets.js';
