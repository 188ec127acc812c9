// Runs one phase of a compiled definition on a root directory: the shell
// target's phase script inside the root with chroot (in parts around the
// plays of the steps it applies from the build machine, an Ansible role's,
// as build.sh does), or the ansible target's play through ansible-playbook's
// chroot connection. Hooks run at their
// place: the shell target's hook scripts on this machine (they chroot
// themselves for script hooks), the ansible target's inside its play.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { runsUnder } from '../core/conditions.js';
import path from 'node:path';
import type { CompiledFiles } from '../compilers/types.js';
import type { Image, Phase, Step } from '../ir/schema.js';
import { chrootEnv, placeScript, prepareRoot } from './chroot.js';
import type { Display } from './display.js';
import { CommandError, run } from '../host/exec.js';
import type { StageLog } from './logs.js';
import type { RootMounts } from './mounts.js';
import { HELPERS_FILE } from '../compilers/shell/phase.js';
import { packageManagers } from '../steps/package-managers.js';
import { stepsNeedMounts, stepsNeedNetwork, targetSteps } from './phases.js';
import { chrootPlayArgs, inParts, phasePieces, pieceFile } from '../compilers/shell/plays.js';
import { ANSIBLE_JSON_CALLBACK, AnsibleProgress, parseShellLine, type ProgressEvent } from './progress.js';
import { variableEnv, variableValues, type SensitiveValues } from './secrets.js';
import { substitute, variablesIn } from '../core/variables.js';
import { kindOf } from '../steps/index.js';
import { stageDownloads, StepDownloadError, type StepDownload } from './downloads.js';
import type { Session } from './session.js';
import type { PhaseOutcome, Recap, StepRecord } from './summary.js';

export interface PhaseContext {
  ir: Image;
  phase: Phase;
  /** "01-customize": the compiled files' and the logs' name for the phase. */
  stem: string;
  root: string;
  /** Where the compiled files are on disk (hooks and playbooks run from here). */
  compiledDir: string;
  files: CompiledFiles;
  log: StageLog;
  display: Display;
  session: Session;
  mounts: RootMounts;
  /** Lines hooks print on stdout (event hooks) go to the user's stdout. */
  passthrough: (line: string) => void;
  /** The values of the image's sensitive variables (./secrets.ts). */
  sensitive: SensitiveValues;
  /** SOURCE_DATE_EPOCH, passed to the steps: the tools that honor it (useradd, …) then write no time of the build. */
  epoch?: number;
}

/** A step, hook or phase command that failed; names the step and its log. */
export class PhaseFailed extends Error {
  constructor(
    readonly phase: string,
    readonly stepId: string | undefined,
    readonly exitCode: number | undefined,
    readonly logFile: string,
    readonly output: string,
    /** The steps that had finished (the failed one included), for the summary. */
    readonly steps: StepRecord[] = [],
  ) {
    super(`phase ${phase}: ${stepId ? `step ${stepId} failed` : 'failed'}${exitCode !== undefined ? ` (exit ${exitCode})` : ''}`);
    this.name = 'PhaseFailed';
  }
}

/** Turns progress events into the display, per-step logs and records. */
class StepTracker {
  readonly records: StepRecord[] = [];
  current: string | undefined;
  failed: string | undefined;
  private started = 0;
  phaseChanged: number | undefined;
  recap: Recap | undefined;

  constructor(private readonly ctx: PhaseContext) {}

  on(e: ProgressEvent): void {
    switch (e.type) {
      case 'start':
        this.current = e.step;
        this.started = Date.now();
        this.ctx.log.stepStart(e.step);
        this.ctx.display.stepStart(e.step);
        break;
      case 'end':
        this.ctx.log.stepEnd();
        if (e.status === 'failed') this.failed = e.step;
        this.records.push({ id: e.step, status: e.status, ms: this.current === e.step ? Date.now() - this.started : 0 });
        this.ctx.display.stepEnd(e.step, e.status);
        this.current = undefined;
        break;
      case 'phase-done':
        this.phaseChanged = e.changed;
        break;
      case 'recap':
        this.recap = { ok: e.ok, changed: e.changed, failed: e.failed, unreachable: e.unreachable };
        break;
    }
  }

