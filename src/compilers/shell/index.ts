// The POSIX shell backend: IR → build.sh, phases/NN-<phase>.sh (run inside the
// target as root) and hooks/NN-<phase>-{pre,post}.sh (run on the machine
// driving the build); a phase with an Ansible role runs as parts around the
// role's play (./plays.ts). Pure: same IR, same files.
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
import { withCarried } from '../carried.js';
import { inParts, phasePieces, pieceFile, stepPlay } from './plays.js';

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
    if (opts.runtime || opts.decommission) {
      const live = { pm: packageManager, stems: phases };
      return { ...(opts.runtime ? shellRuntime(ir, live) : {}), ...(opts.decommission ? shellDecommission(ir, live) : {}) };
    }
    const files: CompiledFiles = {};
    const helpers = new Set<HelperName>();
    let runs = false;
    for (const f of phases) {
      const steps = f.phase.steps.filter(isRootStep);
      if (!inParts(steps)) {
        const script = phaseScript(ir, f, packageManager, opts.booted);
        files[`phases/${f.stem}.sh`] = script.text;
        script.helpers.forEach((h) => helpers.add(h));
        runs ||= steps.length > 0;
      } else {
        // Parts of the script, and between them the plays build.sh applies from the build machine (./plays.ts).
        phasePieces(steps).forEach((piece, j) => {
          const file = pieceFile(f.stem, j + 1, piece);
          if ('own' in piece) return void (files[file] = stepPlay(ir, f.phase, piece.own, file));
          const script = phaseScript(ir, { ...f, phase: { ...f.phase, steps: piece.part }, stem: `${f.stem}.${j + 1}` }, packageManager, opts.booted);
          files[file] = script.text;
          script.helpers.forEach((h) => helpers.add(h));
          runs = true;
        });
      }
      if (f.phase.pre.length) files[`hooks/${f.stem}-pre.sh`] = hooksScript(ir, f, 'pre', f.phase.pre);
      if (f.phase.post.length) files[`hooks/${f.stem}-post.sh`] = hooksScript(ir, f, 'post', f.phase.post);
    }
    // Written once for every phase that runs steps; build.sh stages it beside them.
    if (runs) files[`phases/${HELPERS_FILE}`] = helpersScript(ir, helpers);
    // The roles' copies (roles/<name>/), beside the plays that import them.
    return withCarried({ 'build.sh': buildScript(ir, phases, runs), ...files }, ir.phases.flatMap((p) => p.steps), 'shell');
  },
};
