// The POSIX shell backend: IR → build.sh, phases/NN-<phase>.sh (run inside the
// target as root) and hooks/NN-<phase>-{pre,post}.sh (run on the machine
// driving the build). Pure: same IR, same files.
import type { Compiler, CompiledFiles } from '../types.js';
import { assertCompilable } from '../representable.js';
import { buildScript } from './build.js';
import { hooksScript } from './hooks.js';
import { packageManagerOf } from '../package-managers.js';
import type { ShellRendering as PackageManager } from '../../steps/package-managers.js';
import { HELPERS_FILE, helpersScript, phaseScript, type PhaseFile } from './phase.js';
import type { HelperName } from '../../emit/shell/emitted.js';
import { shellRuntime } from './runtime.js';
import { isRootStep } from './steps.js';
import { shellDecommission } from './decommission.js';
import { imageView } from '../../ir/phases.js';

export const shellCompiler: Compiler = {
  target: 'shell',
  description: 'POSIX sh scripts: build.sh, one idempotent script per phase, hook scripts',
  compile: (given, opts = {}) => {
    // Schema and unrepresentable strings; what is left to refuse here is a
    // base whose package manager this backend does not drive (IMGC2002).
    assertCompilable(given);
    // The build never runs the phases for existing hosts only (bootstrap); provision.sh does.
    const ir = opts.runtime || opts.decommission ? given : imageView(given);
    // Looked up only when a step needs it, so a base without a supported
    // package manager still compiles when nothing installs packages.
    let pm: PackageManager | undefined;
    const packageManager = (): PackageManager => (pm ??= packageManagerOf(ir.base, 'shell'));
    const width = Math.max(2, String(ir.phases.length).length);
    const phases: PhaseFile[] = ir.phases.map((phase, i) => ({
      phase,
      index: i + 1,
      stem: `${String(i + 1).padStart(width, '0')}-${phase.name}`,
    }));
    // --runtime / --decommission: files for existing hosts instead of the build (./runtime.ts).
    if (opts.runtime || opts.decommission)
      return { ...(opts.runtime ? shellRuntime(ir, { pm: packageManager, stems: phases }) : {}), ...(opts.decommission ? shellDecommission(ir, phases) : {}) };
    const files: CompiledFiles = {};
    const helpers = new Set<HelperName>();
    let runs = false;
    for (const f of phases) {
      const script = phaseScript(ir, f, packageManager);
      files[`phases/${f.stem}.sh`] = script.text;
      script.helpers.forEach((h) => helpers.add(h));
      runs ||= f.phase.steps.some(isRootStep);
      if (f.phase.pre.length) files[`hooks/${f.stem}-pre.sh`] = hooksScript(ir, f, 'pre', f.phase.pre);
      if (f.phase.post.length) files[`hooks/${f.stem}-post.sh`] = hooksScript(ir, f, 'post', f.phase.post);
    }
    // Written once for every phase that runs steps; build.sh stages it beside them.
    if (runs) files[`phases/${HELPERS_FILE}`] = helpersScript(ir, helpers);
    return { 'build.sh': buildScript(ir, phases, runs), ...files };
  },
};
