// Work that never outlives imgc. A child process runs in a process group of
// its own, which is killed whole (whatever the child started too) when its
// time is up, when imgc exits, and on Ctrl-C or SIGTERM. A worker thread is
// terminated then, and the processes code in it started are killed with all
// they started.
import { ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { Worker, workerData, type WorkerOptions } from 'node:worker_threads';
import { killAndWait, processTable, signal, sleepSync, type ProcessEntry } from './processes.js';

/** How a bounded child or worker ended; `timedOut`: its time was up and it was stopped. */
export interface Ended {
  code: number | null;
  timedOut: boolean;
}

/** What to stop when imgc exits or is signalled, per live child or worker. */
const live = new Map<object, () => void>();

const killGroup = (child: ChildProcess): void => {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {} // the group is gone already
};

const killAll = () => live.forEach((stop) => stop());

const onSignal = (signal: NodeJS.Signals) => {
  killAll();
  process.off(signal, onSignal);
  // Only this handler was listening: end as the signal would have.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
};

const guard = (on: boolean) => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.off(signal, onSignal);
    if (on) process.on(signal, onSignal);
  }
  process.off('exit', killAll);
  if (on) process.on('exit', killAll);
};

const track = (key: object, stop: () => void): (() => void) => {
  live.set(key, stop);
  guard(true);
  return () => {
    live.delete(key);
    if (live.size === 0) guard(false);
  };
};

/** Spawns `command`; `ended` settles when it exits, or after `timeoutMs` with its whole group killed. */
export const spawnBounded = (command: string, args: string[], options: SpawnOptions, timeoutMs: number): { child: ChildProcess; ended: Promise<Ended> } => {
  const child = spawn(command, args, { ...options, detached: true });
  const untrack = track(child, () => killGroup(child));
  let timedOut = false;
  const timer = setTimeout(() => ((timedOut = true), killGroup(child)), timeoutMs);
  const ended = new Promise<Ended>((resolve) => {
    const done = (code: number | null) => {
      clearTimeout(timer);
      untrack();
      resolve({ code, timedOut });
    };
    child.on('error', () => done(null));
    // What the child started may still run in its group, holding its pipes open: nothing of it outlives the child.
    child.on('exit', () => killGroup(child));
    child.on('close', done);
  });
  return { child, ended };
};

/** `roots` and their descendants, as far as they are still in the process tree. */
const trees = (roots: ReadonlySet<number>): ProcessEntry[] => {
  const table = processTable();
  const children = new Map<number, ProcessEntry[]>();
  for (const p of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: ProcessEntry[] = [];
  const walk = (p: ProcessEntry) => {
    found.push(p);
    (children.get(p.pid) ?? []).forEach(walk);
  };
  table.filter((p) => roots.has(p.pid)).forEach(walk);
  return found;
};

/**
 * Kills the processes `roots` and all they started. Each is stopped first, and the tree looked at
 * again until every process in it has stopped and no new one shows up: a stop signal takes effect
 * after the fork a process may be in, so none forks past the scan, and no child of a killed parent
 * leaves the tree before it is found.
 */
const killTrees = (roots: ReadonlySet<number>): void => {
  if (roots.size === 0) return;
  const stopped = new Set<number>();
  for (let tree = trees(roots), tries = 0; tries < 1000; tree = trees(roots), tries++) {
    const fresh = tree.filter((p) => !stopped.has(p.pid));
    fresh.forEach((p) => (signal(p.pid, 'SIGSTOP'), stopped.add(p.pid)));
    if (fresh.length === 0 && tree.every((p) => p.state === 'T' || p.state === 'Z')) break;
    sleepSync(1);
  }
  killAndWait([...stopped], 1000);
};

/**
 * Where a worker started by {@link workerBounded} writes the pid of each child process code in it
 * starts: slot 0 counts them. Shared memory, not messages: a message posted just before the worker
 * is terminated may never be delivered, and its process would outlive imgc.
 */
const PIDS = 4096;
const pidsKey = 'imgcStartedProcesses';

/**
 * In a worker started by {@link workerBounded}: records every child process started from here on
 * (spawn, exec, execFile and fork all start theirs through `ChildProcess.prototype.spawn`), so that
 * they and what they start end with the worker.
 */
export const reportStartedProcesses = (): void => {
  const shared = (workerData as Record<string, unknown> | null)?.[pidsKey];
  // Node's own (internal, undocumented) method; without it nothing is recorded, and nothing else changes.
  const proto = ChildProcess.prototype as ChildProcess & { spawn?: (this: ChildProcess, ...args: unknown[]) => unknown };
  const spawnChild = proto.spawn;
  if (!(shared instanceof SharedArrayBuffer) || typeof spawnChild !== 'function') return;
  const pids = new Int32Array(shared);
  proto.spawn = function (...args) {
    if (Atomics.load(pids, 0) >= PIDS) throw new Error(`a definition may start at most ${PIDS} processes`);
    const result = spawnChild.apply(this, args);
    if (this.pid) Atomics.store(pids, 1 + Atomics.add(pids, 0, 1), this.pid);
    return result;
  };
};

/** How a bounded worker ended: its first message (its answer), or its exit without one. */
export type WorkerOutcome = { message: unknown } | (Ended & { error?: unknown });

/**
 * Starts a worker thread on `script` that calls {@link reportStartedProcesses}. `outcome` settles with
 * its first message, or when it exits without one, or after `timeoutMs`, when it is terminated (a loop
 * that never yields too). `stop` terminates it. Whenever it ends, the processes it started are killed
 * with all they started; and on imgc's exit or a signal.
 */
export const workerBounded = (script: string, options: WorkerOptions & { workerData?: Record<string, unknown> }, timeoutMs: number): { outcome: Promise<WorkerOutcome>; stop: () => void } => {
  const shared = new SharedArrayBuffer(4 * (PIDS + 1));
  const pids = new Int32Array(shared);
  const worker = new Worker(script, { ...options, workerData: { ...options.workerData, [pidsKey]: shared } });
  let killed = 0;
  // The processes recorded since the last call, killed with all they started.
  const killStarted = () => {
    const count = Atomics.load(pids, 0);
    const fresh = new Set<number>();
    // A slot still 0 is a spawn whose pid is being written: it is read on the next call.
    for (let pid; killed < count && (pid = Atomics.load(pids, killed + 1)) > 0; killed++) fresh.add(pid);
    killTrees(fresh);
  };
  const stop = () => {
    void worker.terminate();
    killStarted();
  };
  const untrack = track(worker, stop);
  let timedOut = false;
  let error: unknown;
  const timer = setTimeout(() => ((timedOut = true), stop()), timeoutMs);
  // A worker that ends by itself delivers its last messages before 'exit': the first settling wins.
  const outcome = new Promise<WorkerOutcome>((resolve) => {
    worker.on('message', (m: unknown) => resolve({ message: m }));
    worker.on('error', (e) => (error = e));
    worker.on('exit', (code) => {
      clearTimeout(timer);
      killStarted();
      untrack();
      resolve({ code, timedOut, error });
    });
  });
  return { outcome, stop };
};
