import { ansibleCompiler } from './ansible/index.js';
import { cloudInitCompiler } from './cloud-init/index.js';
import { packerCompiler } from './packer/index.js';
import { shellCompiler } from './shell/index.js';
import type { Image } from '../ir/schema.js';
import type { Diagnostic } from '../check/diagnostic.js';
import type { Target } from './targets.js';
import { CompileError, type CompiledFiles, type Compiler } from './types.js';

/** The image without the steps (and hooks) of these ids. */
const without = (ir: Image, ids: ReadonlySet<string>): Image => ({
  ...ir,
  phases: ir.phases.map((p) => ({ ...p, pre: p.pre.filter((s) => !ids.has(s.id)), steps: p.steps.filter((s) => !ids.has(s.id)), post: p.post.filter((s) => !ids.has(s.id)) })),
});

/**
 * A backend that names every step its target refuses, not only the first a
 * frame meets: each refused step (IMGC2002, located at a step) is left out
 * and the image compiled again, until none is refused; then one CompileError
 * has them all, with whatever else the last try found.
 */
const namingEveryRefusal = (compiler: Compiler): Compiler => ({
  ...compiler,
  compile: (ir, opts) => {
    const refused: Diagnostic[] = [];
    const left = new Set<string>();
    for (;;) {
      let files: CompiledFiles;
      try {
        files = compiler.compile(left.size ? without(ir, left) : ir, opts);
      } catch (e) {
        if (!(e instanceof CompileError)) throw e;
        const fresh = e.diagnostics.filter((d) => d.stepId === undefined || !left.has(d.stepId));
        const steps = fresh.filter((d) => d.code === 'IMGC2002' && d.stepId !== undefined);
        if (steps.length === 0 || steps.length < fresh.length) throw new CompileError([...refused, ...fresh]);
        refused.push(...steps);
        steps.forEach((d) => left.add(d.stepId!));
        continue;
      }
      if (refused.length) throw new CompileError(refused);
      return files;
    }
  },
});

/** The backends, by `--target` name. */
export const compilers: Readonly<Record<Target, Compiler>> = {
  shell: namingEveryRefusal(shellCompiler),
  ansible: namingEveryRefusal(ansibleCompiler),
  packer: namingEveryRefusal(packerCompiler),
  'cloud-init': namingEveryRefusal(cloudInitCompiler),
};

export { assertCompilable } from './representable.js';
export * from './types.js';
export * from './targets.js';
