// TypeScript for the loader, shared by the main thread (type-check) and the
// module-hooks thread (transpiling .ts on import).
//
// TypeScript is loaded with require(): importing its 9 MB CommonJS bundle
// through ESM makes Node scan the whole file for named exports first, half a
// second per thread. And the main thread, which has TypeScript loaded for
// the type-check anyway, transpiles the user's files into the cache before
// importing them, so the hooks thread finds them there and never loads it.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';
import { readCached, sha256, writeCached } from '../util/cache.js';

const require = createRequire(import.meta.url);

let loaded: typeof ts | undefined;
/** The typescript package, loaded on first use. */
export const typescript = (): typeof ts => (loaded ??= require('typescript') as typeof ts);

const versionOf = (pkgJson: string): string => (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
const srcRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const imgcPackageJson = [path.resolve(srcRoot, '..', 'package.json'), path.resolve(srcRoot, '..', '..', 'package.json')].find(existsSync);
/** What every cache entry of the loader depends on besides the user's files. */
export const cacheSalt = `imgc@${imgcPackageJson ? versionOf(imgcPackageJson) : '?'} typescript@${versionOf(require.resolve('typescript/package.json'))}`;

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
