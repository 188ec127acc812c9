// Where a build's logs live. While it runs, in --out/runs/ID/ (ID: its start
// time in UTC and its pid); a build that succeeds publishes them as logs/ in
// the same renames as its artifacts, so logs/ always tells how the artifacts
// beside it were made; one that fails or is interrupted leaves them in
// runs/ID/ and its last message says so. The newest few runs are kept.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';

/** What these functions read and move of a build's run (./state.ts's BuildRun has it). */
interface RunLogs {
  readonly outDir: string;
  readonly cwd: string;
  /** Where the logs are now: runs/ID, staging/logs, or logs/ once published. */
  logsDir: string;
}

/** Failed or interrupted builds' log folders kept in runs/, this build's included. */
export const RUNS_KEPT = 5;

export const RUNS_DIR = 'runs';

/** runs/ID for a build started at `started` (ms) by `pid`: sorts in time order. */
export const runLogsDir = (outDir: string, started: number, pid: number): string =>
  path.join(outDir, RUNS_DIR, `${new Date(started).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z')}-${pid}`);

/** Makes this build's log folder, removing the oldest others beyond {@link RUNS_KEPT} (only one build writes into --out at a time). */
export const openRunLogs = (run: RunLogs): void => {
  const runs = path.join(run.outDir, RUNS_DIR);
  const older = existsSync(runs) ? readdirSync(runs).filter((n) => path.join(runs, n) !== run.logsDir).sort() : [];
  for (const n of older.slice(0, Math.max(0, older.length - (RUNS_KEPT - 1)))) rmSync(path.join(runs, n), { recursive: true, force: true });
  mkdirSync(run.logsDir, { recursive: true });
};

/**
 * Moves the logs into the staging directory as `logs`, to be published with
 * the artifacts; the build goes on writing them there (its summary). Returns
 * the output name to publish, and a function that puts them back in runs/
 * should the publishing fail.
 */
export const stageRunLogs = (run: RunLogs, staging: string): { output: string; unstage: () => void } => {
  const home = run.logsDir;
  const staged = path.join(staging, 'logs');
  renameSync(home, staged);
  run.logsDir = staged;
  return {
    output: 'logs',
    unstage: () => {
      if (run.logsDir === staged && existsSync(staged)) renameSync(staged, home);
      run.logsDir = home;
    },
  };
};

/** After publishing: the logs are the output directory's logs/ now, and runs/ goes when it holds nothing. */
export const publishedRunLogs = (run: RunLogs): void => {
  run.logsDir = path.join(run.outDir, 'logs');
  const runs = path.join(run.outDir, RUNS_DIR);
  try {
    if (!readdirSync(runs).length) rmSync(runs, { recursive: true });
  } catch {
    /* no runs/ */
  }
};

/** Where a build's logs are, as its last message says it (relative to the cwd, with a trailing slash). */
export const logsText = (run: RunLogs): string => `${path.relative(run.cwd, run.logsDir) || '.'}/`;
