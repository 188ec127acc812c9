// `imgc build --format json`: the build as a stream of JSON lines on stdout,
// one event each, instead of the human display. The events come from the
// same calls the human display gets (./display.ts), so both report the same
// build; the schema below is published by `imgc schema --build-events`.
import path from 'node:path';
import type { ArtifactRecord } from './artifacts.js';
import { Display, type Io } from './display.js';
import type { StepStatus } from './progress.js';
import { redact } from './secrets.js';
import type { BuildSummary } from './summary.js';
import { z } from '../util/zod.js';

const StepStatusSchema = z.enum(['changed', 'unchanged', 'failed', 'skipped']);
/** Milliseconds since the build started: every event has it. */
const common = { t: z.number().int().nonnegative() };

const StepRecordSchema = z.object({ id: z.string(), status: StepStatusSchema, ms: z.number() });
const ArtifactSchema = z.object({
  step: z.string(),
  format: z.enum(['dir', 'tar', 'ext4', 'raw', 'qcow2']),
  output: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
  reused: z.boolean(),
  ms: z.number(),
});

export const BuildEvent = z.discriminatedUnion('event', [
  /** `out`: the output directory, where the artifacts' `output`s are. */
  z.object({ event: z.literal('build-start'), ...common, image: z.string(), target: z.enum(['shell', 'ansible']), out: z.string() }).strict(),
  /** A stage that is not a phase of steps: laying the base down, caching the root. */
  z.object({ event: z.literal('stage-start'), ...common, stage: z.string(), what: z.string() }).strict(),
  z.object({ event: z.literal('stage-end'), ...common, stage: z.string(), what: z.string(), ms: z.number() }).strict(),
  z.object({ event: z.literal('phase-start'), ...common, phase: z.string(), steps: z.number().int().nonnegative() }).strict(),
  /** A root phase whose result came from the cache: no steps ran. `waitedMs`: another build made it while this one waited for its lock. */
  z.object({ event: z.literal('phase-cached'), ...common, phase: z.string(), waitedMs: z.number().optional() }).strict(),
  z.object({ event: z.literal('phase-end'), ...common, phase: z.string(), ok: z.boolean(), summary: z.string(), ms: z.number() }).strict(),
  /** `detail`: what the step does, when the build says (artifacts: format and output; checks: their kind). */
  z.object({ event: z.literal('step-start'), ...common, phase: z.string(), step: z.string(), detail: z.string().optional() }).strict(),
  z.object({ event: z.literal('step-end'), ...common, phase: z.string(), step: z.string(), detail: z.string().optional(), status: StepStatusSchema, ms: z.number() }).strict(),
  /** An artifact made (or kept from the last build: `reused`); `path`: where it will be once the build succeeds (it is staged until then). */
  z.object({ event: z.literal('artifact'), ...common, ...ArtifactSchema.shape, path: z.string() }).strict(),
  /** What the human display prints as a line: notes, warnings, hook output, errors. */
  z.object({ event: z.literal('message'), ...common, level: z.enum(['info', 'warn', 'output']), text: z.string() }).strict(),
  /** The facts checked in the built root, and the boot check when the definition has v.boot(). */
  z
    .object({
      event: z.literal('verify'),
      ...common,
      facts: z.object({ checked: z.number().int(), failed: z.number().int(), ms: z.number() }).optional(),
      boot: z.object({ disk: z.string(), accel: z.enum(['kvm', 'tcg']), checked: z.number().int(), failed: z.number().int(), bootMs: z.number(), sinceStartMs: z.number() }).optional(),
    })
    .strict(),
  /** The last event: what logs/build.json holds, and the exit code. */
  z
    .object({
      event: z.literal('summary'),
      ...common,
      ok: z.boolean(),
      exitCode: z.number().int(),
      image: z.string(),
      target: z.string(),
      error: z.string().optional(),
      phases: z.array(z.object({ name: z.string(), kind: z.enum(['root', 'artifact', 'verify']), cached: z.boolean(), ms: z.number(), changed: z.number().optional(), steps: z.array(StepRecordSchema) }).passthrough()),
      artifacts: z.array(ArtifactSchema.partial({ reused: true }).passthrough()),
      logs: z.string().optional(),
      totalMs: z.number(),
    })
    .passthrough(),
]);