  outcome(): PhaseOutcome {
    return {
      steps: this.records,
      changed: this.phaseChanged ?? this.recap?.changed ?? this.records.filter((r) => r.status === 'changed').length,
      ...(this.recap ? { recap: this.recap } : {}),
    };
  }
}

const findFile = (files: CompiledFiles, re: RegExp): string | undefined => Object.keys(files).sort().find((k) => re.test(k));
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** "01-customize" for the phase, from the compiled files when they name it, else from its position. */
export const phaseStem = (ir: Image, phase: Phase, files: CompiledFiles): string => {
  const hit = findFile(files, new RegExp(`^(?:phases|hooks)/(\\d+-${escapeRe(phase.name)})(?:-pre|-post)?\\.sh$`));
  if (hit) return /(\d+-[a-z0-9-]+?)(?:-pre|-post)?\.sh$/.exec(hit)![1]!;
  const width = Math.max(2, String(ir.phases.length).length);
  return `${String(ir.phases.indexOf(phase) + 1).padStart(width, '0')}-${phase.name}`;
};

/** SOURCE_DATE_EPOCH for the commands run in the root, when the build has one. */
const epochEnv = (ctx: PhaseContext): Record<string, string> => (ctx.epoch !== undefined ? { SOURCE_DATE_EPOCH: String(ctx.epoch) } : {});

/** Runs `body` with the kernel filesystems mounted if `need`, and always unmounted after. */
const withMounts = async <T>(ctx: PhaseContext, need: boolean, body: () => Promise<T>): Promise<T> => {
  if (!need) return body();
  const release = ctx.session.defer(`unmount ${ctx.root}`, () => {
    const left = ctx.mounts.unmountAll((l) => ctx.log.line(`imgc: ${l}`));
    if (left.length) ctx.display.warn(`still mounted: ${left.join(', ')}`);
  });
  ctx.mounts.mount((l) => ctx.log.line(`imgc: ${l}`));
  try {
    return await body();
  } finally {
    release();
  }
};

/** Runs `body` with services blocked and, if `network`, the host's resolver in the root. */
const withPreparedRoot = async <T>(ctx: PhaseContext, network: boolean, body: () => Promise<T>): Promise<T> => {
  const restore = prepareRoot(ctx.session, ctx.root, { network, log: (l) => ctx.log.line(`imgc: ${l}`) });
  try {
    return await body();
  } finally {
    restore();
  }
};

export interface TargetRunner {
  readonly target: 'shell' | 'ansible';
  /** The target's hooks run apart from its steps (shell) rather than inside its play (ansible). */
  readonly separateHooks: boolean;
  /** `failed`: the phase's steps failed with this message (post hooks say result failed). */
  runHooks(ctx: PhaseContext, when: 'pre' | 'post', failed?: string): Promise<void>;
  runSteps(ctx: PhaseContext): Promise<PhaseOutcome>;
}

const failure = (ctx: PhaseContext, e: unknown, step: string | undefined, steps: StepRecord[] = []): PhaseFailed => {
  const exit = e instanceof CommandError ? e.exitCode : undefined;
  const output = e instanceof CommandError ? e.output : String((e as Error).message ?? e);
  return new PhaseFailed(ctx.phase.name, step, exit, (step && ctx.log.stepFiles.get(step)) || ctx.log.file, output, steps);
};

/** The files `steps` fetch, their URLs and sums with the variables' values in place. */
const downloadsOf = (ctx: PhaseContext, steps: readonly Step[]): StepDownload[] => {
  const values = variableValues(ctx.ir, ctx.sensitive);
  // A step its conditions do not take fetches nothing (conditions name no sensitive variable: `values` decides them).
  return steps
    .filter((s) => runsUnder(s.conditions, values))
    .flatMap((s) => (kindOf(s).downloads?.(s) ?? []).map((d) => ({ step: s.id, url: substitute(d.url, values), sha256: substitute(d.sha256, values) })));
};

