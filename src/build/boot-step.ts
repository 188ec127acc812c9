// The build's `v.boot()` step: boots the bootable disk the artifact phase
// staged (src/verify/boot.ts) and fails the build, before anything is
// published, when a runtime fact does not hold. Kept apart from index.ts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Image } from '../ir/schema.js';
import { archInfo, archOf } from '../core/arch.js';
import { isBuildArtifact, isBuildCheck, type BuildCheck } from '../ir/phases.js';
import { formatVerify } from '../verify/index.js';
import { QemuFailed, verifyBoot } from '../verify/boot.js';
import type { ArtifactRecord } from './artifacts.js';
import type { Display } from './display.js';
import type { Session } from './session.js';

/** SOURCE_DATE_EPOCH as a number of seconds, when set (and valid). */
export const sourceDateEpoch = (env: NodeJS.ProcessEnv): number | undefined => {
  const v = env['SOURCE_DATE_EPOCH'];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new Error(`SOURCE_DATE_EPOCH must be a number of seconds (got '${v}')`);
  return Number(v);
};

/** Host tools the definition's bootable disks and boot check need. */
export const bootTools = (ir: Image): string[] => {
  const steps = ir.phases.flatMap((p) => p.steps);
  const bootable = steps.some((s) => isBuildArtifact(s) && s.bootable);
  const boots = steps.some((s) => isBuildCheck(s) && s.check === 'boot');
  return [...(bootable ? ['sfdisk', 'mkfs.fat', 'mmd', 'mcopy', 'truncate'] : []), ...(boots ? [archInfo[archOf(ir.base)].qemuSystem, 'qemu-img', 'debugfs', 'timeout'] : [])];
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

export interface BootStepContext {
  ir: Image;
  staged: readonly ArtifactRecord[];
  staging: string;
  logsDir: string;
  /** The logs directory as messages name it (relative, with a trailing slash). */
  logsText: string;
  outDir: string;
  display: Display;
  session: Session;
  env: NodeJS.ProcessEnv;
  /** When the build started (Date.now()). */
  started: number;
  where: { dir: string; cwd: string };
}

export const bootVerify = async (
  c: BuildCheck,
  ctx: BootStepContext,
): Promise<{ ok: boolean; message: string; summary: { disk: string; accel: 'kvm' | 'tcg'; checked: number; failed: number; bootMs: number; sinceStartMs: number } }> => {
  const disks = ctx.staged.filter((a) => a.bootable && (a.format === 'raw' || a.format === 'qcow2'));
  const disk = c.disk ? disks.find((a) => a.output === c.disk) : disks[0];
  if (!disk) {
    const why = c.disk ? `'${c.disk}' is not a bootable disk artifact of this build` : 'the build made no bootable disk';
    return { ok: false, message: `${c.id} boot: ${why} (a.raw()/a.qcow2() with { bootable: true })`, summary: { disk: c.disk ?? '', accel: 'tcg', checked: 0, failed: 1, bootMs: 0, sinceStartMs: 0 } };
  }
  // Reused artifacts stay in the output directory; new ones are staged.
  const file = path.join(disk.reused ? ctx.outDir : ctx.staging, disk.output);
  const consoleLog = path.join(ctx.logsDir, 'boot-console.log');
  const abort = new AbortController();
  const release = ctx.session.defer('stop the VM', () => abort.abort());
  try {
    const r = await verifyBoot(ctx.ir, file, {
      timeoutSeconds: c.timeoutSeconds ?? 600,
      consoleLog,
      scratch: ctx.staging,
      signal: abort.signal,
      env: ctx.env,
      onInfo: (l) => ctx.display.info(l),
    }).catch((e: unknown) => {
      // QEMU that cannot run, or a disk the check cannot be written into: the boot check failed, said plainly.
      if (e instanceof QemuFailed || (e instanceof Error && /^could not write the check/.test(e.message))) return e;
      throw e;
    });
    ctx.session.check();
    if (r instanceof Error) {
      ctx.display.stepEnd(`${c.id} boot`, 'failed');
      return { ok: false, message: `${c.id} boot: ${r.message} (console: ${ctx.logsText}boot-console.log); no artifact was published`, summary: { disk: disk.output, accel: 'tcg', checked: 0, failed: 1, bootMs: 0, sinceStartMs: Date.now() - ctx.started } };
    }
    const text = formatVerify({ ...r, target: `${disk.output} booted (${r.accel.toUpperCase()})` }, ctx.where);
    writeFileSync(path.join(ctx.logsDir, 'boot.txt'), text);
    const sinceStartMs = Date.now() - ctx.started;
    const summary = { disk: disk.output, accel: r.accel, checked: r.checked, failed: r.failures.length, bootMs: r.bootMs, sinceStartMs };
    if (r.failures.length) {
      ctx.display.stepEnd(`${c.id} boot`, 'failed');
      ctx.display.line(text.trimEnd());
      return { ok: false, message: `${r.failures.length} of ${r.checked} runtime facts do not hold on the booted node (${ctx.logsText}boot.txt, console: ${ctx.logsText}boot-console.log); no artifact was published`, summary };
    }
    ctx.display.stepEnd(`${c.id} boot: ${r.checked} runtime facts hold on the booted node (${r.accel.toUpperCase()}, ${seconds(r.bootMs)} from power-on to power-off)`, 'unchanged');
    ctx.display.info(`boot-verified node ${disk.output} ${seconds(sinceStartMs)} after the build started`);
    return { ok: true, message: '', summary };
  } finally {
    release();
  }
};
