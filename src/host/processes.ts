// Other processes as the kernel shows them: a process's stat line (/proc on
// Linux), the whole process table, and killing some and waiting until they
// are gone. For imgc's bounded workers (./bounded.ts) and a killed build's
// leftovers (src/build/reclaim.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/PID/stat after the command name, the state first (R, S, T stopped, Z …); undefined when there is none. */
export const statFields = (pid: number | string): string[] | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
};

/** Whether `pid` still runs (a zombie has let go of everything: it does not). */
export const running = (pid: number): boolean => {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
};

/** Sends `name` to `pid`, which may be gone already. */
export const signal = (pid: number, name: NodeJS.Signals): void => {
  try {
    process.kill(pid, name);
  } catch {} // gone already
};

const pause = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread for `ms` (a process being killed needs a moment; nothing else is to be done meanwhile). */
export const sleepSync = (ms: number): void => void Atomics.wait(pause, 0, 0, ms);

/**
 * Kills `pids` and waits until none of them runs, for at most `boundMs`: SIGKILL is delivered at once,
 * but a process in the kernel (a mount syscall) exits a moment later, and gone should mean gone.
 */
export const killAndWait = (pids: readonly number[], boundMs: number): void => {
  pids.forEach((pid) => signal(pid, 'SIGKILL'));
  for (const end = Date.now() + boundMs; Date.now() < end && pids.some(running); ) sleepSync(1);
};

export type ProcessEntry = { pid: number; ppid: number; state: string };

/** Every process's parent and state: from /proc on Linux (no process started), else from `ps`. */
export const processTable = (): ProcessEntry[] => {
  if (existsSync('/proc/self/stat')) {
    return readdirSync('/proc').flatMap((name) => {
      const fields = /^\d+$/.test(name) ? statFields(name) : undefined; // undefined: it ended meanwhile
      return fields ? [{ pid: Number(name), ppid: Number(fields[1]), state: fields[0] ?? '' }] : [];
    });
  }
  const ps = spawnSync('ps', ['-A', '-o', 'pid=', '-o', 'ppid=', '-o', 'stat='], { encoding: 'utf8' });
  return (ps.stdout ?? '').split('\n').flatMap((line) => {
    const [pid, ppid, state = ''] = line.trim().split(/\s+/);
    return pid && ppid ? [{ pid: Number(pid), ppid: Number(ppid), state: state.slice(0, 1) }] : [];
  });
};