/** Fetches the phase's downloads on this machine (through the cache) and hands them to the root: no network inside it for them. */
const stage = async (ctx: PhaseContext, steps: readonly Step[]) => {
  const wanted = downloadsOf(ctx, steps);
  for (const d of wanted) ctx.log.line(`imgc: download ${d.url} (sha256 ${d.sha256}) for step ${d.step}`);
  try {
    return await stageDownloads(wanted, ctx.root);
  } catch (e) {
    if (e instanceof StepDownloadError) {
      ctx.display.stepStart(e.step);
      ctx.display.stepEnd(e.step, 'failed');
      throw new PhaseFailed(ctx.phase.name, e.step, undefined, ctx.log.file, `imgc: ${e.message}`, [{ id: e.step, status: 'failed', ms: 0 }]);
    }
    throw e;
  }
};

/** The shell target's hook script for `when`, on this machine; `failed`: the message of the phase's failure. */
const runShellHooks = async (ctx: PhaseContext, when: 'pre' | 'post', failed?: string): Promise<void> => {
  const hooks = when === 'pre' ? ctx.phase.pre : ctx.phase.post;
  const rel = `hooks/${ctx.stem}-${when}.sh`;
  if (!hooks.length || !(rel in ctx.files)) return;
  let failedHook: string | undefined;
  const need = stepsNeedMounts(hooks);
  await withPreparedRoot(ctx, stepsNeedNetwork(hooks), () =>
    withMounts(ctx, need, async () => {
      ctx.log.line(`imgc: ${when} hooks (${rel})${failed === undefined ? '' : ', result failed'}`);
      try {
        await run('/bin/sh', [path.join(ctx.compiledDir, rel)], {
          cwd: ctx.compiledDir,
          // The outcome post hooks send (src/compilers/shell/hooks.ts), set either way: none comes from imgc's environment.
          env: { ...variableEnv(ctx.ir, hooks, ctx.sensitive), IMGC_ROOT: ctx.root, IMGC_RESULT: failed === undefined ? 'ok' : 'failed', IMGC_MESSAGE: failed ?? '' },
          log: ctx.log,
          onLine: (line, stream) => {
            // Events on stdout, and a warn-policy webhook's warning on stderr, are for the person watching.
            if (stream === 'stdout' || /^imgc: warning: /.test(line)) ctx.passthrough(line);
            const m = /^imgc: hook (\S+) failed/.exec(line);
            if (m) failedHook = m[1];
          },
        });
      } catch (e) {
        throw failure(ctx, e, failedHook);
      }
    }),
  );
};

/** The shell target's phase script `rel` (or a part of it, running `steps`) in the root with chroot. */
const runScript = async (ctx: PhaseContext, rel: string, steps: readonly Step[], tracker: StepTracker): Promise<void> => {
  const script = ctx.files[rel];
  const helpers = ctx.files[`phases/${HELPERS_FILE}`];
  if (script === undefined || helpers === undefined)
    throw new PhaseFailed(ctx.phase.name, undefined, undefined, ctx.log.file, `the shell target emitted no ${script === undefined ? rel : `phases/${HELPERS_FILE}`}`);
  const staged = await stage(ctx, steps);
  const unstage = ctx.session.defer(`remove ${staged.dir}`, staged.remove);
  try {
    await withPreparedRoot(ctx, stepsNeedNetwork(steps), () =>
      withMounts(ctx, stepsNeedMounts(steps), async () => {
        // helpers.sh first: it makes /run/imgc, so removing it last takes the directory away.
        const lib = placeScript(ctx.root, '/run/imgc', HELPERS_FILE, helpers);
        const placed = placeScript(ctx.root, '/run/imgc', path.posix.basename(rel), script);
        const remove = ctx.session.defer(`remove ${placed.inRoot}`, () => {
          placed.remove();
          lib.remove();
        });
        try {
          await run('chroot', [ctx.root, '/bin/sh', placed.inRoot], {
            env: chrootEnv({ ...variableEnv(ctx.ir, steps, ctx.sensitive), IMGC_DOWNLOADS: staged.dir, ...epochEnv(ctx) }),
            extendEnv: false,
            log: ctx.log,
            onLine: (line, stream) => {
              if (stream !== 'stdout') return;
              const ev = parseShellLine(line);
              if (ev) tracker.on(ev);
            },
          });
        } catch (e) {
          throw failure(ctx, e, tracker.failed ?? tracker.current, tracker.records);
        } finally {
          ctx.log.stepEnd();
          remove();
        }
      }),
    );
  } finally {
    unstage();
  }
};

