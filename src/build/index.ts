// `imgc build`: a definition, built for real into a directory. Phase 0 lays
// the base down (debootstrap or a root you bring), the root-changing phases
// run through a target (shell or ansible) inside it with chroot, phase 3
// makes the artifacts, phase 4 verifies the facts on disk. Each root phase's
// result is cached; artifacts appear only when the whole build succeeded.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compilers } from '../compilers/index.js';
import type { CompiledFiles } from '../compilers/types.js';
import { irToJson } from '../ir/index.js';
import type { Fact, Image, Phase, SourceLocation, StepOf } from '../ir/schema.js';
import { factId } from '../ir/facts.js';
import { writeTreeAtomically } from '../cli/write.js';
import { formatVerify, verifyRoot, type VerifyResult } from '../verify/index.js';
import { bootVerify, bootTools, sourceDateEpoch } from './boot-step.js';
import { spdxOfRoot } from './sbom.js';
import { makeArtifacts, publish, REUSE_STATE, sha256sums, type ArtifactRecord, type ReuseState } from './artifacts.js';
import { layBase, resolveBase, type BaseSource } from './base.js';
import { cacheDir, CorruptEntry, RootCache, sha256 } from './cache.js';
import { Display, type Io } from './display.js';
import { CommandError, haveCommand, removeTree } from './exec.js';
import { StageLog } from './logs.js';
import { mountsUnder, RootMounts } from './mounts.js';
import { phaseKind } from '../ir/phases.js';
import { targetSteps } from './phases.js';
import { PhaseFailed, phaseStem, runners, type PhaseContext, type PhaseOutcome, type StepRecord } from './runner.js';
import { baseIdentity, phaseKeys } from './keys.js';
import { claim, describeReclaimed, reclaimStale } from './reclaim.js';
import { hideValues, missingSensitive, redact, withValues, type SensitiveValues } from './secrets.js';
import { Interrupted, Session } from './session.js';

export type { Io } from './display.js';

export interface BuildOptions {
  target: 'shell' | 'ansible';
  /** The build's output directory (artifacts, manifest, logs/, compiled/). */
  outDir: string;
  fromTar?: string;
  fromDir?: string;
  /** Do not reuse cached phase roots (they are still refreshed); the base tarball is still reused. */
  noCache?: boolean;
  keepRoot?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The definition's directory (IR locations are relative to it) and the cwd (messages are relative to it). */
  definitionDir: string;
  cwd?: string;
  /** For tests: compile without the registered backend. */
  compile?: (ir: Image) => CompiledFiles;
  /** The values of the sensitive variables the image uses (the IR never holds them). */
  sensitive?: SensitiveValues;
  /** Checks the root laid down for phase 0 before any step runs (a base made of facts: a contract's); a message fails the build. */
  checkBase?: (root: string) => string | undefined;
}

export interface PhaseSummary {
  name: string;
  kind: 'root' | 'artifact' | 'verify';
  cached: boolean;
  ms: number;
  changed?: number;
  steps: StepRecord[];
  recap?: PhaseOutcome['recap'];
  notes?: string[];
}

export interface BuildSummary {
  image: string;
  target: string;
  ok: boolean;
  error?: string;
  base: { source: string; cached: boolean; ms: number; key?: string };
  phases: PhaseSummary[];
  artifacts: Array<ArtifactRecord & { ms: number }>;
  verify?: { checked: number; failed: number; ms: number };
  /** The boot check (v.boot()): how the node booted and how long it took from the build's start. */
  boot?: { disk: string; accel: 'kvm' | 'tcg'; checked: number; failed: number; bootMs: number; sinceStartMs: number };
  root?: string;
  totalMs: number;
}

/** Build failures the user can act on (not bugs): printed without a stack. */
export class BuildError extends Error {
  override name = 'BuildError';
}

const locText = (loc: SourceLocation | undefined, dir: string, cwd: string) =>
  loc ? `${path.relative(cwd, path.resolve(dir, loc.file)).split(path.sep).join('/')}:${loc.line}:${loc.column}` : undefined;

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

/** Removes a work directory, but never while anything is mounted below it (rm would reach into /dev). */
const removeWorkDir = (dir: string, display: Display): void => {
  const mounted = existsSync(dir) ? mountsUnder(dir) : [];
  if (mounted.length) {
    display.warn(`not removing ${dir}: still mounted ${mounted.join(', ')}`);
    return;
  }
  removeTree(dir);
};

