// The phases after the base, one function per kind of phase: a root phase
// runs the target in the root and caches the result, an artifact phase makes
// the artifacts into staging, a verify phase checks the facts (and boots the
// disk). Nothing here publishes: ./manifest.ts does, once all succeeded.
import { archOf } from '../core/arch.js';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Phase, Step } from '../ir/schema.js';
import { describeStep, kindOf } from '../steps/index.js';
import type { Elsewhere } from '../steps/kind.js';
import { isElsewhere } from '../compilers/renderings.js';
import { isBuildArtifact, isBuildCheck, phaseKind, type BuildCheck } from '../ir/phases.js';
import { formatVerify, verifyRoot, type VerifyResult } from '../verify/index.js';
import { makeArtifacts, REUSE_STATE, type ArtifactRecord, type ReuseState } from './artifacts.js';
import { bootVerify, sourceDateEpoch } from './boot-step.js';
import { StageLog } from './logs.js';
import { CorruptEntry } from './cache.js';
import { lockOrWait, type HeldLock } from '../host/flock.js';
import { replaceRoot } from './work.js';
import { settleRoot } from './settle.js';
import { targetSteps } from './phases.js';
import { PhaseFailed, phaseStem, runners, type PhaseContext } from './runner.js';
import { redact, withValues } from './secrets.js';
import { logsText } from './run-logs.js';
import { BuildError, type BuildRun, type Work } from './state.js';
import type { PhaseSummary } from './summary.js';

/** What the phases leave for publishing. */
export interface PhaseResults {
  staged: ArtifactRecord[];
  verifyResult: VerifyResult | undefined;
  wantChecksums: boolean;
  reuseState: ReuseState;
}

/** A phase's run through the target, with its summary row and what the build collects. */
interface PhaseRun {
  run: BuildRun;
  work: Work;
  ctx: PhaseContext;
  ps: PhaseSummary;
  results: PhaseResults;
  /** The reuse state the last build into the output directory left. */
  previous: ReuseState | undefined;
}

/** The reuse state a build into `outDir` left (see ReuseState); undefined when none or unreadable. */
export const readReuseState = (outDir: string): ReuseState | undefined => {
  try {
    const state = JSON.parse(readFileSync(path.join(outDir, REUSE_STATE), 'utf8')) as ReuseState;
    return state.version === 1 && state.artifacts && typeof state.artifacts === 'object' ? state : undefined;
  } catch {
    return undefined;
  }
};

/** Whether running `phase` may change the root: its steps or hooks run in it (conservatively, any hook). */
export const runsInRoot = (phase: Phase): boolean => phaseKind(phase) === 'root' || targetSteps(phase).length > 0 || phase.pre.length + phase.post.length > 0;

const runnerOf = (p: PhaseRun) => runners[p.run.opts.target];

/** A root phase: hooks and steps in the root, then the root into the phase cache when the phase is keyed. */
const runRootPhase = async (p: PhaseRun): Promise<void> => {
  const { run, work, ctx, ps } = p;
  const { display, session, ir } = run;
  const runner = runnerOf(p);
  const phase = ctx.phase;
  display.phaseStart(phase.name, targetSteps(phase).length + (runner.separateHooks ? 0 : phase.pre.length + phase.post.length));
  await runner.runHooks(ctx, 'pre');
  const out = await runner.runSteps(ctx);
  await runner.runHooks(ctx, 'post');
  Object.assign(ps, { steps: out.steps, changed: out.changed, ...(out.recap ? { recap: out.recap } : {}) });
  display.phaseDone(`${out.steps.length} steps, ${out.changed} changed${out.recap ? ` (ansible recap: changed=${out.recap.changed})` : ''}`);
  session.check();
  // Before caching: the cached root and every artifact made from it hold no trace of when the build ran.
  const settled = settleRoot(work.root);
  if (settled.length) ctx.log.line(`imgc: emptied the build's logs and removed rebuildable caches: ${settled.join(', ')}`);
  const key = work.keys.get(phase);
  if (key) {
    const tc = Date.now();
    display.stage(phase.name, 'caching the root');
    work.rootIs = { key, id: await work.cache.store('phase', key, work.root, { image: ir.name, phase: phase.name, target: run.opts.target, inputs: work.inputs.get(phase) }, { log: ctx.log }) };
    display.stageDone(phase.name, 'cached the root', Date.now() - tc);
  }
};