/**
 * A step the shell target applies from the build machine (an Ansible role):
 * its play, as build.sh runs it, with ansible-playbook's chroot connection.
 * The step is one line of progress: changed when the play changed anything.
 */
const applyPlay = async (ctx: PhaseContext, rel: string, s: Step, tracker: StepTracker): Promise<void> => {
  tracker.on({ type: 'start', step: s.id });
  if (!runsUnder(s.conditions, variableValues(ctx.ir, ctx.sensitive))) return tracker.on({ type: 'end', step: s.id, status: 'skipped' });
  if (ctx.files[rel] === undefined) throw new PhaseFailed(ctx.phase.name, s.id, undefined, ctx.log.file, `the shell target emitted no ${rel}`);
  let recap: Recap | undefined;
  try {
    await ensurePython(ctx);
    await playbook(ctx, [rel], [s], (ev) => {
      if (ev.type === 'recap') recap = { ok: ev.ok, changed: ev.changed, failed: ev.failed, unreachable: ev.unreachable };
    });
  } catch (e) {
    tracker.on({ type: 'end', step: s.id, status: 'failed' });
    throw e instanceof PhaseFailed ? new PhaseFailed(ctx.phase.name, s.id, e.exitCode, e.logFile, e.output, tracker.records) : failure(ctx, e, s.id, tracker.records);
  }
  tracker.on({ type: 'end', step: s.id, status: (recap?.changed ?? 0) > 0 ? 'changed' : 'unchanged' });
};

/** The shell target's phase: its script, or its parts with the plays the build machine applies between them. */
const runShellSteps = async (ctx: PhaseContext): Promise<PhaseOutcome> => {
  const steps = targetSteps(ctx.phase);
  const tracker = new StepTracker(ctx);
  if (!steps.length) return tracker.outcome();
  if (!inParts(steps)) {
    await runScript(ctx, `phases/${ctx.stem}.sh`, steps, tracker);
    return tracker.outcome();
  }
  const pieces = phasePieces(steps);
  for (const [j, piece] of pieces.entries()) {
    const rel = pieceFile(ctx.stem, j + 1, piece);
    if ('part' in piece) await runScript(ctx, rel, piece.part, tracker);
    else await applyPlay(ctx, rel, piece.own, tracker);
  }
  // The parts' own counts leave out the roles: count the phase's steps instead.
  return { ...tracker.outcome(), changed: tracker.records.filter((r) => r.status === 'changed').length };
};

export const shellRunner: TargetRunner = {
  target: 'shell',
  separateHooks: true,
  runHooks: runShellHooks,

  async runSteps(ctx) {
    try {
      return await runShellSteps(ctx);
    } catch (e) {
      // As build.sh does: the post hooks hear of the failure, which stands even when they fail too
      // (not when a signal stops the build).
      if (e instanceof PhaseFailed && !ctx.session.interrupted) {
        await runShellHooks(ctx, 'post', e.message).catch((hookError: unknown) => {
          const why = hookError instanceof PhaseFailed ? hookError.message : String(hookError);
          ctx.log.line(`imgc: the post hooks of failed phase ${ctx.phase.name} failed too: ${why}`);
          ctx.display.warn(`the post hooks of failed phase ${ctx.phase.name} failed too: ${why}`);
        });
      }
      throw e;
    }
  },
};

