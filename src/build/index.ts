// `imgc build`: a definition, built for real into a directory. Phase 0 lays
// the base down (debootstrap or a root you bring), the root-changing phases
// run through a target (shell or ansible) inside it with chroot, phase 3
// makes the artifacts, phase 4 verifies the facts on disk. Each root phase's
// result is cached; artifacts appear only when the whole build succeeded.
// buildImage runs the stages in order: preflight and the compiled files
// (here), the work root and phase 0 (./work.ts), the phases (./stages.ts),
// publishing (./manifest.ts), and what a failure or an interrupt prints (here).
import { mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compilers } from '../compilers/index.js';
import type { CompiledFiles } from '../compilers/types.js';
import type { Image } from '../ir/schema.js';
import { CommandError, haveCommand } from '../host/exec.js';
import { lockFile } from '../host/flock.js';
import { writeTreeAtomically } from '../host/write.js';
import { sourceDateEpoch } from './boot-step.js';
import { missingToolsMessage, requiredTools } from './tools.js';
import { ensureForeignArch, ForeignArchError, isForeign } from '../host/binfmt.js';
import { archOf } from '../core/arch.js';
import { resolveBase, type BaseSource } from './base.js';
import { cacheDir } from './cache.js';
import { Display, type Io } from './display.js';
import { JsonDisplay } from './events.js';
import { publishBuild } from './manifest.js';
import { publish } from './artifacts.js';
import { mountsUnder } from './mounts.js';
import { logsText, openRunLogs, publishedRunLogs, runLogsDir, stageRunLogs } from './run-logs.js';
import { describeReclaimed, reclaimStale } from './reclaim.js';
import { PhaseFailed } from './runner.js';
import { hideValues, missingSensitive, missingSensitiveMessage, redact, type SensitiveValues } from './secrets.js';
import { Interrupted, Session } from './session.js';
import { runPhases } from './stages.js';
import { BuildError, failed, locText, type BuildOptions, type BuildRun } from './state.js';
import type { BuildSummary } from './summary.js';
import { openStaging, openWork, startRoot } from './work.js';
import { imageView, isBuildArtifact, isBuildCheck } from '../ir/phases.js';

export type { Io } from './display.js';
export { BuildError, type BuildOptions } from './state.js';
export type { BuildSummary, PhaseSummary } from './summary.js';

const GiB = 1024 ** 3;

/** Free bytes where `dir` is (0 when it cannot be told). */
export const freeBytes = (dir: string): number => {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return 0;
  }
};

/** logs/build.json: the summary as it stands (also of a build that failed). */
const writeSummary = (run: BuildRun): void => {
  run.summary.totalMs = Date.now() - run.started;
  try {
    mkdirSync(run.logsDir, { recursive: true });
    run.summary.logs = run.logsDir;
    writeFileSync(path.join(run.logsDir, 'build.json'), redact(`${JSON.stringify(run.summary, null, 2)}\n`));
  } catch {
    /* the out dir may be gone */
  }
};

/** Everything that can be known before anything runs (a message when the build cannot start), then the target compiled. */
const preflight = async (run: BuildRun): Promise<{ error: string } | { files: CompiledFiles; sensitive: SensitiveValues }> => {
  const { ir, opts } = run;
  if (process.getuid?.() !== 0) return { error: 'imgc build needs root (chroot, mount, and file owners inside the root): run it as root or with sudo' };
  // Read by the phase keys, the steps and the artifacts: a bad value is refused before any of them.
  try {
    sourceDateEpoch(run.env);
  } catch (e) {
    return { error: (e as Error).message };
  }
  const missing: string[] = [];
  for (const t of requiredTools(ir, opts.target)) if (!(await haveCommand(t))) missing.push(t);
  if (missing.length) return { error: missingToolsMessage(missing) };
  // The emulator is installed; the kernel must also hand it the root's binaries (binfmt_misc), which a plan only reports.
  const arch = archOf(ir.base);
  if (isForeign(arch)) {
    try {
      await ensureForeignArch(arch);
    } catch (e) {
      if (e instanceof ForeignArchError) return { error: e.message };
      throw e;
    }
  }
  const sensitive: SensitiveValues = opts.sensitive ?? new Map();
  hideValues(sensitive);
  const unset = missingSensitive(ir, sensitive);
  if (unset.length) return { error: missingSensitiveMessage(unset) };
  const compile = opts.compile ?? ((i: Image) => {
    const c = compilers[opts.target];
    if (!c) throw new BuildError(`unknown target '${opts.target}'`);
    return c.compile(i, {});
  });
  return { files: compile(ir), sensitive };
};