/** An artifact phase: the artifacts made into staging (or kept from the last build), between the phase's hooks. */
const runArtifactPhase = async (p: PhaseRun): Promise<void> => {
  const { run, work, ctx, ps, results } = p;
  const { display, summary } = run;
  const runner = runnerOf(p);
  const steps = ctx.phase.steps.filter(isBuildArtifact);
  // The phase's other steps (Packer sources) are made by another target.
  const elsewhere = ctx.phase.steps.filter((s) => !isBuildArtifact(s));
  const took = new Map<string, number>();
  display.phaseStart(ctx.phase.name, steps.length);
  if (runner.separateHooks) await runner.runHooks(ctx, 'pre');
  else await runner.runSteps(ctx); // the play holds this phase's hooks only
  const { records: done, state } = await makeArtifacts(steps, {
    root: work.root,
    image: run.ir.name,
    arch: archOf(run.ir.base),
    ...(ctx.epoch !== undefined ? { epoch: ctx.epoch } : {}),
    ...(work.rootIs ? { rootId: work.rootIs.id } : {}),
    ...(p.previous ? { previous: { dir: run.outDir, state: p.previous } } : {}),
    staging: work.staging,
    run: { log: ctx.log },
    onStart: (s) => display.stepStart(`${s.id} ${s.format} ${s.output}`),
    onDone: (rec, ms) => {
      took.set(rec.step, ms);
      display.artifact(rec, ms);
      display.stepEnd(`${rec.step} ${rec.format} ${rec.output}${rec.reused ? ': unchanged, kept from the last build' : ''}`, rec.reused ? 'unchanged' : 'changed');
    },
  });
  // Raw images are made first (a qcow2 converts one); records keep the definition's order.
  for (const rec of done) {
    summary.artifacts.push({ ...rec, ms: took.get(rec.step) ?? 0 });
    ps.steps.push({ id: rec.step, status: rec.reused ? 'unchanged' : 'changed', ms: took.get(rec.step) ?? 0 });
  }
  results.staged.push(...done);
  Object.assign(results.reuseState.artifacts, state.artifacts);
  if (runner.separateHooks) await runner.runHooks(ctx, 'post');
  ps.notes = elsewhere.map((s) => {
    const r = kindOf(s).shell;
    return `${s.id}: ${describeStep(s)}: skipped${isElsewhere(r) ? ` (${(r as Elsewhere<Step>).elsewhere(s)})` : ''}`;
  });
  for (const n of ps.notes) display.info(n);
  display.phaseDone(`${done.length} artifact${done.length === 1 ? '' : 's'}`);
};

/** `v.facts()`: the definition's facts checked on the built root; a failure stops the build before publishing. */
const checkFacts = (p: PhaseRun, c: BuildCheck, tc: number): void => {
  const { run, work, ps, results } = p;
  const { display, logsDir, summary } = run;
  const result = verifyRoot(withValues(run.ir, work.sensitive), work.root);
  results.verifyResult = result;
  const text = formatVerify(result, { dir: run.opts.definitionDir, cwd: run.cwd });
  writeFileSync(path.join(logsDir, 'verify.txt'), redact(text));
  summary.verify = { checked: result.checked, failed: result.failures.length, ms: Date.now() - tc };
  if (result.failures.length) {
    display.stepEnd(`${c.id} facts`, 'failed');
    display.line(text.trimEnd());
    ps.steps.push({ id: c.id, status: 'failed', ms: Date.now() - tc });
    throw new BuildError(`${result.failures.length} of ${result.checked} facts do not hold in the built root (${logsText(run)}verify.txt); no artifact was published`);
  }
  display.stepEnd(`${c.id} facts: ${result.checked} hold`, 'unchanged');
};

/** A verify phase: its target steps, then each check (boot, facts, checksums) in the definition's order. */
const runVerifyPhase = async (p: PhaseRun): Promise<void> => {
  const { run, work, ctx, ps, results } = p;
  const { display, summary } = run;
  const runner = runnerOf(p);
  const checks = ctx.phase.steps.filter(isBuildCheck);
  display.phaseStart(ctx.phase.name, targetSteps(ctx.phase).length + checks.length);
  if (runner.separateHooks) await runner.runHooks(ctx, 'pre');
  const out = await runner.runSteps(ctx);
  ps.steps.push(...out.steps);
  for (const c of checks) {
    const tc = Date.now();
    display.stepStart(`${c.id} ${c.check}`);
    if (c.check === 'boot') {
      const where = { dir: run.opts.definitionDir, cwd: run.cwd };
      const r = await bootVerify(c, { ir: run.ir, staged: results.staged, staging: work.staging, logsDir: run.logsDir, logsText: logsText(run), outDir: run.outDir, display, session: run.session, env: run.env, started: run.started, where });
      summary.boot = r.summary;
      if (!r.ok) {
        ps.steps.push({ id: c.id, status: 'failed', ms: Date.now() - tc });
        throw new BuildError(r.message);
      }
    } else if (c.check === 'facts') {
      checkFacts(p, c, tc);
    } else {
      if (c.check === 'checksums') results.wantChecksums = true;
      display.stepEnd(`${c.id} ${c.check}`, 'unchanged');
    }
    ps.steps.push({ id: c.id, status: 'unchanged', ms: Date.now() - tc });
  }
  if (runner.separateHooks) await runner.runHooks(ctx, 'post');
  display.phaseDone(`${ps.steps.length} checks`);
};

