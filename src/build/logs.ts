// Build logs under the output directory's logs/: one file per stage or phase
// (NN-<phase>.log), and one per step (NN-<phase>/<step-id>.log) cut from the
// phase's output along its progress lines.
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { LogSink } from '../host/exec.js';
import { redact } from './secrets.js';

class File implements LogSink {
  private fd: number | undefined;
  constructor(readonly path: string) {
    mkdirSync(path.substring(0, path.lastIndexOf('/')), { recursive: true });
    this.fd = openSync(path, 'a');
  }
  write(text: string): void {
    if (this.fd !== undefined) writeSync(this.fd, text);
  }
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** One stage's log; with `stepStart`/`stepEnd`, lines also go to the current step's own file. */
export class StageLog implements LogSink {
  private readonly main: File;
  private step: File | undefined;
  readonly stepFiles = new Map<string, string>();

  constructor(
    readonly dir: string,
    readonly stem: string,
  ) {
    this.main = new File(path.join(dir, `${stem}.log`));
  }

  get file(): string {
    return this.main.path;
  }

  write(text: string): void {
    const safe = redact(text);
    this.main.write(safe);
    this.step?.write(safe);
  }

  line(text: string): void {
    this.write(`${text}\n`);
  }

  stepStart(id: string): void {
    this.stepEnd();
    const safe = id.replace(/[^A-Za-z0-9._-]/g, '_');
    this.step = new File(path.join(this.dir, this.stem, `${safe}.log`));
    this.stepFiles.set(id, this.step.path);
  }

  stepEnd(): void {
    this.step?.close();
    this.step = undefined;
  }

  close(): void {
    this.stepEnd();
    this.main.close();
  }
}
