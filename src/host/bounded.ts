// Child processes that never outlive imgc: each runs in a process group of
// its own, which is killed whole (whatever the child started too) when its
// time is up, when imgc exits, and on Ctrl-C or SIGTERM.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** How a bounded child ended; `timedOut`: its time was up and its group was killed. */
export interface Ended {
  code: number | null;
  timedOut: boolean;
}

const live = new Set<ChildProcess>();

const killGroup = (child: ChildProcess): void => {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {} // the group is gone already
};

const killAll = () => live.forEach(killGroup);

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

/** Spawns `command`; `ended` settles when it exits, or after `timeoutMs` with its whole group killed. */
export const spawnBounded = (command: string, args: string[], options: SpawnOptions, timeoutMs: number): { child: ChildProcess; ended: Promise<Ended> } => {
  const child = spawn(command, args, { ...options, detached: true });
  live.add(child);
  guard(true);
  let timedOut = false;
  const timer = setTimeout(() => ((timedOut = true), killGroup(child)), timeoutMs);
  const ended = new Promise<Ended>((resolve) => {
    const done = (code: number | null) => {
      clearTimeout(timer);
      live.delete(child);
      if (live.size === 0) guard(false);
      resolve({ code, timedOut });
    };
    child.on('error', () => done(null));
    // What the child started may still run in its group, holding its pipes open: nothing of it outlives the child.
    child.on('exit', () => killGroup(child));
    child.on('close', done);
  });
  return { child, ended };
};