/**
 * Ansible's temporary directories for one phase: the remote one (an absolute
 * path that must exist in the root and, for hooks delegated to localhost, on
 * this machine: one name per build under /tmp) and the controller's local
 * one, in the work directory. Removed after the phase, on both sides.
 */
const ansibleTemp = (ctx: PhaseContext): { remote: string; local: string; remove: () => void } => {
  const work = path.dirname(ctx.root);
  const remote = `/tmp/.imgc-ansible-${path.basename(work).replace(/[^A-Za-z0-9-]/g, '')}`;
  const local = path.join(work, `ansible-local-${ctx.stem}`);
  ctx.log.line(`imgc: ansible temp: ${remote} (in the root and on this machine), ${local}`);
  return {
    remote,
    local,
    remove: () => {
      for (const dir of [path.join(ctx.root, remote), remote, local]) rmSync(dir, { recursive: true, force: true });
    },
  };
};

/**
 * The sensitive values `steps` use as an extra-vars file (YAML, each string
 * `!unsafe` so Jinja never templates a value), mode 0600 in the work directory
 * beside the root (not in it, not in compiled/), for the run only. Returns the
 * ansible-playbook arguments and the file's removal; none when no value is used.
 */
const sensitiveExtraVars = (ctx: PhaseContext, steps: readonly Step[]): { args: string[]; remove: () => void } => {
  const used = variablesIn(ctx.ir, steps).filter((v) => v.sensitive && ctx.sensitive.has(v.name));
  if (!used.length) return { args: [], remove: () => {} };
  const file = path.join(path.dirname(ctx.root), `extra-vars-${ctx.stem}.yml`);
  const yaml = used.map((v) => {
    const value = ctx.sensitive.get(v.name)!;
    return `${v.name}: ${typeof value === 'string' ? `!unsafe ${JSON.stringify(value)}` : String(value)}\n`;
  });
  writeFileSync(file, yaml.join(''), { mode: 0o600 });
  const remove = ctx.session.defer(`remove ${file}`, () => rmSync(file, { force: true }));
  return { args: ['-e', `@${file}`], remove };
};

/** Whether the root's python3 can run the package manager's modules (the `pythonReady` probe, in the root). */
const pythonReady = async (ctx: PhaseContext, probe: string): Promise<boolean> => {
  if (!['usr/bin/python3', 'bin/python3'].some((p) => existsSync(path.join(ctx.root, p)))) return false;
  try {
    await run('chroot', [ctx.root, '/bin/sh', '-c', `${probe} >/dev/null 2>&1`], { env: chrootEnv(epochEnv(ctx)), extendEnv: false, log: ctx.log });
    return true;
  } catch (e) {
    if (e instanceof CommandError && e.exitCode !== undefined) return false;
    throw e;
  }
};

/**
 * Ansible's chroot connection runs modules with the root's python3, and apt's
 * (package_facts among them) import its binding: install what is missing. A
 * root can have python3 without the binding (cloud-init brings python3).
 */
const ensurePython = async (ctx: PhaseContext): Promise<void> => {
  const pm = packageManagers[ctx.ir.base.packageManager].runner;
  if (await pythonReady(ctx, pm.pythonReady)) return;
  const names = pm.python;
  ctx.display.info(`ansible-playbook: installing ${names.join(', ')} into the root with ${ctx.ir.base.packageManager} (the chroot connection runs its modules with it)`);
  ctx.log.line(`imgc: installing ${names.join(' ')} for the ansible chroot connection`);
  await withPreparedRoot(ctx, true, () =>
    withMounts(ctx, true, async () => {
      await run('chroot', [ctx.root, '/bin/sh', '-c', pm.install(names)], { env: chrootEnv(epochEnv(ctx)), extendEnv: false, log: ctx.log });
    }),
  );
};

