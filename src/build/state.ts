// What the stages of one build share (./index.ts runs them in order): the
// options, the summary they fill in, and the work root once it exists.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { CompiledFiles } from '../compilers/types.js';
import type { Image, Phase, SourceLocation } from '../ir/schema.js';
import type { KeyInputs, RootCache } from './cache.js';
import type { Display } from './display.js';
import type { RootMounts } from './mounts.js';
import type { BuildSummary } from './summary.js';
import { redact, type SensitiveValues } from './secrets.js';
import type { Session } from './session.js';
import { logsText } from './run-logs.js';

export interface BuildOptions {
  target: 'shell' | 'ansible';
  /** The build's output directory (artifacts, manifest, logs/, compiled/). */
  outDir: string;
  fromTar?: string;
  fromDir?: string;
  /** Do not reuse cached phase roots (they are still refreshed); the base tarball is still reused. */
  noCache?: boolean;
  keepRoot?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The definition's directory (IR locations are relative to it) and the cwd (messages are relative to it). */
  definitionDir: string;
  cwd?: string;
  /** For tests: compile without the registered backend. */
  compile?: (ir: Image) => CompiledFiles;
  /** The values of the sensitive variables the image uses (the IR never holds them). */
  sensitive?: SensitiveValues;
  /** `json`: JSON-lines events on stdout instead of the human display (./events.ts). */
  format?: 'text' | 'json';
  /** `--until`: the phase the image given was cut after (throughPhase); the display says so. */
  until?: string;
  /** Checks the root laid down for phase 0 before any step runs (a base made of facts: a contract's); a message fails the build. */
  checkBase?: (root: string) => string | undefined;
}

/** Build failures the user can act on (not bugs): printed without a stack. */
export class BuildError extends Error {
  override name = 'BuildError';
}

/** One build, from its start: what every stage reads, and the summary they fill in. */
export interface BuildRun {
  ir: Image;
  opts: BuildOptions;
  env: NodeJS.ProcessEnv;
  cwd: string;
  outDir: string;
  /** This build's logs: runs/ID/ in outDir while it runs, logs/ once published with the artifacts (./run-logs.ts). */
  logsDir: string;
  display: Display;
  session: Session;
  summary: BuildSummary;
  /** Date.now() when the build started. */
  started: number;
  /** A definition location as the user reads it (relative to the cwd), or undefined. */
  where: (loc: SourceLocation | undefined) => string | undefined;
}

/** The build's work root and what belongs to it, once preflight passed. */
export interface Work {
  /** The compiled target files and where they were written (outDir/compiled). */
  files: CompiledFiles;
  compiledDir: string;
  sensitive: SensitiveValues;
  /** This build's own work directory beside the output directory, and the root in it. */
  dir: string;
  root: string;
  cache: RootCache;
  /** Artifacts are made here and moved into the output directory only when the whole build succeeded. */
  staging: string;
  mounts: RootMounts;
  /** The cache key of each root phase's result (./keys.ts). */
  keys: Map<Phase, string>;
  /** What each key is made of, recorded beside the cached root (`imgc build --plan` names the input that changed). */
  inputs: Map<Phase, KeyInputs>;
  /**
   * The cached root phase result `root` is right now, while nothing else
   * has run in it: artifacts made now record it as their input (so the next
   * build into outDir can keep them), and at the end the root is moved into
   * the cache unpacked, so the next build that starts from it (one that
   * changed only the artifacts) takes it by a rename.
   */
  rootIs: { key: string; id: string } | undefined;
}

/** Prints `message` as the build's error, and where its logs are once it has some; records its first line in the summary; exit code 1. */
export const failed = (run: BuildRun, message: string): { exitCode: number; summary: BuildSummary } => {
  run.display.clearStatus();
  const logs = existsSync(run.logsDir) ? logsText(run) : undefined;
  const where = logs && !message.includes(logs) ? `\n  logs: ${logs}` : '';
  run.display.line(`${run.display.live ? '\u001b[31merror:\u001b[0m' : 'error:'} ${message}${where}`);
  run.summary.error = redact(message.split('\n')[0] ?? '');
  return { exitCode: 1, summary: run.summary };
};

export const locText = (loc: SourceLocation | undefined, dir: string, cwd: string) =>
  loc ? `${path.relative(cwd, path.resolve(dir, loc.file)).split(path.sep).join('/')}:${loc.line}:${loc.column}` : undefined;
