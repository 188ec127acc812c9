// Module hooks of the evaluation process (./evaluate.ts), on Node's hooks
// thread: `imgc` and `imgc/stdlib` resolve to this installation, `./x.js`
// names `./x.ts` when only that exists (as tsc allows), and a TypeScript file
// is transpiled by esbuild, once, with an inline source map so that stack
// traces and step locations point at the user's lines. Everything else
// (packages from the user's node_modules, JSON, import.meta, top-level await)
// is Node's own.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { TransformFailure } from 'esbuild';
import { readCached, sha256, writeCached } from '../util/cache.js';
import { syntaxErrorName } from './entries.js';

export interface HookData {
  imgc: string;
  stdlib: string;
  /** Names the transpile cache's entries (see `load`). */
  esbuildVersion: string;
}
let data: HookData | undefined;

export const initialize = (d: HookData): void => {
  data = d;
};


interface Resolved {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type Next<C, R> = (specifier: string, context: C) => Promise<R>;

export const resolve = async (specifier: string, context: { parentURL?: string }, next: Next<{ parentURL?: string }, Resolved>): Promise<Resolved> => {
  if (data && specifier === 'imgc') return { url: data.imgc, shortCircuit: true };
  if (data && specifier === 'imgc/stdlib') return { url: data.stdlib, shortCircuit: true };
  if (context.parentURL && /\.m?ts$/.test(context.parentURL) && /^\.\.?\/.*\.m?js$/.test(specifier)) {
    const asJs = new URL(specifier, context.parentURL);
    const asTs = new URL(specifier.replace(/js$/, 'ts'), context.parentURL);
    if (!existsSync(fileURLToPath(asJs)) && existsSync(fileURLToPath(asTs))) return { url: asTs.href, shortCircuit: true };
  }
  return next(specifier, context);
};

interface Loaded {
  format: string;
  source?: string | ArrayBuffer | Uint8Array;
  shortCircuit?: boolean;
}

export const load = async (url: string, context: { format?: string | null }, next: Next<{ format?: string | null }, Loaded>): Promise<Loaded> => {
  if (!url.startsWith('file:') || !/\.m?ts$/.test(url)) return next(url, context);
  const file = fileURLToPath(url);
  const text = await readFile(file, 'utf8');
  // Cached by path (the source map names it) and content: an unchanged file does not start esbuild.
  const key = `${sha256(`${data?.esbuildVersion}\0${file}\0${text}`)}.mjs`;
  const cached = readCached('transpiled', key);
  if (cached !== undefined) return { format: 'module', source: cached, shortCircuit: true };
  const { transform } = await import('esbuild');
  try {
    const { code } = await transform(text, {
      loader: 'ts',
      format: 'esm',
      target: `node${process.versions.node}`,
      sourcemap: 'inline',
      sourcefile: file,
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: false } },
    });
    writeCached('transpiled', key, code);
    return { format: 'module', source: code, shortCircuit: true };
  } catch (e) {
    const first = (e as Partial<TransformFailure>).errors?.[0];
    if (!first) throw e;
    const err = new SyntaxError(first.text);
    err.name = syntaxErrorName;
    err.stack = `${err.name}: ${first.text}\n    at ${url}:${first.location?.line ?? 1}:${(first.location?.column ?? 0) + 1}`;
    throw err;
  }
};