export type BuildEvent = z.infer<typeof BuildEvent>;

/** The build events' JSON Schema (draft 2020-12): one object per line of `imgc build --format json`. */
export const buildEventsJsonSchema = (): Record<string, unknown> => ({
  ...z.toJSONSchema(BuildEvent, { target: 'draft-2020-12' }),
  $id: 'https://imgc.dev/schema/build-events-v1.json',
  title: 'imgc build event (one per line of imgc build --format json)',
});

type Payload<E extends BuildEvent['event']> = Omit<Extract<BuildEvent, { event: E }>, 'event' | 't'>;

/** "artifact.1.artifact tar rootfs.tar.zst" → the step id and what the display adds to it. */
const splitStep = (text: string): { step: string; detail?: string } => {
  const [step = '', ...rest] = text.split(' ');
  return rest.length ? { step, detail: rest.join(' ') } : { step };
};

/** The display for `--format json`: the same calls, as events on stdout. */
export class JsonDisplay extends Display {
  private readonly started = Date.now();
  private phaseName = '';
  private phaseStarted = 0;
  private stepStarted = 0;

  private readonly out: string;

  constructor(
    private readonly sink: Io,
    start: Payload<'build-start'>,
  ) {
    super({ ...sink, isTTY: false });
    this.out = start.out;
    this.emit('build-start', start);
  }

  emit<E extends BuildEvent['event']>(event: E, payload: Payload<E>): void {
    const line = JSON.stringify({ event, t: Date.now() - this.started, ...payload }, (_k, v: unknown) => (typeof v === 'string' ? redact(v) : v));
    this.sink.out(`${line}\n`);
  }

  override line(text: string): void {
    this.emit('message', { level: 'output', text });
  }
  override status(): void {}
  override clearStatus(): void {}
  override info(text: string): void {
    this.emit('message', { level: 'info', text });
  }
  override warn(text: string): void {
    this.emit('message', { level: 'warn', text });
  }
  override stage(stage: string, what: string): void {
    this.emit('stage-start', { stage, what });
  }
  override stageDone(stage: string, what: string, ms: number): void {
    this.emit('stage-end', { stage, what, ms });
  }
  override phaseStart(phase: string, steps: number): void {
    this.phaseName = phase;
    this.phaseStarted = Date.now();
    this.emit('phase-start', { phase, steps });
  }
  override phaseCached(phase: string, waitedMs = 0): void {
    this.emit('phase-cached', { phase, ...(waitedMs ? { waitedMs } : {}) });
  }
  override stepStart(text: string): void {
    this.stepStarted = Date.now();
    this.emit('step-start', { phase: this.phaseName, ...splitStep(text) });
  }
  override stepEnd(text: string, status: StepStatus): void {
    this.emit('step-end', { phase: this.phaseName, ...splitStep(text), status, ms: Date.now() - this.stepStarted });
  }
  override artifact(rec: ArtifactRecord, ms: number): void {
    this.emit('artifact', { step: rec.step, format: rec.format, output: rec.output, sha256: rec.sha256, bytes: rec.bytes, reused: rec.reused ?? false, ms, path: path.join(this.out, rec.output) });
  }
  override phaseDone(summary: string, ok = true): void {
    this.emit('phase-end', { phase: this.phaseName, ok, summary, ms: Date.now() - this.phaseStarted });
  }

  /** The build's end: its checks, then the summary (the last line). */
  finish(summary: BuildSummary, exitCode: number): void {
    if (summary.verify || summary.boot) this.emit('verify', { ...(summary.verify ? { facts: summary.verify } : {}), ...(summary.boot ? { boot: summary.boot } : {}) });
    const { image, target, ok, phases, artifacts, totalMs, ...rest } = summary;
    this.emit('summary', { ...rest, ok, exitCode, image, target, phases, artifacts, totalMs });
  }
}
