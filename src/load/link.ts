// The definition's modules, linked in the evaluation's own thread
// (./evaluate.ts), which Node starts with --experimental-vm-modules: each of
// the user's TypeScript files is transpiled by esbuild, once, into a
// vm.SourceTextModule whose source map the locations are read through
// (../dsl/location.ts); `imgc` and `imgc/stdlib` are this installation's
// modules, the very instances the evaluation reads; `./x.js` names `./x.ts`
// when only that exists (as tsc allows). Everything else (packages, Node's
// modules, JSON, the user's JavaScript) Node loads itself, resolved from the
// importing file. Node 20's module hooks did the same from a thread of their
// own, which the evaluation waited for (docs/performance.md).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire, isBuiltin, SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { platformBinary } from '../host/binaries.js';
import { readCached, sha256, writeCached } from '../util/cache.js';
import { registerSourceMap } from '../dsl/location.js';
import { isUsersFile } from '../util/package-root.js';
import { imgcEntry, stdlibEntry, syntaxErrorName } from './entries.js';

/** esbuild's own binary: its JavaScript API costs more to load than the transform itself (and starts a service for one call). */
const esbuildPackage = createRequire(import.meta.url).resolve('esbuild/package.json');
const esbuild = platformBinary(esbuildPackage, `@esbuild/${process.platform}-${process.arch}`, 'bin/esbuild') ?? path.join(path.dirname(esbuildPackage), 'bin', 'esbuild');
const esbuildVersion = (JSON.parse(readFileSync(esbuildPackage, 'utf8')) as { version: string }).version;

/** What esbuild is given for `file` (the running Node as its target): all of it is in the transpile cache's key. */
const transpileArgs = (file: string): string[] => [
  '--loader=ts',
  '--format=esm',
  `--target=node${process.versions.node}`,
  // Positions only: the source text is the file itself (a third of 10,000 steps' output, parsed for nothing).
  '--sourcemap=inline',
  '--sources-content=false',
  `--sourcefile=${file}`,
  '--log-level=error',
  '--color=false',
  '--tsconfig-raw={"compilerOptions":{"verbatimModuleSyntax":false}}',
];

/** `text` of `file` as an ES module with an inline source map; or esbuild's first error, located. */
const transpile = (args: string[], text: string): { code: string } | { error: string; line: number; column: number } => {
  const r = spawnSync(esbuild, args, { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status === 0) return { code: r.stdout };
  // ✘ [ERROR] Unexpected ";"  …  /path/file.ts:3:18:  (the column 0-based)
  const message = /\[ERROR\] (.*)/.exec(r.stderr)?.[1] ?? (r.error?.message || r.stderr.trim() || `esbuild exited with ${r.status}`);
  const at = /:(\d+):(\d+):\s*$/m.exec(r.stderr);
  return { error: message, line: Number(at?.[1] ?? 1), column: Number(at?.[2] ?? 0) + 1 };
};

/** The transpiled text of a TypeScript file, cached by esbuild's version, its arguments (the path the source map names, the Node it targets) and the content: an unchanged file does not start esbuild. */
const transpiled = (file: string, url: string): string => {
  const text = readFileSync(file, 'utf8');
  const args = transpileArgs(file);
  const key = `${sha256(`${esbuildVersion}\0${args.join('\0')}\0${text}`)}.mjs`;
  let code = readCached('transpiled', key);
  if (code === undefined) {
    const out = transpile(args, text);
    if (!('code' in out)) throw Object.assign(new SyntaxError(out.error), { name: syntaxErrorName, stack: `${syntaxErrorName}: ${out.error}\n    at ${url}:${out.line}:${out.column}` });
    writeCached('transpiled', key, (code = out.code));
  }
  return code;
};

/** The inline source map esbuild writes last, parsed when a location is first asked of it. */
const inlineMap = (code: string) => (): SourceMap | undefined => {
  const m = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/.exec(code);
  return m ? new SourceMap(JSON.parse(Buffer.from(m[1]!, 'base64').toString('utf8')) as ConstructorParameters<typeof SourceMap>[0]) : undefined;
};

/** The files the definition's modules were loaded from; impure when one of its files imported Node's modules, a package or JavaScript of its own (what those read is unknown). */
export type ModulesLoaded = { files: string[]; impure: boolean };

type Attributes = { readonly [key: string]: string | undefined };

/** Node writes "VM Modules is an experimental feature" once, when the first such module is made: not for a definition's user to read. */
const quietly = <T>(make: () => T): T => {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: never[]) => {
    if (!String(warning instanceof Error ? warning.message : warning).startsWith('VM Modules')) emit.call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return make();
  } finally {
    process.emitWarning = emit;
  }
};

const isUsers = (url: string) => url.startsWith('file:') && isUsersFile(fileURLToPath(url));
const isTypeScript = (url: string) => url.startsWith('file:') && /\.m?ts$/.test(url);