/**
 * This build's log folder (./run-logs.ts), and the compiled target files
 * staged: they replace outDir/compiled only with the artifacts they made, so
 * a build that fails or is interrupted leaves the last good build's
 * compiled/ and logs/ beside its artifacts. Returns the staged directory
 * (the build runs from it).
 */
const writeCompiled = (run: BuildRun, files: CompiledFiles): string => {
  mkdirSync(run.outDir, { recursive: true });
  openRunLogs(run);
  const compiledDir = path.join(openStaging(run), 'compiled');
  writeTreeAtomically(compiledDir, files);
  return compiledDir;
};

/** Reclaims what killed builds left beside the output directory; a message when there is still too little room. */
const makeRoom = (run: BuildRun, workParent: string): string | undefined => {
  for (const r of reclaimStale({ workParent, outDir: run.outDir, cacheDir: cacheDir(run.env) })) run.display.info(describeReclaimed(r, run.cwd));
  const free = freeBytes(workParent);
  return free < 2 * GiB ? `only ${(free / GiB).toFixed(1)} GiB free in ${workParent}; a build root needs about 2 GiB plus its artifacts: choose --out on a larger disk` : undefined;
};

/** The exit code of a build that threw `e`, after saying why; a bug (anything else) is thrown on. */
const exitCodeOf = (run: BuildRun, e: unknown, workDir: string | undefined): number => {
  const { display, session, summary, ir, cwd } = run;
  display.clearStatus();
  // A command killed by the interrupt fails too: the interrupt is the cause.
  const signal = e instanceof Interrupted ? e.signal : session.interrupted;
  if (signal) {
    summary.error = `interrupted by ${signal}`;
    const left = workDir ? mountsUnder(workDir) : [];
    display.line(`imgc: interrupted by ${signal}; ${left.length ? `STILL MOUNTED: ${left.join(', ')}` : 'nothing is left mounted'}, no artifact was published; logs: ${logsText(run)}`);
    return signal === 'SIGINT' ? 130 : 143;
  }
  if (e instanceof PhaseFailed) {
    const step = e.stepId ? ir.phases.flatMap((p) => [...p.pre, ...p.steps, ...p.post]).find((s) => s.id === e.stepId) : undefined;
    const at = run.where(step?.loc);
    const lines = [
      `${at ? `${at} - ` : ''}${e.message}`,
      `  log: ${path.relative(cwd, e.logFile)}`,
      ...e.output.trimEnd().split('\n').filter((l) => !/^imgc-(step|phase) /.test(l)).slice(-12).map((l) => `  | ${l}`),
    ];
    return failed(run, lines.join('\n')).exitCode;
  }
  if (e instanceof BuildError || e instanceof CommandError || (e as Error).name === 'BaseError' || (e as Error).name === 'MirrorError' || (e as Error).name === 'MountError') {
    return failed(run, (e as Error).message).exitCode;
  }
  writeSummary(run);
  throw e;
};

/** The last line of a build that succeeded: how long each stage took. */
const builtLine = (run: BuildRun): string => {
  const { summary } = run;
  const t = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
  const parts = [`base ${t(summary.base.ms)}${summary.base.cached ? ' (cache)' : ''}`, ...summary.phases.map((p) => `${p.name} ${p.cached ? 'cached' : t(p.ms)}`)];
  return `built ${run.ir.name} with ${run.opts.target} in ${t(Date.now() - run.started)}: ${parts.join(', ')}`;
};

