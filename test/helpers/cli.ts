// Runs the built CLI and loads examples' IR through it. `imgc` calls the
// CLI's `run(argv, io)` in this process (the code bin/imgc.js runs, without a
// node start per call); `imgcProcess` starts bin/imgc.js, for the claims
// about the process itself (exit status, streams, signals, pipes) and for a
// directory with an imgc.toml (read once, when the CLI's modules load).
import { execa } from 'execa';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Image } from '../../src/ir/schema.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const imgcBin = path.join(repoRoot, 'bin', 'imgc.js');

interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
}

/** What a run of imgc gave: as execa reports it (a final newline stripped from each stream). */
export interface ImgcResult {
  exitCode?: number | undefined;
  stdout: string;
  stderr: string;
  all: string;
}

export const imgcProcess = (args: string[], opts: RunOptions = {}) =>
  execa('node', [imgcBin, ...args], { cwd: opts.cwd ?? repoRoot, reject: false, env: opts.env ?? {}, all: true });

type Cli = typeof import('../../src/cli/main.js');
let cli: Promise<Cli> | undefined;
let queue: Promise<unknown> = Promise.resolve();
const stripNewline = (s: string): string => (s.endsWith('\n') ? s.slice(0, -1) : s);

/**
 * `imgc args` in this process: cwd and environment are the process's, so
 * calls take turns and each gets back the cwd and environment it found (the
 * CLI itself sets FORCE_COLOR/NO_COLOR for --color).
 */
const inProcess = async (args: string[], opts: RunOptions): Promise<ImgcResult> => {
  cli ??= import(pathToFileURL(path.join(repoRoot, 'dist', 'src', 'cli', 'main.js')).href) as Promise<Cli>;
  const { run } = await cli;
  const env = { ...process.env };
  const cwd = process.cwd();
  const out: string[] = [];
  const err: string[] = [];
  const all: string[] = [];
  let exitCode: number;
  try {
    Object.assign(process.env, opts.env);
    process.chdir(opts.cwd ?? repoRoot);
    exitCode = await run(args, { out: (s) => (out.push(s), all.push(s)), err: (s) => (err.push(s), all.push(s)), isTTY: false });
  } catch (e) {
    // As bin/imgc.js reports what run() throws.
    const text = `imgc: internal error: ${e instanceof Error ? e.stack : String(e)}\nPlease report this with the definition that caused it.\n`;
    err.push(text);
    all.push(text);
    exitCode = 3;
  } finally {
    process.chdir(cwd);
    for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
    Object.assign(process.env, env);
  }
  return { exitCode, stdout: stripNewline(out.join('')), stderr: stripNewline(err.join('')), all: stripNewline(all.join('')) };
};

/** `imgc args`, in this process unless the directory has an imgc.toml (then as a process). */
export const imgc = (args: string[], opts: RunOptions = {}): Promise<ImgcResult> => {
  if (existsSync(path.join(opts.cwd ?? repoRoot, 'imgc.toml'))) return imgcProcess(args, opts);
  const turn = queue.then(() => inProcess(args, opts));
  queue = turn.catch(() => {});
  return turn;
};

/** The good examples: every examples/*.ts; of a matrix, its default combination (what `imgc ir` takes), the others in test/variants.test.ts. */
export const goodExamples = (): string[] =>
  readdirSync(path.join(repoRoot, 'examples'))
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => `examples/${f}`);

const irCache = new Map<string, Image>();
/** The IR of a definition, via `imgc ir` (no type-check: the check tests do that). */
export const irOf = async (file: string): Promise<Image> => {
  const cached = irCache.get(file);
  if (cached) return cached;
  const r = await imgc(['ir', '--no-typecheck', file]);
  if (r.exitCode !== 0) throw new Error(`imgc ir ${file} failed (${r.exitCode}):\n${r.all}`);
  const ir = JSON.parse(r.stdout) as Image;
  irCache.set(file, ir);
  return ir;
};

export { tempDir } from './temp.js';