/**
 * ansible-playbook with the chroot connection on the root, from the compiled
 * directory: `args` name the playbook (and its options); `steps` are what it
 * runs (mounts, resolver, sensitive values); `on` gets the progress events.
 * A failure is PhaseFailed with the callback's recent lines.
 */
const playbook = async (ctx: PhaseContext, args: readonly string[], steps: readonly Step[], on: (ev: ProgressEvent) => void, tracker?: StepTracker): Promise<void> => {
  const parser = new AnsibleProgress();
  // The callback's events as readable lines: for the log and a failure's message.
  const recent: string[] = [];
  const logLines = (text: string[]) => {
    for (const l of text) ctx.log.line(l);
    recent.push(...text);
    recent.splice(0, Math.max(0, recent.length - 200));
  };
  const temp = ansibleTemp(ctx);
  await withPreparedRoot(ctx, stepsNeedNetwork(steps), () =>
    withMounts(ctx, stepsNeedMounts(steps), async () => {
      const cleanupTmp = ctx.session.defer('remove ansible temp', temp.remove);
      const extra = sensitiveExtraVars(ctx, steps);
      try {
        const all = [...chrootPlayArgs, ...args, ...extra.args];
        // Not run's `log`: the log gets the callback's events as readable lines, written by onLine.
        ctx.log.line(`$ IMGC_ROOT=${ctx.root} ansible-playbook ${all.join(' ')}`);
        await run('ansible-playbook', all, {
          cwd: ctx.compiledDir,
          env: {
            ANSIBLE_NOCOLOR: '1',
            ANSIBLE_FORCE_COLOR: '0',
            ANSIBLE_STDOUT_CALLBACK: ANSIBLE_JSON_CALLBACK,
            ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3',
            ANSIBLE_REMOTE_TEMP: temp.remote,
            ANSIBLE_LOCAL_TEMP: temp.local,
            ANSIBLE_RETRY_FILES_ENABLED: '0',
            ANSIBLE_HOST_KEY_CHECKING: '0',
            ANSIBLE_DEPRECATION_WARNINGS: '0',
            IMGC_ROOT: ctx.root,
            ...epochEnv(ctx),
          },
          onLine: (line, stream) => {
            // Lines that are not the callback's (warnings, a Python error) go to the log as they are.
            const parsed = stream === 'stdout' ? parser.feed(line) : undefined;
            if (!parsed) return logLines([line]);
            for (const ev of parsed.events) on(ev);
            logLines(parsed.text);
          },
        });
        for (const ev of parser.flush()) on(ev);
      } catch (e) {
        for (const ev of parser.flush()) on(ev);
        const records = tracker?.records ?? [];
        throw failure(ctx, e instanceof CommandError && e.exitCode !== undefined ? new CommandError(e.command, e.exitCode, recent.join('\n')) : e, tracker?.failed ?? tracker?.current, records);
      } finally {
        ctx.log.stepEnd();
        extra.remove();
        cleanupTmp();
      }
    }),
  );
};

export const ansibleRunner: TargetRunner = {
  target: 'ansible',
  separateHooks: false,

  async runHooks() {
    // The playbook carries the hooks in each phase's play.
  },

  async runSteps(ctx) {
    const all: Step[] = [...ctx.phase.pre, ...targetSteps(ctx.phase), ...ctx.phase.post];
    const tracker = new StepTracker(ctx);
    if (!all.length) return tracker.outcome();
    const site = findFile(ctx.files, /^site\.ya?ml$/);
    if (!site) throw new PhaseFailed(ctx.phase.name, undefined, undefined, ctx.log.file, 'the ansible target emitted no site.yml');
    await ensurePython(ctx);
    await playbook(ctx, [site, '--tags', ctx.phase.name], all, (ev) => tracker.on(ev), tracker);
    return tracker.outcome();
  },
};

export const runners: Record<'shell' | 'ansible', TargetRunner> = { shell: shellRunner, ansible: ansibleRunner };
