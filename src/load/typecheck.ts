// TypeScript's diagnostics for a definition: the native compiler of
// TypeScript 7 (`tsc`, a Go binary shipped in a platform package beside the
// `typescript` package) run over a generated tsconfig. Why a process and not
// the API: docs/architecture.md. The answer is cached with the hash of every
// file the compiler read, so an unchanged definition is not checked again.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import type { SourceLocation } from '../ir/schema.js';
import { cacheDir, hashInputs, inputsUnchanged, readCached, sha256, writeCached, type HashedInput } from '../util/cache.js';
import { spawnBounded } from '../host/bounded.js';
import { isUsersFile } from '../util/package-root.js';
import { imgcTypes, srcRoot, stdlibTypes } from './entries.js';
import { platformBinary } from '../host/binaries.js';

const require = createRequire(import.meta.url);
const tsPackage = require.resolve('typescript/package.json');
const tsVersion = (JSON.parse(readFileSync(tsPackage, 'utf8')) as { version: string }).version;

/** The native binary itself: the package's `bin/tsc` is a Node script that starts it (and on Node 20 waits for it). */
export const tscBinary = (): { command: string; args: string[] } => {
  const exe = platformBinary(tsPackage, `@typescript/typescript-${process.platform}-${process.arch}`, `lib/tsc${process.platform === 'win32' ? '.exe' : ''}`);
  return exe ? { command: exe, args: [] } : { command: process.execPath, args: [path.join(path.dirname(tsPackage), 'bin', 'tsc')] };
};

const imgcPackageJson = [path.resolve(srcRoot, '..', 'package.json'), path.resolve(srcRoot, '..', '..', 'package.json')].find(existsSync);
/** What every cache entry of the loader depends on besides the user's files. */
export const cacheSalt = `imgc@${imgcPackageJson ? (JSON.parse(readFileSync(imgcPackageJson, 'utf8')) as { version: string }).version : '?'} typescript@${tsVersion}`;

const ownTypeRoots = [path.resolve(srcRoot, '..', '..', 'node_modules', '@types'), path.resolve(srcRoot, '..', 'node_modules', '@types')];

/** Where global types are looked up for a definition in `dir`: its project's `node_modules/@types` (and its parents'), as TypeScript does, then imgc's own. */
const typeRootsFor = (dir: string): string[] => {
  const roots: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    roots.push(path.join(d, 'node_modules', '@types'));
    if (path.dirname(d) === d) break;
  }
  return [...new Set([...roots, ...ownTypeRoots])].filter(existsSync);
};

export const locOf = (dir: string, file: string, line: number, column: number): SourceLocation => ({ file: path.relative(dir, file).split(path.sep).join('/'), line, column });

/** The project that checks `file`: `imgc` resolves to this installation's declarations (its sources in a checkout). */
export const tsconfigFor = (file: string, withNode = false): string => {
  const types = withNode ? ['node'] : [];
  const typeRoots = typeRootsFor(path.dirname(file));
  const paths = { imgc: [imgcTypes], 'imgc/stdlib': [stdlibTypes] };
  const compilerOptions = { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', lib: ['es2022'], types, typeRoots, skipLibCheck: true, allowImportingTsExtensions: true, resolveJsonModule: true, paths };
  const text = `${JSON.stringify({ compilerOptions, files: [file] }, null, 2)}\n`;
  const name = `${sha256(text).slice(0, 32)}.json`;
  if (readCached('tsconfig', name) !== text) writeCached('tsconfig', name, text);
  return path.join(cacheDir(), 'tsconfig', name);
};

const hasNodeTypes = (file: string): boolean => typeRootsFor(path.dirname(file)).some((r) => existsSync(path.join(r, 'node')));

const runTsc = async (config: string, dir: string, timeoutMs: number) => {
  const tsc = tscBinary();
  // tsc is Go: a short-lived process, its garbage collection a third of a large check's CPU. GOGC=400
  // (a heap up to 5x the live data between collections) cuts 10-20% of its CPU for ~20% more peak memory
  // (docs/performance.md, 2026-12-04 22:30 UTC). It leaves one core to the evaluation beside it, whose
  // answer a check waits for, not tsc's (docs/performance.md, 2026-12-05). What the user set wins.
  const cores = String(Math.max(1, availableParallelism() - 1));
  const env = { ...process.env, GOGC: process.env['GOGC'] ?? '400', GOMAXPROCS: process.env['GOMAXPROCS'] ?? cores };
  const { child, ended } = spawnBounded(tsc.command, [...tsc.args, '-p', config, '--pretty', 'false', '--listFiles'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] }, timeoutMs);
  const text = { out: '', err: '' };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (text.out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (text.err += d));
  return { ...(await ended), ...text, parsed: parseTscOutput(text.out, dir) };
};

/** A diagnostic line of `tsc --pretty false`: `file(line,col): error TS2322: message`, or one without a file. */
const diagnosticLine = /^(?:(.+)\((\d+),(\d+)\): )?(error|warning) TS(\d+): (.*)$/;

export type TsDiagnostic = { message: string; file?: string; line?: number; column?: number };

/** Reads tsc's output: its diagnostics (continuation lines joined) and, from --listFiles, the files it read. */
export const parseTscOutput = (out: string, cwd: string): { diagnostics: TsDiagnostic[]; files: string[] } => {
  const diagnostics: TsDiagnostic[] = [];
  const files: string[] = [];
  for (const line of out.split('\n')) {
    const m = diagnosticLine.exec(line);
    if (m) {
      const message = `TS${m[5]}: ${m[6]}`;
      diagnostics.push(m[1] ? { message, file: path.resolve(cwd, m[1]), line: Number(m[2]), column: Number(m[3]) } : { message });
    } else if (line.startsWith('  ') && diagnostics.length) diagnostics[diagnostics.length - 1]!.message += `\n${line}`;
    else if (path.isAbsolute(line)) files.push(line);
  }
  return { diagnostics, files };
};