const finalFacts = (ir: Image): Fact[] => {
  const facts = new Map<string, Fact>();
  for (const f of ir.base.provides) facts.set(factId(f), f);
  for (const p of ir.phases) {
    for (const s of [...p.pre, ...p.steps, ...p.post]) {
      for (const f of s.removes) facts.delete(factId(f));
      for (const f of s.provides) facts.set(factId(f), f);
    }
  }
  return [...facts.values()];
};

/** The reuse state a build into `outDir` left (see ReuseState); undefined when none or unreadable. */
const readReuseState = (outDir: string): ReuseState | undefined => {
  try {
    const state = JSON.parse(readFileSync(path.join(outDir, REUSE_STATE), 'utf8')) as ReuseState;
    return state.version === 1 && state.artifacts && typeof state.artifacts === 'object' ? state : undefined;
  } catch {
    return undefined;
  }
};

/** Whether running `phase` may change the root: its steps or hooks run in it (conservatively, any hook). */
const runsInRoot = (phase: Phase): boolean => phaseKind(phase) === 'root' || targetSteps(phase).length > 0 || phase.pre.length + phase.post.length > 0;

const requiredTools = (ir: Image, opts: BuildOptions): string[] => {
  const artifacts = ir.phases.flatMap((p) => p.steps).filter((s): s is StepOf<'artifact'> => s.kind === 'artifact');
  return [
    'chroot',
    'mount',
    'umount',
    'tar',
    'zstd',
    'cp',
    ...(artifacts.some((a) => a.format === 'ext4' || a.format === 'raw' || a.format === 'qcow2') ? ['mkfs.ext4'] : []),
    ...bootTools(ir),
    ...(artifacts.some((a) => a.format === 'qcow2') ? ['qemu-img'] : []),
    ...(artifacts.some((a) => a.format === 'tar' && a.compression === 'gzip') ? ['gzip'] : []),
    ...(opts.target === 'ansible' ? ['ansible-playbook'] : []),
  ];
};

