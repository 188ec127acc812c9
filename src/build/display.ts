// What `imgc build` shows while it runs. On a terminal (and not CI=true) the
// current phase and step are one line rewritten in place with ANSI; elsewhere
// every finished step is one plain line, so CI logs read top to bottom.
import type { ArtifactRecord } from './artifacts.js';
import type { BuildSummary } from './summary.js';
import type { StepStatus } from './progress.js';
import { redact } from './secrets.js';

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  isTTY: boolean;
}

export const isLive = (io: Io, env: NodeJS.ProcessEnv = process.env): boolean =>
  io.isTTY && env['CI'] !== 'true' && env['CI'] !== '1' && env['TERM'] !== 'dumb';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

const mark: Record<StepStatus, string> = { changed: 'changed', unchanged: 'ok', failed: 'FAILED', skipped: 'skipped' };

export class Display {
  private current = '';
  private phase: { name: string; total: number; done: number; started: number } | undefined;
  readonly live: boolean;

  constructor(
    private readonly io: Io,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.live = isLive(io, env);
  }

  private paint(code: string, s: string) {
    return this.live && !process.env['NO_COLOR'] ? `\u001b[${code}m${s}\u001b[0m` : s;
  }

  private redraw(): void {
    if (this.live) this.io.out(`\r\u001b[2K${this.current}`);
  }

  /** A permanent line; on a terminal it goes above the live line. */
  line(text: string): void {
    if (this.live && this.current) this.io.out('\r\u001b[2K');
    this.io.out(`${redact(text)}\n`);
    if (this.live && this.current) this.redraw();
  }

  /** Sets the live line (terminal only). */
  status(text: string): void {
    if (!this.live) return;
    this.current = redact(text);
    this.redraw();
  }

  clearStatus(): void {
    if (this.live && this.current) this.io.out('\r\u001b[2K');
    this.current = '';
  }

  info(text: string): void {
    this.line(`${this.paint('90', 'imgc:')} ${text}`);
  }

  warn(text: string): void {
    this.line(`${this.paint('33', 'warning:')} ${text}`);
  }

  /** A stage that is not a phase of steps (base, artifacts…): a live line, then a done line. */
  stage(name: string, what: string): void {
    this.status(`${this.paint('36', '▸')} ${name}  ${what}`);
    if (!this.live) this.line(`${name}: ${what}`);
  }

  stageDone(name: string, what: string, ms: number): void {
    this.clearStatus();
    this.line(`${this.paint('32', '✓')} ${name}  ${what} ${this.paint('90', `(${seconds(ms)})`)}`);
  }

  phaseStart(name: string, total: number, note = ''): void {
    this.phase = { name, total, done: 0, started: Date.now() };
    if (!this.live) this.line(`${name}: ${total} step${total === 1 ? '' : 's'}${note ? ` ${note}` : ''}`);
    this.status(`${this.paint('36', '▸')} ${name}  0/${total}${note ? ` ${note}` : ''}`);
  }

  stepStart(id: string): void {
    const p = this.phase;
    if (!p) return;
    this.status(`${this.paint('36', '▸')} ${p.name}  ${Math.min(p.done + 1, p.total)}/${p.total}  ${id}`);
  }

  stepEnd(id: string, status: StepStatus): void {
    const p = this.phase;
    if (!p) return;
    p.done++;
    if (status === 'failed') {
      this.line(`  ${this.paint('31', '✗')} ${id} failed`);
    } else if (!this.live) {
      this.line(`  [${p.done}/${p.total}] ${id} ${mark[status]}`);
    }
    this.status(`${this.paint('36', '▸')} ${p.name}  ${p.done}/${p.total}  ${id} ${mark[status]}`);
  }

  /** A root phase restored from the cache; `waitedMs`: made by another build while this one waited. */
  phaseCached(name: string, waitedMs = 0): void {
    this.line(`${this.paint('32', '✓')} ${name}  cached${waitedMs ? ` (made by another build meanwhile; waited ${seconds(waitedMs)})` : ''}`);
  }

  /** An artifact is made: the step's end line says so already (events: ./events.ts). */
  artifact(_rec: ArtifactRecord, _ms: number): void {}

  /** The build is over (events: ./events.ts). */
  finish(_summary: BuildSummary, _exitCode: number): void {}

  phaseDone(summary: string, ok = true): void {
    const p = this.phase;
    this.clearStatus();
    if (p) this.line(`${ok ? this.paint('32', '✓') : this.paint('31', '✗')} ${p.name}  ${summary} ${this.paint('90', `(${seconds(Date.now() - p.started)})`)}`);
    this.phase = undefined;
  }
}