const byKind = { root: runRootPhase, artifact: runArtifactPhase, verify: runVerifyPhase } as const;

/** The phase locks a build holds: the one of the phase it runs, taken before the last one is let go (hand over hand, in the phases' order: no deadlock). */
class PhaseLocks {
  private held: HeldLock | undefined;
  take(lock: HeldLock): void {
    void this.held?.release();
    this.held = lock;
  }
  release(): void {
    void this.held?.release();
    this.held = undefined;
  }
}

/**
 * Takes the lock of a keyed root phase (waiting while another build makes
 * the same key); when the cache has the phase's root by then (the other
 * build made it), puts that root in place of the work root and says how long
 * this build waited. Undefined: the phase runs here.
 */
const madeMeanwhile = async (run: BuildRun, work: Work, phase: Phase, log: StageLog, locks: PhaseLocks): Promise<{ waitedMs: number } | undefined> => {
  const key = work.keys.get(phase);
  if (!key || run.opts.noCache) return undefined;
  const t = Date.now();
  const { lock, waited } = await lockOrWait(work.cache.lockFile(key), () => run.display.info(`phase ${phase.name}: another build is making the same root (same cache key); waiting for it`));
  locks.take(lock);
  run.session.check();
  if (!work.cache.has('phase', key)) return undefined;
  try {
    await work.cache.verify('phase', key);
  } catch (e) {
    if (!(e instanceof CorruptEntry)) throw e;
    run.display.warn(e.message);
    return undefined;
  }
  const waitedMs = waited ? Date.now() - t : 0;
  log.line(`imgc: the root after ${phase.name} is in the cache${waited ? `, made by another build while this one waited ${(waitedMs / 1000).toFixed(1)}s` : ''}: taken from there`);
  await replaceRoot(work, key, log);
  return { waitedMs };
};

/** Every phase after the base in order; those up to `resume` are in the root already (cached). */
export const runPhases = async (run: BuildRun, work: Work, resume: number): Promise<PhaseResults> => {
  const { session } = run;
  const results: PhaseResults = { staged: [], verifyResult: undefined, wantChecksums: false, reuseState: { version: 1, artifacts: {} } };
  const previous = readReuseState(run.outDir);
  const epoch = sourceDateEpoch(run.env);
  const locks = new PhaseLocks();
  const release = session.defer('release the phase locks', () => locks.release());
  try {
    return await eachPhase(run, work, resume, results, previous, epoch, locks);
  } finally {
    release();
  }
};

/** The phases after `resume`, each holding its key's lock (root phases) while it runs and is cached. */
const eachPhase = async (run: BuildRun, work: Work, resume: number, results: PhaseResults, previous: ReuseState | undefined, epoch: number | undefined, locks: PhaseLocks): Promise<PhaseResults> => {
  const { ir, display, session, logsDir, summary } = run;
  for (let i = 0; i < ir.phases.length; i++) {
    const phase = ir.phases[i]!;
    const kind = phaseKind(phase);
    const stem = phaseStem(ir, phase, work.files);
    const ps: PhaseSummary = { name: phase.name, kind, cached: false, ms: 0, steps: [] };
    summary.phases.push(ps);
    if (i <= resume) {
      ps.cached = true;
      display.phaseCached(phase.name);
      continue;
    }
    const t = Date.now();
    const log = new StageLog(logsDir, stem);
    const made = kind === 'root' ? await madeMeanwhile(run, work, phase, log, locks) : undefined;
    if (made) {
      log.close();
      Object.assign(ps, { cached: true, ms: Date.now() - t });
      display.phaseCached(phase.name, made.waitedMs);
      continue;
    }
    const ctx: PhaseContext = {
      ir,
      phase,
      stem,
      root: work.root,
      compiledDir: work.compiledDir,
      files: work.files,
      log,
      display,
      session,
      mounts: work.mounts,
      passthrough: (line) => display.line(line),
      sensitive: work.sensitive,
      ...(epoch !== undefined ? { epoch } : {}),
    };
    if (runsInRoot(phase)) work.rootIs = undefined;
    try {
      await byKind[kind]({ run, work, ctx, ps, results, previous });
    } catch (e) {
      if (e instanceof PhaseFailed) {
        ps.steps.push(...e.steps);
        display.phaseDone('failed', false);
      }
      throw e;
    } finally {
      ps.ms = Date.now() - t;
      log.close();
    }
    session.check();
  }
  return results;
};
