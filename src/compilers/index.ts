import { ansibleCompiler } from './ansible/index.js';
import { cloudInitCompiler } from './cloud-init/index.js';
import { packerCompiler } from './packer/index.js';
import { shellCompiler } from './shell/index.js';
import type { Compiler } from './types.js';

/** The backends, by `--target` name. */
export const compilers: Readonly<Record<string, Compiler>> = Object.fromEntries(
  [shellCompiler, ansibleCompiler, packerCompiler, cloudInitCompiler].map((c) => [c.target, c]),
);

export { assertCompilable } from './representable.js';
export * from './types.js';