/** Builds `ir`; returns the exit code (0 built, 1 failed, 130/143 interrupted) and what happened. */
export const buildImage = async (definition: Image, opts: BuildOptions, io: Io): Promise<{ exitCode: number; summary: BuildSummary }> => {
  // An image: the phases for existing hosts only (bootstrap) run from the runtime outputs, never here.
  const ir = imageView(definition);
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const outDir = path.resolve(cwd, opts.outDir);
  const display = opts.format === 'json' ? new JsonDisplay(io, { image: ir.name, target: opts.target, out: outDir }) : new Display(io, env);
  const started = Date.now();
  const summary: BuildSummary = { image: ir.name, target: opts.target, ok: false, base: { source: '', cached: false, ms: 0 }, phases: [], artifacts: [], totalMs: 0 };
  const run: BuildRun = {
    ir,
    opts,
    env,
    cwd,
    outDir,
    logsDir: runLogsDir(outDir, started, process.pid),
    display,
    session: new Session((l) => display.warn(l)),
    summary,
    started,
    where: (loc) => locText(loc, opts.definitionDir, cwd),
  };
  const result = await runBuild(run);
  display.finish(summary, result.exitCode);
  return result;
};

/** The build itself, once its run exists: preflight, base, stages, publishing. */
const runBuild = async (run: BuildRun): Promise<{ exitCode: number; summary: BuildSummary }> => {
  const ready = await preflight(run);
  if ('error' in ready) return failed(run, ready.error);
  // One build at a time into an output directory: a second would mix its logs and outputs into the first's.
  mkdirSync(run.outDir, { recursive: true });
  const outLock = await lockFile(run.outDir, { wait: false });
  if (!outLock) return failed(run, `another imgc build is writing into ${path.relative(run.cwd, run.outDir) || '.'}: wait for it to end, or give this build another --out`);
  try {
    return await buildInto(run, ready);
  } finally {
    run.session.cleanup(); // what a build that stopped before its phases made (the staged compiled files)
    await outLock.release();
  }
};

/** The build once it holds its output directory: compiled files, base, stages, publishing. */
const buildInto = async (run: BuildRun, ready: { files: CompiledFiles; sensitive: SensitiveValues }): Promise<{ exitCode: number; summary: BuildSummary }> => {
  const { ir, opts, env, outDir, display, summary } = run;
  const { files, sensitive } = ready;
  const compiledDir = writeCompiled(run, files);
  let base: BaseSource;
  try {
    base = await resolveBase(ir.base, { ...(opts.fromTar ? { fromTar: opts.fromTar } : {}), ...(opts.fromDir ? { fromDir: opts.fromDir } : {}), env });
  } catch (e) {
    writeSummary(run);
    return failed(run, `${run.where(ir.base.loc) ? `${run.where(ir.base.loc)} - ` : ''}${(e as Error).message}`);
  }
  // The working root lives beside the output directory (same disk as the artifacts, not a small /tmp).
  const workParent = path.dirname(outDir);
  const noRoom = makeRoom(run, workParent);
  if (noRoom) {
    writeSummary(run);
    return failed(run, noRoom);
  }

  let exitCode = 1;
  // This build's own: other builds beside the same output directory have work directories there too.
  let workDir: string | undefined;
  try {
    exitCode = await run.session.guard(async () => {
      const work = openWork(run, workParent, { files, compiledDir, sensitive }, (dir) => (workDir = dir));
      const resume = await startRoot(run, work, base);
      const results = await runPhases(run, work, resume);
      if (!ir.phases.some((p) => p.steps.some((s) => isBuildCheck(s) && s.check === 'facts'))) {
        display.info(opts.until !== undefined ? `facts not verified: the build stopped after phase '${opts.until}' (--until)` : 'facts not verified: the definition has no verify facts() step (imgc verify --root can check them)');
      }
      const logs = stageRunLogs(run, work.staging);
      try {
        if (results.staged.length) await publishBuild(run, work, base, results, [logs.output]);
        else await publish(work.staging, outDir, ['compiled', logs.output]);
      } catch (e) {
        logs.unstage();
        throw e;
      }
      publishedRunLogs(run);
      summary.ok = true;
      return 0;
    });
  } catch (e) {
    exitCode = exitCodeOf(run, e, workDir);
  } finally {
    writeSummary(run);
  }
  if (exitCode === 0) display.info(builtLine(run));
  return { exitCode, summary };
};
