// TypeScript for the loader, shared by the main thread (type-check) and the
// module-hooks thread (transpiling .ts on import).
//
// TypeScript is loaded as CommonJS (see loadTypescript): importing its 9 MB
// bundle through ESM makes Node scan the whole file for named exports first,
// half a second per thread. And the main thread, which has TypeScript loaded for
// the type-check anyway, transpiles the user's files into the cache before
// importing them, so the hooks thread finds them there and never loads it.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';
import { readCached, sha256, writeCached } from '../util/cache.js';

const require = createRequire(import.meta.url);

let loaded: typeof ts | undefined;
/** The typescript package, loaded on first use (compiled with V8's code cache, see below). */
export const typescript = (): typeof ts => (loaded ??= loadTypescript());

const versionOf = (pkgJson: string): string => (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
const srcRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const imgcPackageJson = [path.resolve(srcRoot, '..', 'package.json'), path.resolve(srcRoot, '..', '..', 'package.json')].find(existsSync);
/** What every cache entry of the loader depends on besides the user's files. */
export const cacheSalt = `imgc@${imgcPackageJson ? versionOf(imgcPackageJson) : '?'} typescript@${versionOf(require.resolve('typescript/package.json'))}`;

// Compiling TypeScript's 9 MB of JavaScript, and then each function it runs,
// is a large part of a cold check. So it is loaded as require() would, but
// through vm.Script with V8's code cache (what v8-compile-cache does), kept in
// imgc's cache; V8 rejects a cache from another Node or V8 build by itself.
let codeCache: { script: vm.Script; key: string; saved: boolean } | undefined;
const loadTypescript = (): typeof ts => {
  const file = require.resolve('typescript');
  const source = readFileSync(file, 'utf8');
  const key = `${sha256(`${cacheSalt}\0${process.version}\0${process.arch}\0${file}\0${sha256(source)}`)}.bin`;
  const cachedData = readCached('v8', key, 'bytes');
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, ...(cachedData ? { cachedData } : {}) });
  codeCache = { script, key, saved: cachedData !== undefined && !script.cachedDataRejected };
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file));
  return module.exports as typeof ts;
};

/** Saves V8's code for TypeScript once it has type-checked (the functions it ran are compiled by then). */
export const saveTypescriptCode = (): void => {
  if (!codeCache || codeCache.saved) return;
  codeCache.saved = true;
  writeCached('v8', codeCache.key, codeCache.script.createCachedData());
};

// Cached by content and path (the source map names the file).
const cacheKey = (file: string, text: string): string => `${sha256(`${cacheSalt}\0${file}\0${text}`)}.mjs`;

/** `file`'s text as an ES module with an inline source map; cached, so TypeScript is loaded only on a miss. */
export const transpile = (file: string, text: string): string => {
  const key = cacheKey(file, text);
  const hit = readCached('transpiled', key);
  if (hit !== undefined) return hit;
  const t = typescript();
  const out = t.transpileModule(text, {
    fileName: file,
    compilerOptions: {
      module: t.ModuleKind.ESNext,
      target: t.ScriptTarget.ES2022,
      inlineSourceMap: true,
      inlineSources: true,
      verbatimModuleSyntax: false,
    },
  }).outputText;
  writeCached('transpiled', key, out);
  return out;
};
