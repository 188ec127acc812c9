// The lifetime of one build: a stack of synchronous cleanup actions (unmount,
// restore files in the root, remove temp dirs) run in reverse order on
// success, on failure, on SIGINT/SIGTERM and, as a last resort, on exit.
import { killRunningChildren } from '../host/exec.js';

export class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
    this.name = 'Interrupted';
  }
}

interface Action {
  name: string;
  fn: () => void;
}

export class Session {
  private readonly actions: Action[] = [];
  /** Set once a signal arrived; long loops check it between commands. */
  interrupted: NodeJS.Signals | undefined;

  constructor(private readonly log: (line: string) => void = () => {}) {}

  /** Registers a cleanup action; the returned function runs it now (once) and forgets it. */
  defer(name: string, fn: () => void): () => void {
    const action: Action = { name, fn };
    this.actions.push(action);
    return () => {
      const i = this.actions.indexOf(action);
      if (i < 0) return;
      this.actions.splice(i, 1);
      this.runOne(action);
    };
  }

  private runOne(a: Action): void {
    try {
      a.fn();
    } catch (e) {
      this.log(`cleanup '${a.name}' failed: ${(e as Error).message}`);
    }
  }

  /** Runs every pending action, newest first. */
  cleanup(): void {
    while (this.actions.length) this.runOne(this.actions.pop()!);
  }

  /** Throws Interrupted if a signal arrived. */
  check(): void {
    if (this.interrupted) throw new Interrupted(this.interrupted);
  }

  /**
   * Runs `fn` with SIGINT/SIGTERM handlers installed: the first signal stops
   * the running children and takes the cleanup actions down at once (so
   * nothing stays mounted even if the process is then killed); the build
   * unwinds with Interrupted. A second signal exits immediately.
   */
  async guard<T>(fn: () => Promise<T>): Promise<T> {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.interrupted) {
        this.cleanup();
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
      this.interrupted = signal;
      this.log(`${signal}: stopping and cleaning up`);
      killRunningChildren('SIGTERM');
      setTimeout(() => killRunningChildren('SIGKILL'), 5000).unref();
      this.cleanup();
    };
    const onExit = () => this.cleanup();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('exit', onExit);
    try {
      const r = await fn();
      this.check();
      return r;
    } finally {
      this.cleanup();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('exit', onExit);
    }
  }
}
