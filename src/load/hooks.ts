// Module hooks of the evaluation (./evaluate.ts), on Node's hooks
// thread: `imgc` and `imgc/stdlib` resolve to this installation, `./x.js`
// names `./x.ts` when only that exists (as tsc allows), and a TypeScript file
// is transpiled by esbuild, once, with an inline source map so that stack
// traces and step locations point at the user's lines. Everything else
// (packages from the user's node_modules, JSON, import.meta, top-level await)
// is Node's own.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire, isBuiltin } from 'node:module';
import type { MessagePort } from 'node:worker_threads';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readCached, sha256, writeCached } from '../util/cache.js';
import { ownDirs, syntaxErrorName } from './entries.js';
import { platformBinary } from '../host/binaries.js';

/** esbuild's own binary: its JavaScript API costs more to load than the transform itself (and starts a service for one call). */
const esbuildPackage = createRequire(import.meta.url).resolve('esbuild/package.json');
const esbuild = platformBinary(esbuildPackage, `@esbuild/${process.platform}-${process.arch}`, 'bin/esbuild') ?? path.join(path.dirname(esbuildPackage), 'bin', 'esbuild');

/** `text` of `file` as an ES module with an inline source map; or esbuild's first error, located. */
const transpile = (file: string, text: string): { code: string } | { error: string; line: number; column: number } => {
  const args = ['--loader=ts', '--format=esm', `--target=node${process.versions.node}`, '--sourcemap=inline', `--sourcefile=${file}`, '--log-level=error', '--color=false'];
  const r = spawnSync(esbuild, [...args, '--tsconfig-raw={"compilerOptions":{"verbatimModuleSyntax":false}}'], { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status === 0) return { code: r.stdout };
  // ✘ [ERROR] Unexpected ";"  …  /path/file.ts:3:18:  (the column 0-based)
  const message = /\[ERROR\] (.*)/.exec(r.stderr)?.[1] ?? (r.error?.message || r.stderr.trim() || `esbuild exited with ${r.status}`);
  const at = /:(\d+):(\d+):\s*$/m.exec(r.stderr);
  return { error: message, line: Number(at?.[1] ?? 1), column: Number(at?.[2] ?? 0) + 1 };
};

/** The entries `imgc` and `imgc/stdlib` resolve to; esbuild's version, for the transpile cache's keys; a port that, asked, answers {@link ModulesLoaded}. */
export interface HookData {
  imgc: string;
  stdlib: string;
  esbuildVersion: string;
  port: MessagePort;
}
let data: HookData | undefined;

/** The files the definition's modules were loaded from; impure when one of its files imported Node's modules or a package (their effects are unknown). */
export type ModulesLoaded = { files: string[]; impure: boolean };
const loaded: ModulesLoaded = { files: [], impure: false };

export const initialize = (d: HookData): void => {
  data = d;
  d.port.on('message', () => d.port.postMessage(loaded));
  d.port.unref();
};

const isUsers = (url: string) => url.startsWith('file:') && !url.includes('/node_modules/') && !ownDirs.some((d) => fileURLToPath(url).startsWith(d));

type Resolved = { url: string; format?: string | null; shortCircuit?: boolean };
type Next<C, R> = (specifier: string, context: C) => Promise<R>;

export const resolve = async (specifier: string, context: { parentURL?: string }, next: Next<{ parentURL?: string }, Resolved>): Promise<Resolved> => {
  if (data && specifier === 'imgc') return { url: data.imgc, shortCircuit: true };
  if (data && specifier === 'imgc/stdlib') return { url: data.stdlib, shortCircuit: true };
  if (context.parentURL && isUsers(context.parentURL) && (isBuiltin(specifier) || !/^(\.{0,2}\/|file:)/.test(specifier))) loaded.impure = true;
  if (context.parentURL && /\.m?ts$/.test(context.parentURL) && /^\.\.?\/.*\.m?js$/.test(specifier)) {
    const asJs = new URL(specifier, context.parentURL);
    const asTs = new URL(specifier.replace(/js$/, 'ts'), context.parentURL);
    if (!existsSync(fileURLToPath(asJs)) && existsSync(fileURLToPath(asTs))) return { url: asTs.href, shortCircuit: true };
  }
  return next(specifier, context);
};

type Loaded = { format: string; source?: string | ArrayBuffer | Uint8Array; shortCircuit?: boolean };

export const load = async (url: string, context: { format?: string | null }, next: Next<{ format?: string | null }, Loaded>): Promise<Loaded> => {
  if (url.startsWith('file:')) loaded.files.push(fileURLToPath(url));
  if (!url.startsWith('file:') || !/\.m?ts$/.test(url)) return next(url, context);
  const file = fileURLToPath(url);
  const text = await readFile(file, 'utf8');
  // Cached by path (the source map names it) and content: an unchanged file does not start esbuild.
  const key = `${sha256(`${data?.esbuildVersion}\0${file}\0${text}`)}.mjs`;
  let source = readCached('transpiled', key);
  if (source === undefined) {
    const out = transpile(file, text);
    if (!('code' in out)) throw Object.assign(new SyntaxError(out.error), { name: syntaxErrorName, stack: `${syntaxErrorName}: ${out.error}\n    at ${url}:${out.line}:${out.column}` });
    writeCached('transpiled', key, (source = out.code));
  }
  return { format: 'module', source, shortCircuit: true };
};