/**
 * Imports the definition `file` (its namespace), linking its TypeScript modules here and loading the
 * rest through Node; `loaded` says what it was made of.
 */
export const importDefinition = async (file: string): Promise<{ namespace: Record<string, unknown>; loaded: ModulesLoaded }> => {
  const loaded: ModulesLoaded = { files: [], impure: false };
  const own = new Map([
    ['imgc', pathToFileURL(imgcEntry).href],
    ['imgc/stdlib', pathToFileURL(stdlibEntry).href],
  ]);
  // One module per URL (and JSON's attributes): a module imported twice, or in a cycle, is one instance.
  const modules = new Map<string, vm.Module | Promise<vm.Module>>();

  /** Where `specifier` names from `parent`, as `import.meta.resolve` says it (a file that is not there too). */
  const resolve = (specifier: string, parent: string): string => {
    const mine = own.get(specifier);
    if (mine) return mine;
    if (isBuiltin(specifier) || !/^(\.{0,2}\/|file:)/.test(specifier)) {
      if (isUsers(parent)) loaded.impure = true;
      // The second argument is behind --experimental-import-meta-resolve on Node 20 (the worker has it).
      return (import.meta.resolve as (s: string, p: string) => string)(specifier, parent);
    }
    const url = new URL(specifier, parent);
    if (isTypeScript(parent) && /^\.\.?\/.*\.m?js$/.test(specifier) && !existsSync(fileURLToPath(url))) {
      const asTs = new URL(specifier.replace(/js$/, 'ts'), parent);
      if (existsSync(fileURLToPath(asTs))) return asTs.href;
    }
    return url.href;
  };

  /** The module `specifier` imports from `parent`: a file that is not there, or a directory, refused as Node refuses it, naming `parent` (Node, loading it for us, would name imgc's file). */
  const imported = (specifier: string, parent: string, attributes: Attributes): vm.Module | Promise<vm.Module> => {
    const url = resolve(specifier, parent);
    if (url.startsWith('file:')) {
      const file = fileURLToPath(url);
      const found = statSync(file, { throwIfNoEntry: false });
      const from = parent.startsWith('file:') ? fileURLToPath(parent) : parent;
      if (!found) throw Object.assign(new Error(`Cannot find module '${file}' imported from ${from}`), { code: 'ERR_MODULE_NOT_FOUND' });
      if (found.isDirectory()) throw Object.assign(new Error(`Directory import '${file}' is not supported resolving ES modules imported from ${from}`), { code: 'ERR_UNSUPPORTED_DIR_IMPORT' });
    }
    return moduleAt(url, attributes);
  };

  /** A module Node loads itself, as a module of the graph: its exports, read once it is loaded. */
  const native = async (url: string, attributes: Attributes): Promise<vm.Module> => {
    // JSON is read whole; JavaScript of the user's may import more than can be seen from here.
    if (attributes['type'] === 'json' && url.startsWith('file:')) loaded.files.push(fileURLToPath(url));
    else if (isUsers(url)) loaded.impure = true;
    const type = attributes['type'];
    // Node's one type of import attributes.
    if (type !== undefined && type !== 'json') throw new TypeError(`import attribute type "${type}" is unsupported (${url})`);
    const ns = (type ? await import(url, { with: { type: 'json' } }) : await import(url)) as Record<string, unknown>;
    const names = Object.keys(ns);
    return quietly(() => new vm.SyntheticModule(names, function (this: vm.SyntheticModule) { for (const n of names) this.setExport(n, ns[n]); }, { identifier: url }));
  };

  const typescript = (url: string): vm.Module => {
    const file = fileURLToPath(url);
    loaded.files.push(file);
    const code = transpiled(file, url);
    registerSourceMap(url, inlineMap(code));
    return quietly(
      () =>
        new vm.SourceTextModule(code, {
          identifier: url,
          initializeImportMeta: (meta) => Object.assign(meta, { url, filename: file, dirname: path.dirname(file), resolve: (s: string) => resolve(s, url) }),
          importModuleDynamically: (async (specifier: string, _: unknown, attributes: Attributes = {}) => {
            const m = await imported(specifier, url, attributes);
            if (m.status === 'unlinked') await m.link(link);
            if (m.status === 'linked') await m.evaluate();
            return m.namespace;
          }) as never,
        }),
    );
  };

  const moduleAt = (url: string, attributes: Attributes): vm.Module | Promise<vm.Module> => {
    const key = attributes['type'] ? `${url}\0${attributes['type']}` : url;
    let m = modules.get(key);
    if (!m) modules.set(key, (m = isTypeScript(url) ? typescript(url) : native(url, attributes)));
    return m;
  };

  const link: vm.ModuleLinker = (specifier, referrer, extra) => imported(specifier, referrer.identifier, extra.attributes ?? {});

  const url = pathToFileURL(file).href;
  const entry = await moduleAt(url, {});
  await entry.link(link);
  await entry.evaluate();
  return { namespace: entry.namespace as Record<string, unknown>, loaded };
};
