// Running the real tools (debootstrap, chroot, ansible-playbook, tar, mkfs…)
// with execa. Every child runs in its own process group so an interrupt can
// stop it and everything it started (apt, dpkg, maintainer scripts) before the
// mounts are taken down.
import { execa } from 'execa';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** The PATH the build's commands see on the host and inside the root. */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** rm -rf that stays on one filesystem (a root may still hold a mount), synchronous for cleanup actions; whether `dir` is gone. */
export const removeTree = (dir: string): boolean => {
  spawnSync('rm', ['-rf', '--one-file-system', dir], { env: { PATH: SYSTEM_PATH }, stdio: 'ignore' });
  return !existsSync(dir);
};

/** The host's PATH with the system directories (sbin too) appended; or only those. */
const hostPath = (extend: boolean): string => (extend && process.env['PATH'] ? `${process.env['PATH']}:${SYSTEM_PATH}` : SYSTEM_PATH);

const running = new Set<number>();

/** Sends `signal` to the process groups of every child still running. */
export const killRunningChildren = (signal: NodeJS.Signals = 'SIGTERM'): void => {
  for (const pid of running) {
    try {
      process.kill(-pid, signal);
    } catch {
      /* already gone */
    }
  }
};

export class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number | undefined,
    readonly output: string,
  ) {
    super(`${command} failed${exitCode === undefined ? '' : ` (exit ${exitCode})`}${output ? `:\n${tail(output, 20)}` : ''}`);
    this.name = 'CommandError';
  }
}

export const tail = (text: string, lines: number): string => text.trimEnd().split('\n').slice(-lines).join('\n');

/** Where output lines go: a log file, or several. */
export interface LogSink {
  write(text: string): void;
}

export interface RunOptions {
  env?: Record<string, string>;
  /** Start from the host's environment (default true); false gives exactly `env` plus PATH. */
  extendEnv?: boolean;
  cwd?: string;
  /** Every output line (stdout and stderr, interleaved) is appended here. */
  log?: LogSink;
  /** Called for every output line as it arrives, with the stream it came on. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  input?: string;
  /** Throw CommandError on a non-zero exit (default true). */
  check?: boolean;
}

export interface RunResult {
  exitCode: number;
  /** The last 200 lines of output, for error messages. */
  output: string;
}

/** Runs a command to completion, streaming its output lines (stdout and stderr) to the log and `onLine`. */
export const run = async (file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> => {
  const display = [file, ...args].join(' ');
  opts.log?.write(`$ ${display}\n`);
  const sub = execa(file, args, {
    env: { PATH: hostPath(opts.extendEnv ?? true), ...opts.env },
    extendEnv: opts.extendEnv ?? true,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' as const }),
    buffer: false,
    reject: false,
    detached: true,
    cleanup: true,
  });
  if (sub.pid !== undefined) running.add(sub.pid);
  const recent: string[] = [];
  try {
    const pump = async (stream: NodeJS.ReadableStream | null, name: 'stdout' | 'stderr') => {
      if (!stream) return;
      const rl = createInterface({ input: stream, crlfDelay: Infinity });
      for await (const line of rl) {
        opts.log?.write(`${line}\n`);
        recent.push(line);
        if (recent.length > 200) recent.shift();
        opts.onLine?.(line, name);
      }
    };
    await Promise.all([pump(sub.stdout, 'stdout'), pump(sub.stderr, 'stderr')]);
    const r = await sub;
    const exitCode = r.exitCode ?? (r.signal ? 128 : 1);
    if (r.signal) opts.log?.write(`[killed by ${r.signal}]\n`);
    if (r.failed && r.exitCode === undefined && !r.signal) throw new CommandError(display, undefined, String(r.message ?? "failed to start"));
    if (exitCode !== 0 && opts.check !== false) throw new CommandError(display, exitCode, recent.join('\n'));
    return { exitCode, output: recent.join('\n') };
  } finally {
    if (sub.pid !== undefined) running.delete(sub.pid);
  }
};

/** Runs a short command and returns its stdout (trimmed); throws on failure. */
export const capture = async (file: string, args: readonly string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<string> => {
  const r = await execa(file, args, { env: { PATH: hostPath(true), ...opts.env }, reject: false, stdin: 'ignore', ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  if (r.exitCode !== 0) throw new CommandError([file, ...args].join(' '), r.exitCode, `${r.stderr}${r.stdout}`);
  return r.stdout.trim();
};

const isExecutableFile = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
};

/**
 * Whether a program is on PATH (host): the lookup `command -v` makes, an
 * executable file in one of its directories (an empty entry is the current
 * one), done here rather than by a shell per name.
 */
export const haveCommand = async (name: string): Promise<boolean> =>
  name.includes('/') ? isExecutableFile(name) : hostPath(true).split(':').some((dir) => isExecutableFile(path.join(dir || '.', name)));