/**
 * What tsc reports only because it takes a file of a package without
 * `"type": "module"` for CommonJS (top-level await, TS1309; import.meta,
 * TS1470). The loader runs every definition file as an ES module whatever
 * its package says (./link.ts), so these would refuse what runs: the check
 * follows the loader. tsc still types such a file's awaits and import.meta.
 */
const onlyAsCommonJs = /^TS(1309|1470):/;

type CachedCheck = { inputs: HashedInput[]; diagnostics: TsDiagnostic[] };

/** Of a check's inputs, the user's files and the package.json files there are on their paths (not imgc's own). */
const watched = (inputs: readonly HashedInput[]): string[] => {
  const read = inputs.map((i) => i.file).filter((f) => isUsersFile(f) && path.basename(f) !== 'package.json');
  return decidingFiles(read).filter((f) => path.basename(f) !== 'package.json' || existsSync(f));
};

const inNodeModules = (file: string) => file.includes(`${path.sep}node_modules${path.sep}`);

/**
 * Every file that decides the answer for the files tsc read (`--listFiles`,
 * which names no package.json): the files themselves outside node_modules;
 * for each, the package.json files TypeScript consults for its module format
 * (`"type"`), from its directory up to the first that exists (the absent
 * ones too: one created there changes it); and for what it read in
 * node_modules, each package's package.json (its version), not its every
 * file. The generated tsconfig and imgc's and TypeScript's versions are in
 * the cache key; the user's tsconfig.json is not read (`tsconfigFor`).
 */
export const decidingFiles = (files: readonly string[]): string[] => {
  const out = new Set<string>();
  const seen = new Set<string>();
  for (const file of files) {
    if (inNodeModules(file)) {
      const i = file.lastIndexOf(`${path.sep}node_modules${path.sep}`) + `${path.sep}node_modules${path.sep}`.length;
      const parts = file.slice(i).split(path.sep);
      out.add(path.join(file.slice(0, i), ...parts.slice(0, parts[0]!.startsWith('@') ? 2 : 1), 'package.json'));
      continue;
    }
    out.add(file);
    for (let dir = path.dirname(file); !seen.has(dir); dir = path.dirname(dir)) {
      seen.add(dir);
      const pj = path.join(dir, 'package.json');
      out.add(pj);
      if (existsSync(pj) || path.dirname(dir) === dir) break;
    }
  }
  return [...out];
};

/**
 * TypeScript's diagnostics for the definition `file` (absolute) and the local
 * files it imports, within `timeoutMs`. Each is IMGC1001 here; the loader
 * makes them IMGC1006 when the file cannot be parsed (tsc then reports its
 * syntax errors only).
 */
export const typecheck = async (file: string, timeoutMs: number): Promise<{ diagnostics: Diagnostic[]; files: string[]; inputs?: HashedInput[] }> => {
  const dir = path.dirname(file);
  const answer = (ds: TsDiagnostic[], inputs: HashedInput[]) => ({
    inputs,
    diagnostics: ds.filter((d) => !onlyAsCommonJs.test(d.message)).map((d) => diagnostic('IMGC1001', d.message, d.file !== undefined && d.line !== undefined ? { loc: locOf(dir, d.file, d.line, d.column ?? 1) } : {})),
    // The user's files the compiler read, and the package.json files that decide them: what `imgc check --watch` watches.
    files: watched(inputs),
  });
  const config = tsconfigFor(file);
  const key = `${sha256(`${cacheSalt}\0${config}`)}.json`;
  const cached = readCached('typecheck', key);
  if (cached !== undefined) {
    const entry = JSON.parse(cached) as CachedCheck;
    if (inputsUnchanged(entry.inputs)) return answer(entry.diagnostics, entry.inputs);
  }
  let { code, timedOut, out, err, parsed } = await runTsc(config, dir, timeoutMs);
  // Node's types double the compiler's work: only for a definition that uses Node.
  if (hasNodeTypes(file) && parsed.diagnostics.some((d) => /^TS(2580|2584|2591|2592|2867|2868):|^TS2307: .*'node:|^TS2339: .* on type 'ImportMeta'/.test(d.message))) ({ code, timedOut, out, err, parsed } = await runTsc(tsconfigFor(file, true), dir, timeoutMs));
  // 0: clean; 1 and 2: diagnostics were reported. Anything else is TypeScript failing.
  if (timedOut || code === null || code > 2 || (code !== 0 && parsed.diagnostics.length === 0)) {
    const why = timedOut ? `it took longer than ${timeoutMs / 1000} s` : `tsc exited with ${code ?? 'a signal'}: ${(err || out).trim().split('\n').slice(-3).join(' ') || 'no output'}`;
    return { diagnostics: [diagnostic('IMGC1001', `TypeScript could not check this definition (${why})`, { loc: locOf(dir, file, 1, 1), hint: 'split very long chains of steps into modules (defineModule) of a few hundred steps each, or pass --no-typecheck' })], files: [file] };
  }
  const diagnostics = parsed.diagnostics.filter((d) => d.file === undefined || isUsersFile(d.file));
  // The user's files first: an edit is found at the first file compared, not after imgc's declarations.
  const deciding = decidingFiles(parsed.files);
  const inputs = hashInputs([...deciding.filter(isUsersFile), ...deciding.filter((f) => !isUsersFile(f))]);
  writeCached('typecheck', key, JSON.stringify({ inputs, diagnostics } satisfies CachedCheck));
  return answer(diagnostics, inputs);
};
