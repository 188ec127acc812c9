// The in-thread way to import a user's TypeScript definition. Node 20 runs
// module hooks on a separate thread, and starting it and waiting on it for
// every module costs more than the rest of a warm `imgc check` together. So
// when every module of the definition is a TypeScript file that imports only
// other such files, `imgc`, `imgc/stdlib` and Node's built-ins, each is
// written to imgc's cache as a plain ES module, its specifiers resolved to
// absolute URLs, and imported from there: the same text the hooks would
// serve, resolved as the hooks would resolve it. Anything else (a package,
// a .js file, `import.meta.resolve`) goes through the hooks as before.
import { existsSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cacheDir, readCached, sha256, writeCached } from '../util/cache.js';
import { cacheSalt, linkModule, transpile } from './transpile.js';

export interface Entries {
  /** URLs `imgc` and `imgc/stdlib` resolve to. */
  imgc: string;
  stdlib: string;
}

/** The URL to import; or why the module hooks are needed; or the file whose syntax errors forbid running it. */
export type Linked = { url: string } | { needsHooks: string } | { syntaxErrors: string };

const isTypeScript = (file: string) => /\.m?ts$/.test(file);

/** What `specifier` in `from` names: a URL to import as is, another user file, or a reason to use the hooks. */
const resolveSpecifier = (specifier: string, from: string, entries: Entries): { url: string } | { file: string } | { needsHooks: string } => {
  if (specifier === 'imgc') return { url: entries.imgc };
  if (specifier === 'imgc/stdlib') return { url: entries.stdlib };
  if (isBuiltin(specifier)) return { url: specifier };
  const relative = /^\.\.?\//.test(specifier);
  if (!relative && !specifier.startsWith('/') && !specifier.startsWith('file:')) return { needsHooks: `'${specifier}' is a package` };
  const target = specifier.startsWith('file:') ? fileURLToPath(specifier) : path.resolve(path.dirname(from), specifier);
  // As the hooks do (and tsc allows): './x.js' names './x.ts' when only that exists.
  if (relative && target.endsWith('.js') && !existsSync(target) && existsSync(target.replace(/\.js$/, '.ts'))) return { file: target.replace(/\.js$/, '.ts') };
  if (isTypeScript(target) && existsSync(target)) return { file: target };
  return { needsHooks: `'${specifier}' is not a TypeScript file of the definition` };
};

/**
 * The definition `file` and the files it imports, linked into imgc's cache;
 * the URL to import, or why the module hooks are needed.
 */
export const linkDefinition = (file: string, entries: Entries): Linked => {
  if (!isTypeScript(file)) return { needsHooks: 'the definition is not a TypeScript file' };
  const urls = new Map<string, string>();
  const link = (source: string): string | Exclude<Linked, { url: string }> => {
    const known = urls.get(source);
    if (known) return known;
    const text = readFileSync(source, 'utf8');
    const module = transpile(source, text);
    if (module.syntaxErrors) return { syntaxErrors: source };
    if (module.needsHooks) return { needsHooks: `${path.basename(source)} uses ${module.needsHooks}` };
    // Named by the file and its own text, not by what it imports: a cycle of imports has no other fixed point.
    const key = `${sha256(`${cacheSalt}\0${source}\0${text}`)}.mjs`;
    const url = pathToFileURL(path.join(cacheDir(), 'modules', key)).href;
    urls.set(source, url);
    const resolved = new Map<string, string>();
    for (const specifier of module.specifiers) {
      if (resolved.has(specifier)) continue;
      const r = resolveSpecifier(specifier, source, entries);
      if ('needsHooks' in r) return r;
      const target = 'file' in r ? link(r.file) : r.url;
      if (typeof target !== 'string') return target;
      resolved.set(specifier, target);
    }
    // What a file imports can change while its own text does not: the cached module is rewritten when its text differs.
    const linked = linkModule(module, (specifier) => resolved.get(specifier)!);
    if (readCached('modules', key) !== linked) {
      writeCached('modules', key, linked);
      if (!existsSync(fileURLToPath(url))) return { needsHooks: "imgc's cache cannot be written" };
    }
    return url;
  };
  const url = link(file);
  return typeof url === 'string' ? { url } : url;
};
