// Node module hooks that let `imgc` import a user's TypeScript definition:
// `.ts` files are transpiled on load (with inline source maps, so stack
// traces and step locations point at the user's lines), `imgc` resolves to
// this installation, and `./x.js` falls back to `./x.ts` as tsc allows.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { linkModule, transpile } from './transpile.js';

interface HookData {
  imgcEntry: string;
  stdlibEntry: string;
}
let data: HookData | undefined;

export const initialize = (d: HookData): void => {
  data = d;
};

type Next<A extends unknown[], R> = (...args: A) => Promise<R>;
interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}

export const resolve = async (
  specifier: string,
  context: { parentURL?: string },
  next: Next<[string, { parentURL?: string }], ResolveResult>,
): Promise<ResolveResult> => {
  if (data && specifier === 'imgc') return { url: data.imgcEntry, shortCircuit: true };
  if (data && specifier === 'imgc/stdlib') return { url: data.stdlibEntry, shortCircuit: true };
  if (context.parentURL?.endsWith('.ts') && /^\.\.?\//.test(specifier) && specifier.endsWith('.js')) {
    const asTs = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    const asJs = new URL(specifier, context.parentURL);
    if (!existsSync(fileURLToPath(asJs)) && existsSync(fileURLToPath(asTs))) return { url: asTs.href, shortCircuit: true };
  }
  return next(specifier, context);
};

interface LoadResult {
  format: string;
  source?: string | ArrayBuffer | Uint8Array;
  shortCircuit?: boolean;
}

export const load = async (url: string, context: { format?: string | null }, next: Next<[string, { format?: string | null }], LoadResult>): Promise<LoadResult> => {
  if (!/\.m?ts$/.test(url) || !url.startsWith('file:')) return next(url, context);
  const file = fileURLToPath(url);
  return { format: 'module', source: linkModule(transpile(file, await readFile(file, 'utf8')), (specifier) => specifier), shortCircuit: true };
};