/** Builds `ir`; returns the exit code (0 built, 1 failed, 130/143 interrupted) and what happened. */
export const buildImage = async (ir: Image, opts: BuildOptions, io: Io): Promise<{ exitCode: number; summary: BuildSummary }> => {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const display = new Display(io, env);
  const outDir = path.resolve(cwd, opts.outDir);
  const started = Date.now();
  const summary: BuildSummary = { image: ir.name, target: opts.target, ok: false, base: { source: '', cached: false, ms: 0 }, phases: [], artifacts: [], totalMs: 0 };
  const where = (loc: SourceLocation | undefined) => locText(loc, opts.definitionDir, cwd);
  const session = new Session((l) => display.warn(l));
  const logsDir = path.join(outDir, 'logs');

  const fail = (message: string): { exitCode: number; summary: BuildSummary } => {
    display.clearStatus();
    display.line(`${display.live ? '\u001b[31merror:\u001b[0m' : 'error:'} ${message}`);
    summary.error = redact(message.split('\n')[0] ?? '');
    return { exitCode: 1, summary };
  };

  const writeSummary = () => {
    summary.totalMs = Date.now() - started;
    try {
      mkdirSync(logsDir, { recursive: true });
      writeFileSync(path.join(logsDir, 'build.json'), redact(`${JSON.stringify(summary, null, 2)}\n`));
    } catch {
      /* the out dir may be gone */
    }
  };

  // Preflight: everything that can be known before anything runs.
  if (process.getuid?.() !== 0) return fail('imgc build needs root (chroot, mount, and file owners inside the root): run it as root or with sudo');
  const missing: string[] = [];
  for (const t of requiredTools(ir, opts)) if (!(await haveCommand(t))) missing.push(t);
  if (missing.length) return fail(`missing tools on this machine: ${missing.join(', ')} (apt-get install debootstrap e2fsprogs qemu-utils zstd ansible)`);
  const sensitive: SensitiveValues = opts.sensitive ?? new Map();
  hideValues(sensitive);
  const unset = missingSensitive(ir, sensitive);
  if (unset.length) {
    return fail(
      `sensitive variable${unset.length > 1 ? 's' : ''} ${unset.join(', ')} ha${unset.length > 1 ? 've' : 's'} no value: pass ${unset.map((n) => `--var ${n}=VALUE`).join(' ')}, set ${unset.map((n) => `IMGC_VAR_${n.toUpperCase()}`).join(', ')} or add ${unset.length > 1 ? 'them' : 'it'} to imgc.toml's [vars]`,
    );
  }
  const compile = opts.compile ?? ((i: Image) => {
    const c = compilers[opts.target];
    if (!c) throw new BuildError(`unknown target '${opts.target}'`);
    return c.compile(i, {});
  });
  const files = compile(ir);

  mkdirSync(outDir, { recursive: true });
  rmSync(logsDir, { recursive: true, force: true });
  mkdirSync(logsDir, { recursive: true });
  const compiledDir = path.join(outDir, 'compiled');
  writeTreeAtomically(compiledDir, files);

  let baseSrc: BaseSource;
  try {
    baseSrc = await resolveBase(ir.base, { ...(opts.fromTar ? { fromTar: opts.fromTar } : {}), ...(opts.fromDir ? { fromDir: opts.fromDir } : {}), env });
  } catch (e) {
    writeSummary();
    return fail(`${where(ir.base.loc) ? `${where(ir.base.loc)} - ` : ''}${(e as Error).message}`);
  }

  // The working root lives beside the output directory (same disk as the artifacts, not a small /tmp).
  const workParent = path.dirname(outDir);
  for (const r of reclaimStale({ workParent, outDir, cacheDir: cacheDir(env) })) display.info(describeReclaimed(r, cwd));
  const free = freeBytes(workParent);
  if (free < 2 * GiB) {
    writeSummary();
    return fail(`only ${(free / GiB).toFixed(1)} GiB free in ${workParent}; a build root needs about 2 GiB plus its artifacts: choose --out on a larger disk`);
  }

  let exitCode = 1;
  // This build's own: other builds beside the same output directory have work directories there too.
  let workDir: string | undefined;
  try {
    exitCode = await session.guard(async () => {
      const work = mkdtempSync(path.join(workParent, `.imgc-work-${ir.name}-`));
      claim(work);
      workDir = work;
      const root = path.join(work, 'root');
      mkdirSync(root, { mode: 0o755 });
      summary.root = root;
      const cache = new RootCache(cacheDir(env));
      // The cached root phase result `root` is right now, while nothing else
      // has run in it: artifacts made now record it as their input (so the
      // next build into outDir can keep them), and at the end the root is
      // moved into the cache unpacked, so the next build that starts from it
      // (one that changed only the artifacts) takes it by a rename.
      let rootIs: { key: string; id: string } | undefined;
      session.defer('remove the work directory', () => {
        if (opts.keepRoot) display.info(`root kept at ${path.relative(cwd, root) || root}`);
        else {
          if (rootIs && mountsUnder(root).length === 0 && cache.keep(rootIs.key, rootIs.id, root)) display.info('kept the root unpacked in the cache for the next build');
          removeWorkDir(work, display);
        }
      });
      const staging = path.join(outDir, `.imgc-staging-${process.pid}`);
      rmSync(staging, { recursive: true, force: true });
      session.defer('remove staged artifacts', () => rmSync(staging, { recursive: true, force: true }));
      mkdirSync(staging);
      claim(staging);
      const mounts = new RootMounts(root);
      session.defer('unmount', () => mounts.unmountAll());

      // Phase keys: a chain from the base through the root-changing phases (./keys.ts).
      const keysFrom = () => phaseKeys(ir, baseIdentity(baseSrc.key, baseSrc.key && cache.checksum('base', baseSrc.key), baseSrc.kind), opts.target);
      let keys = keysFrom();
      if (baseSrc.kind === 'dir') display.info('--from-dir: the phase cache is not used (a directory has no cheap key)');
      // Resume after the longest prefix of root phases whose result is cached.
      let resume = -1;
      if (!opts.noCache) {
        for (let i = 0; i < ir.phases.length; i++) {
          const p = ir.phases[i]!;
          if (phaseKind(p) !== 'root') break;
          const k = keys.get(p);
          if (k && cache.has('phase', k)) resume = i;
        }
      }

      // Phase 0.
      const baseLog = new StageLog(logsDir, '00-base');
      const t0 = Date.now();
      try {
        if (resume >= 0) {
          const p = ir.phases[resume]!;
          const key = keys.get(p)!;
          display.stage('base', `from the cache: the root after phase ${p.name}`);
          let id = cache.take(key, root);
          if (id) baseLog.line(`imgc: took the unpacked root after ${p.name} from the cache`);
          else {
            try {
              id = await cache.restore('phase', key, root, { log: baseLog });
            } catch (e) {
              if (!(e instanceof CorruptEntry)) throw e;
              // Dropped (root untouched): build from the base instead, running the phases again.
              display.warn(e.message);
              resume = -1;
            }
          }
          rootIs = id ? { key, id } : undefined;
          if (resume >= 0) {
            summary.base = { source: baseSrc.describe, cached: true, ms: Date.now() - t0, ...(baseSrc.key ? { key: baseSrc.key } : {}) };
            display.stageDone('base', `restored the root after ${p.name} from the cache`, Date.now() - t0);
          }
        }
        if (resume < 0) {
          display.stage('base', baseSrc.describe);
          const r = await layBase(ir.base, baseSrc, root, {
            cache,
            run: { log: baseLog },
            onWait: () => display.info('waiting for another build laying down the same base'),
            onCorrupt: (message) => display.warn(message),
          });
          const unmet = opts.checkBase?.(root);
          if (unmet !== undefined) throw new BuildError(`${where(ir.base.loc) ? `${where(ir.base.loc)} - ` : ''}${unmet}`);
          // A base laid down just now has a checksum now: the phases after it are keyed from it.
          keys = keysFrom();
          summary.base = { source: baseSrc.describe, cached: r.cached, ms: Date.now() - t0, ...(baseSrc.key ? { key: baseSrc.key } : {}) };
          display.stageDone('base', r.cached ? `${baseSrc.describe}: from the cache` : baseSrc.describe, Date.now() - t0);
        }
      } finally {
        baseLog.close();
      }
      session.check();

      const runner = runners[opts.target];
      const staged: ArtifactRecord[] = [];
      let verifyResult: VerifyResult | undefined;
      let wantChecksums = false;
      const reuseState: ReuseState = { version: 1, artifacts: {} };
      const previous = readReuseState(outDir);

      const ctxFor = (phase: Phase, log: StageLog): PhaseContext => ({
        ir,
        phase,
        stem: phaseStem(ir, phase, files),
        root,
        compiledDir,
        files,
        log,
        display,
        session,
        mounts,
        passthrough: (line) => display.line(line),
        sensitive,
      });

      for (let i = 0; i < ir.phases.length; i++) {
        const phase = ir.phases[i]!;
        const kind = phaseKind(phase);
        const stem = phaseStem(ir, phase, files);
        const ps: PhaseSummary = { name: phase.name, kind, cached: false, ms: 0, steps: [] };
        summary.phases.push(ps);
        if (i <= resume) {
          ps.cached = true;
          display.line(`${display.live ? '\u001b[32m✓\u001b[0m' : '✓'} ${phase.name}  cached`);
          continue;
        }
        const t = Date.now();
        const log = new StageLog(logsDir, stem);
        const ctx = ctxFor(phase, log);
        if (runsInRoot(phase)) rootIs = undefined;
        try {
          if (kind === 'root') {
            display.phaseStart(phase.name, targetSteps(phase).length + (runner.separateHooks ? 0 : phase.pre.length + phase.post.length));
            await runner.runHooks(ctx, 'pre');
            const out = await runner.runSteps(ctx);
            await runner.runHooks(ctx, 'post');
            Object.assign(ps, { steps: out.steps, changed: out.changed, ...(out.recap ? { recap: out.recap } : {}) });
            display.phaseDone(`${out.steps.length} steps, ${out.changed} changed${out.recap ? ` (ansible recap: changed=${out.recap.changed})` : ''}`);
            session.check();
            const key = keys.get(phase);
            if (key) {
              const tc = Date.now();
              display.stage(phase.name, 'caching the root');
              rootIs = { key, id: await cache.store('phase', key, root, { image: ir.name, phase: phase.name, target: opts.target }, { log }) };
              display.stageDone(phase.name, 'cached the root', Date.now() - tc);
            }
          } else if (kind === 'artifact') {
            const steps = phase.steps.filter((s): s is StepOf<'artifact'> => s.kind === 'artifact');
            const cloud = phase.steps.filter((s): s is StepOf<'cloudImage'> => s.kind === 'cloudImage');
            const took = new Map<string, number>();
            display.phaseStart(phase.name, steps.length);
            if (runner.separateHooks) await runner.runHooks(ctx, 'pre');
            else await runner.runSteps(ctx); // the play holds this phase's hooks only
            const { records: done, state } = await makeArtifacts(steps, {
              root,
              image: ir.name,
              ...(sourceDateEpoch(env) !== undefined ? { epoch: sourceDateEpoch(env)! } : {}),
              ...(rootIs ? { rootId: rootIs.id } : {}),
              ...(previous ? { previous: { dir: outDir, state: previous } } : {}),
              staging,
              run: { log },
              onStart: (s) => display.stepStart(`${s.id} ${s.format} ${s.output}`),
              onDone: (rec, ms) => {
                took.set(rec.step, ms);
                display.stepEnd(`${rec.step} ${rec.format} ${rec.output}${rec.reused ? ': unchanged, kept from the last build' : ''}`, rec.reused ? 'unchanged' : 'changed');
              },
            });
            // Raw images are made first (a qcow2 converts one); records keep the definition's order.
            for (const rec of done) {
              summary.artifacts.push({ ...rec, ms: took.get(rec.step) ?? 0 });
              ps.steps.push({ id: rec.step, status: rec.reused ? 'unchanged' : 'changed', ms: took.get(rec.step) ?? 0 });
            }
            staged.push(...done);
            Object.assign(reuseState.artifacts, state.artifacts);
            if (runner.separateHooks) await runner.runHooks(ctx, 'post');
            ps.notes = cloud.map((c) => `${c.id}: cloudImage '${c.name}' (${c.builder}) is Packer's: skipped (imgc compile --target packer)`);
            for (const n of ps.notes) display.info(n);
            display.phaseDone(`${done.length} artifact${done.length === 1 ? '' : 's'}`);
          } else {
            const checks = phase.steps.filter((s): s is StepOf<'verify'> => s.kind === 'verify');
            display.phaseStart(phase.name, targetSteps(phase).length + checks.length);
            if (runner.separateHooks) await runner.runHooks(ctx, 'pre');
            const out = await runner.runSteps(ctx);
            ps.steps.push(...out.steps);
            for (const c of checks) {
              const tc = Date.now();
              display.stepStart(`${c.id} ${c.check}`);
              if (c.check === 'boot') {
                const r = await bootVerify(c, { ir, staged, staging, logsDir, outDir, display, session, env, started, where: { dir: opts.definitionDir, cwd } });
                summary.boot = r.summary;
                if (!r.ok) {
                  ps.steps.push({ id: c.id, status: 'failed', ms: Date.now() - tc });
                  throw new BuildError(r.message);
                }
              } else if (c.check === 'facts') {
                verifyResult = verifyRoot(withValues(ir, sensitive), root);
                const text = formatVerify(verifyResult, { dir: opts.definitionDir, cwd });
                writeFileSync(path.join(logsDir, 'verify.txt'), redact(text));
                summary.verify = { checked: verifyResult.checked, failed: verifyResult.failures.length, ms: Date.now() - tc };
                if (verifyResult.failures.length) {
                  display.stepEnd(`${c.id} facts`, 'failed');
                  display.line(text.trimEnd());
                  ps.steps.push({ id: c.id, status: 'failed', ms: Date.now() - tc });
                  throw new BuildError(`${verifyResult.failures.length} of ${verifyResult.checked} facts do not hold in the built root (logs/verify.txt); no artifact was published`);
                }
                display.stepEnd(`${c.id} facts: ${verifyResult.checked} hold`, 'unchanged');
              } else {
                if (c.check === 'checksums') wantChecksums = true;
                display.stepEnd(`${c.id} ${c.check}`, 'unchanged');
              }
              ps.steps.push({ id: c.id, status: 'unchanged', ms: Date.now() - tc });
            }
            if (runner.separateHooks) await runner.runHooks(ctx, 'post');
            display.phaseDone(`${ps.steps.length} checks`);
          }
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
      if (!ir.phases.some((p) => p.steps.some((s) => s.kind === 'verify' && s.check === 'facts'))) {
        display.info('facts not verified: the definition has no verify facts() step (imgc verify --root can check them)');
      }

      // Publish: manifest and checksums beside the artifacts, then everything into place.
      if (staged.length) {
        // SOURCE_DATE_EPOCH: the manifest and SBOM say when the sources were, so two builds of them are the same bytes.
        const epoch = sourceDateEpoch(env);
        const created = new Date(epoch !== undefined ? epoch * 1000 : Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
        const manifest = {
          image: ir.name,
          target: opts.target,
          definition: { source: ir.source, sha256: sha256(irToJson(ir)) },
          base: { name: ir.base.name, suite: ir.base.suite, variant: ir.base.variant, include: ir.base.include, source: baseSrc.describe, ...(baseSrc.kind === 'debootstrap' ? { mirror: baseSrc.mirror.uri, arch: baseSrc.arch } : {}) },
          artifacts: staged.map((a) => ({ output: a.output, format: a.format, sha256: a.sha256, bytes: a.bytes, ...(a.compression ? { compression: a.compression } : {}), ...(a.size ? { size: a.size } : {}), step: a.step })),
          facts: finalFacts(ir),
          verify: verifyResult ? { checked: verifyResult.checked, failed: verifyResult.failures.length } : null,
          skipped: summary.phases.flatMap((p) => p.notes ?? []),
          sbom: 'sbom.spdx.json',
          created,
        };
        writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
        const sbom = spdxOfRoot({ image: ir.name, distro: ir.base.distro, created, id: manifest.definition.sha256, root });
        writeFileSync(path.join(staging, 'sbom.spdx.json'), `${JSON.stringify(sbom, null, 2)}\n`);
        // Artifacts kept from the last build are in place already.
        const outputs = [...staged.filter((a) => !a.reused).map((a) => a.output), 'manifest.json', 'sbom.spdx.json'];
        if (Object.keys(reuseState.artifacts).length) {
          writeFileSync(path.join(staging, REUSE_STATE), `${JSON.stringify(reuseState)}\n`);
          outputs.push(REUSE_STATE);
        } else rmSync(path.join(outDir, REUSE_STATE), { force: true });
        if (wantChecksums) {
          writeFileSync(path.join(staging, 'SHA256SUMS'), sha256sums(staged));
          outputs.push('SHA256SUMS');
        }
        await publish(staging, outDir, outputs);
        display.info(`${staged.length} artifact${staged.length === 1 ? '' : 's'} in ${path.relative(cwd, outDir) || '.'}: ${staged.map((a) => a.output).join(', ')}, manifest.json, sbom.spdx.json${wantChecksums ? ', SHA256SUMS' : ''}`);
      }
      summary.ok = true;
      return 0;
    });
  } catch (e) {
    display.clearStatus();
    // A command killed by the interrupt fails too: the interrupt is the cause.
    const signal = e instanceof Interrupted ? e.signal : session.interrupted;
    if (signal) {
      summary.error = `interrupted by ${signal}`;
      const left = workDir ? mountsUnder(workDir) : [];
      display.line(`imgc: interrupted by ${signal}; ${left.length ? `STILL MOUNTED: ${left.join(', ')}` : 'nothing is left mounted'}, no artifact was published`);
      exitCode = signal === 'SIGINT' ? 130 : 143;
    } else if (e instanceof PhaseFailed) {
      const step = e.stepId ? ir.phases.flatMap((p) => [...p.pre, ...p.steps, ...p.post]).find((s) => s.id === e.stepId) : undefined;
      const at = where(step?.loc);
      const lines = [
        `${at ? `${at} - ` : ''}${e.message}`,
        `  log: ${path.relative(cwd, e.logFile)}`,
        ...e.output.trimEnd().split('\n').filter((l) => !/^imgc-(step|phase) /.test(l)).slice(-12).map((l) => `  | ${l}`),
      ];
      exitCode = fail(lines.join('\n')).exitCode;
    } else if (e instanceof BuildError || e instanceof CommandError || (e as Error).name === 'BaseError' || (e as Error).name === 'MirrorError' || (e as Error).name === 'MountError') {
      exitCode = fail((e as Error).message).exitCode;
    } else {
      writeSummary();
      throw e;
    }
  } finally {
    writeSummary();
  }
  if (exitCode === 0) {
    const t = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
    const parts = [`base ${t(summary.base.ms)}${summary.base.cached ? ' (cache)' : ''}`, ...summary.phases.map((p) => `${p.name} ${p.cached ? 'cached' : t(p.ms)}`)];
    display.info(`built ${ir.name} with ${opts.target} in ${t(Date.now() - started)}: ${parts.join(', ')}`);
  }
  return { exitCode, summary };
};
