// TypeScript's diagnostics for a definition, from ./typecheck-child.cjs in a
// process of its own: started first, it checks on another core while this one
// evaluates the definition. This side caches answers by the content of every
// file they read, and keeps the child's V8 snapshot (TypeScript's libraries
// parsed and bound) fresh: it is used only while every file it was made from
// is unchanged; a check that finds none runs without, then has it made in
// the background for the next.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import type { SourceLocation } from '../ir/schema.js';
import { cacheDir, hashInputs, inputsUnchanged, readCached, sha256, writeCached, type HashedInput } from '../util/cache.js';
import { cacheSalt } from './transpile.js';
import { imgcTypes, ownDirs, srcRoot, stdlibTypes } from './entries.js';
import type { Answer, Request, Stamp } from './typecheck-child.cjs';
import { askServer, serverSocket, serverWanted, startServerLater } from './typecheck-server.js';

const child = path.join(path.dirname(fileURLToPath(import.meta.url)), 'typecheck-child.cjs');
const { attempted, markerOf, sidecarOf, unchanged } = createRequire(import.meta.url)(child) as typeof import('./typecheck-child.cjs');

const typeRoots = [path.resolve(srcRoot, '..', '..', 'node_modules', '@types'), path.resolve(srcRoot, '..', 'node_modules', '@types')].filter(existsSync);

export const locOf = (dir: string, file: string, line: number, column: number): SourceLocation => ({
  file: path.relative(dir, file).split(path.sep).join('/'),
  line,
  column,
});

const request = (file: string): Request => ({
  file,
  imgcTypes,
  stdlibTypes,
  typeRoots,
  nodeTypesAvailable: typeRoots.some((r) => existsSync(path.join(r, 'node'))),
  ownDirs,
  cacheDir: cacheDir(),
});

/** NODE_OPTIONS (--require, --import) would load modules that a snapshot cannot hold. */
const childEnv = (): NodeJS.ProcessEnv => {
  const { NODE_OPTIONS: _, ...env } = process.env;
  return env;
};

export interface Ran {
  answer?: Answer;
  exitCode: number | null;
  stderr: string;
}

