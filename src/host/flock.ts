// Locks that die with their holder: flock(2) through util-linux's flock(1),
// held by a child whose stdin is a pipe from this process. When this process
// ends, however (SIGKILL, OOM), the pipe closes, the child's `read` returns,
// the child exits and the kernel drops the lock: no pid file to read, nothing
// for the next build to reclaim. The lock is on an inode: a file (made if
// missing) or a directory.
import { spawn } from 'node:child_process';
import { SYSTEM_PATH } from './exec.js';

export interface HeldLock {
  /** Lets go of the lock (once; later calls do nothing); resolves when it is free for others. */
  release(): Promise<void>;
}

/**
 * Takes the exclusive lock on `file`: waits for it when `wait`, else gives
 * undefined at once when another process holds it.
 */
export const lockFile = (file: string, opts: { wait: boolean }): Promise<HeldLock | undefined> =>
  new Promise((resolve, reject) => {
    const child = spawn('flock', [opts.wait ? '--exclusive' : '--nonblock', file, 'sh', '-c', 'echo locked; read -r _ || :'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: SYSTEM_PATH },
      // Its own process group: a Ctrl-C at the terminal stops the build, which lets go of the lock when it has cleaned up, not before.
      detached: true,
    });
    let held = false;
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdin.on('error', () => {}); // the child gone first: nothing to tell it
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.stdout.setEncoding('utf8').once('data', () => {
      held = true;
      resolve({
        release: () => {
          child.stdin.end();
          return exited;
        },
      });
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (held) return;
      if (code === 1 && !opts.wait && !err) resolve(undefined);
      else reject(new Error(`flock ${file} failed (exit ${code ?? 'by a signal'}): ${err.trim() || 'no output'}`));
    });
  });

/** Takes the lock on `file`, first without waiting: `onWait` is called when another process holds it. */
export const lockOrWait = async (file: string, onWait: () => void): Promise<{ lock: HeldLock; waited: boolean }> => {
  const now = await lockFile(file, { wait: false });
  if (now) return { lock: now, waited: false };
  onWait();
  return { lock: (await lockFile(file, { wait: true }))!, waited: true };
};