/** Runs node with `args`, the request on stdin; the answer is the first line it prints. */
const runChild = (args: string[], req: Request, signal?: AbortSignal): Promise<Ran> =>
  new Promise((resolve) => {
    const p = spawn(process.execPath, ['--no-warnings', ...args], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    p.stdin.on('error', () => {}); // a child that died early: reported by its exit
    p.stdin.end(JSON.stringify(req));
    p.on('error', (e) => resolve({ exitCode: null, stderr: e.message }));
    p.on('close', (code) => {
      let answer: Answer | undefined;
      try {
        answer = JSON.parse(out.split('\n', 1)[0]!) as Answer;
      } catch {
        answer = undefined;
      }
      resolve({ ...(answer ? { answer } : {}), exitCode: code, stderr: err });
    });
  });

/** This Node binary and this imgc installation: each has a snapshot, and a server, of its own. */
const installation = (): string => sha256(`${process.execPath}\0${process.version}\0${process.arch}\0${child}`).slice(0, 32);

/** The snapshot for this installation; its sidecar lists the files it was made from. */
const snapshotFiles = () => {
  const dir = path.join(cacheDir(), 'typecheck-snapshot');
  return { dir, blob: path.join(dir, `${installation()}.blob`) };
};

/** The socket of this installation's type-check server (./typecheck-server.ts), when one may be used. */
export const typecheckServerSocket = (): string | undefined => (serverWanted().use ? serverSocket(cacheDir(), installation()) : undefined);

const freshSnapshot = (files: ReturnType<typeof snapshotFiles>): boolean => {
  if (!existsSync(files.blob)) return false;
  try {
    return (JSON.parse(readFileSync(sidecarOf(files.blob), 'utf8')) as Stamp[]).every(unchanged);
  } catch {
    return false;
  }
};

/** Makes the snapshot for next time, in a process of its own that outlives this one (it takes a few seconds of one core). */
const makeSnapshotLater = (files: ReturnType<typeof snapshotFiles>, req: Request): void => {
  if (attempted(markerOf(files.blob))) return;
  try {
    mkdirSync(files.dir, { recursive: true });
    const maker = spawn(process.execPath, ['--no-warnings', child, '--make-snapshot', files.blob, JSON.stringify(req)], { detached: true, stdio: 'ignore', env: childEnv() });
    maker.on('error', () => {});
    if (maker.pid) setPriority(maker.pid, 19);
    maker.unref();
  } catch {
    // a cache that cannot be written: no snapshot, checks as fast as before
  }
};

export interface AskOptions {
  /** Stops the check. */
  signal?: AbortSignal;
  /** Called once the definition's files are in the transpile cache, or will not be put there by the check. */
  onTranspiled?: () => void;
}

/**
 * The answer: from the server when one runs; else from a child process,
 * started from the snapshot when it is fresh, and afterwards the snapshot
 * made and a server started, for the next check.
 */
export const askTypecheck = async (file: string, { signal, onTranspiled }: AskOptions = {}): Promise<Ran> => {
  const req = request(file);
  const socket = typecheckServerSocket();
  if (socket && existsSync(socket)) {
    const asked = askServer(socket, req, onTranspiled !== undefined, signal);
    if (onTranspiled) void asked.transpiled.then(onTranspiled);
    const answer = await asked.answer;
    if (answer || signal?.aborted) return { ...(answer ? { answer } : {}), exitCode: 0, stderr: '' };
  }
  onTranspiled?.();
  const files = snapshotFiles();
  let ran: Ran | undefined;
  if (freshSnapshot(files)) {
    ran = await runChild(['--snapshot-blob', files.blob], req, signal);
    if (!ran.answer && !signal?.aborted) {
      rmSync(files.blob, { force: true }); // a blob this Node cannot load: make it again
      ran = undefined;
    }
  }
  ran ??= await runChild([child], req, signal);
  if (!signal?.aborted) {
    makeSnapshotLater(files, req);
    if (socket && serverWanted().start) startServerLater(socket, req, childEnv());
  }
  return ran;
};

const toDiagnostics = (answer: Extract<Answer, { ok: true }>, dir: string): Diagnostic[] => {
  const code = answer.syntactic ? 'IMGC1006' : 'IMGC1001';
  return answer.diagnostics.map((d) => diagnostic(code, d.message, d.file !== undefined && d.line !== undefined ? { loc: locOf(dir, d.file, d.line, d.column ?? 1) } : {}));
};

interface CachedCheck {
  inputs: HashedInput[];
  diagnostics: Diagnostic[];
}

let prefetched: { file: string; diagnostics: Promise<Diagnostic[]>; transpiled: Promise<void>; stop: AbortController } | undefined;

/**
 * Starts the type-check of `file` (absolute) now; the next typecheck() of it
 * takes this one. For the CLI, which knows the file before it has loaded the
 * rest of itself (and calls dropTypecheckPrefetch when it ends).
 */
export const prefetchTypecheck = (file: string): void => {
  const stop = new AbortController();
  let transpiled!: () => void;
  const ready = new Promise<void>((resolve) => (transpiled = resolve));
  const diagnostics = check(file, path.dirname(file), { signal: stop.signal, onTranspiled: transpiled });
  diagnostics.catch(() => {}); // whoever takes it sees the failure
  diagnostics.finally(transpiled).catch(() => {});
  prefetched = { file, diagnostics, transpiled: ready, stop };
};

/** Loading TypeScript to transpile takes ~100 ms: wait no longer than that for the server to do it. */
const TRANSPILE_WAIT_MS = 100;

/**
 * Settles when a prefetched check of `file` has had the server transpile its
 * files into the cache, or will not (no server, a cached check), or after a
 * loading of TypeScript's worth of waiting. Call before typecheck() takes it.
 */
export const prefetchedTranspiles = (file: string): Promise<void> => {
  if (prefetched?.file !== file) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, TRANSPILE_WAIT_MS)));
  return Promise.race([prefetched.transpiled, waited]).finally(() => clearTimeout(timer));
};

/** Stops a prefetched type-check nobody took (a usage error came first), so the command does not wait on it. */
export const dropTypecheckPrefetch = (): void => {
  prefetched?.stop.abort();
  prefetched = undefined;
};

/**
 * TypeScript's diagnostics for the definition and the local files it imports.
 * The result is cached with the hash of every file it read (outside
 * node_modules), so an unchanged definition is not type-checked again.
 */
export const typecheck = (file: string, dir: string): Promise<Diagnostic[]> => {
  const started = prefetched?.file === file ? prefetched.diagnostics : undefined;
  prefetched = undefined;
  return started ?? check(file, dir);
};

const check = async (file: string, dir: string, ask: AskOptions = {}): Promise<Diagnostic[]> => {
  const key = `${sha256(`${cacheSalt}\0${file}`)}.json`;
  const cached = readCached('typecheck', key);
  if (cached !== undefined) {
    const entry = JSON.parse(cached) as CachedCheck;
    if (inputsUnchanged(entry.inputs)) return entry.diagnostics;
  }
  const { answer, exitCode, stderr } = await askTypecheck(file, ask);
  if (!answer) throw new Error(`the type-check process ended (exit ${exitCode}) without an answer: ${stderr.trim() || 'nothing on stderr'}`);
  if (!answer.ok) {
    if (answer.error.name !== 'RangeError') throw new Error(`the type-check failed: ${answer.error.name}: ${answer.error.message}`);
    // Not cached: a retry may succeed.
    return [
      diagnostic('IMGC1001', `TypeScript could not check this definition (${answer.error.message})`, {
        loc: locOf(dir, file, 1, 1),
        hint: 'split very long chains of steps into modules (defineModule) of a few hundred steps each, or pass --no-typecheck',
      }),
    ];
  }
  const diagnostics = toDiagnostics(answer, dir);
  writeCached('typecheck', key, JSON.stringify({ inputs: hashInputs(answer.inputs), diagnostics } satisfies CachedCheck));
  return diagnostics;
};
