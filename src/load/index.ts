// Loads a definition: type-checks it with the TypeScript compiler API, then
// evaluates it and turns its default export into IR. Every failure becomes a
// diagnostic with a location; nothing here prints or exits.
import { existsSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type ts from 'typescript';
import { readCached, sha256, writeCached } from '../util/cache.js';
import { cacheSalt, saveTypescriptCode, transpile, typescript } from './transpile.js';
import { linkDefinition, type Entries, type Linked } from './link.js';
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import { validateImage } from '../check/validate.js';
import { setDefinitionDir } from '../dsl/location.js';
import type { Image, SourceLocation } from '../ir/schema.js';
import type { PackageCatalog } from '../dsl/types.js';
import { resolveVariables, type GivenValue } from './variables.js';

export type { GivenValue } from './variables.js';

export interface LoadedDefinition {
  ir?: Image;
  catalog?: PackageCatalog;
  diagnostics: Diagnostic[];
  /** Absolute directory of the definition; IR locations are relative to it. */
  dir: string;
}

export interface LoadOptions {
  /** Run the TypeScript type-check (default true). */
  typecheck?: boolean;
  /** Values of the definition's variables, highest precedence first (see ./variables.ts). */
  vars?: readonly GivenValue[];
}

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/src (built) or src (tests); the entry points beside it. */
const srcRoot = path.resolve(here, '..');
const entry = (name: string) => {
  const js = path.join(srcRoot, `${name}.js`);
  return existsSync(js) ? js : path.join(srcRoot, `${name}.ts`);
};
const imgcEntry = entry('index');
const stdlibEntry = path.join(path.dirname(srcRoot), 'stdlib', path.basename(imgcEntry));
const imgcTypes = imgcEntry.replace(/\.js$/, '.d.ts');

const locOf = (dir: string, file: string, line: number, column: number): SourceLocation => ({
  file: path.relative(dir, file).split(path.sep).join('/'),
  line,
  column,
});

const typeRoots = [path.resolve(srcRoot, '..', '..', 'node_modules', '@types'), path.resolve(srcRoot, '..', 'node_modules', '@types')].filter(existsSync);
const nodeTypesAvailable = typeRoots.some((r) => existsSync(path.join(r, 'node')));

// Node's own types are large (a third of the check's time): a definition gets
// them only when it uses Node (process, node:fs, ...) — see typecheck().
const compilerOptions = (t: typeof ts, withNode: boolean): ts.CompilerOptions => {
  return {
    strict: true,
    noEmit: true,
    target: t.ScriptTarget.ES2022,
    module: t.ModuleKind.NodeNext,
    moduleResolution: t.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts'],
    types: withNode && nodeTypesAvailable ? ['node'] : [],
    typeRoots,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    paths: { imgc: [imgcTypes], 'imgc/stdlib': [stdlibEntry.replace(/\.js$/, '.d.ts')] },
  };
};

/** TS codes that mean "this file uses Node's APIs": retry with Node's types. */
const needsNodeTypes = new Set([2580, 2591, 2592, 2867, 2868]);

const runTypecheck = (file: string, dir: string): { diagnostics: Diagnostic[]; inputs: string[] } => {
  const t = typescript();
  const ownDirs = [srcRoot, path.dirname(stdlibEntry)].map((d) => d + path.sep);
  const isUsers = (f: string) => !f.includes('/node_modules/') && !ownDirs.some((d) => path.resolve(f).startsWith(d));
  const attempt = (withNode: boolean) => {
    const program = t.createProgram([file], compilerOptions(t, withNode));
    const sources = program.getSourceFiles().filter((sf) => !sf.isDeclarationFile && isUsers(sf.fileName));
    const syntactic = sources.flatMap((sf) => program.getSyntacticDiagnostics(sf));
    const all = syntactic.length > 0 ? syntactic : [...program.getOptionsDiagnostics(), ...sources.flatMap((sf) => program.getSemanticDiagnostics(sf))];
    // Everything outside node_modules that the result depends on: the user's
    // files and, in a checkout, imgc's own declarations.
    const inputs = program.getSourceFiles().map((sf) => sf.fileName).filter((f) => !f.includes('/node_modules/'));
    return { program, all, syntactic: syntactic.length > 0, inputs };
  };
  let run = attempt(false);
  if (!run.syntactic && nodeTypesAvailable && run.all.some((d) => needsNodeTypes.has(d.code) || (d.code === 2307 && /'node:/.test(String(d.messageText))))) run = attempt(true);
  // Transpile the user's files now, while TypeScript is loaded, so that importing them finds them cached.
  if (!run.syntactic) for (const sf of run.program.getSourceFiles()) if (!sf.isDeclarationFile && isUsers(sf.fileName)) transpile(sf.fileName, readFileSync(sf.fileName, 'utf8'));
  saveTypescriptCode();
  const code = run.syntactic ? 'IMGC1006' : 'IMGC1001';
  const diagnostics = run.all.map((d) => {
    const message = `TS${d.code}: ${t.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    if (!d.file || d.start === undefined) return diagnostic(code, message);
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return diagnostic(code, message, { loc: locOf(dir, d.file.fileName, line + 1, character + 1) });
  });
  return { diagnostics, inputs: run.inputs };
};

interface CachedCheck {
  inputs: { file: string; sha256: string }[];
  diagnostics: Diagnostic[];
}

const hashFile = (f: string): string | undefined => {
  try {
    return sha256(readFileSync(f));
  } catch {
    return undefined;
  }
};

/**
 * TypeScript's diagnostics for the definition and the local files it imports.
 * The result is cached with the hash of every file it read (outside
 * node_modules), so an unchanged definition is not type-checked again.
 */
export const typecheck = async (file: string, dir: string): Promise<Diagnostic[]> => {
  const key = `${sha256(`${cacheSalt}\0${file}`)}.json`;
  const cached = readCached('typecheck', key);
  if (cached !== undefined) {
    const entry = JSON.parse(cached) as CachedCheck;
    if (entry.inputs.every((i) => hashFile(i.file) === i.sha256)) return entry.diagnostics;
  }
  let checked: Awaited<ReturnType<typeof runTypecheck>>;
  try {
    checked = runTypecheck(file, dir);
  } catch (e) {
    // TypeScript's binder recurses once per chained call: ~1000 calls in
    // one expression overflow its stack. Not cached: a retry may succeed.
    if (!(e instanceof RangeError)) throw e;
    return [
      diagnostic('IMGC1001', `TypeScript could not check this definition (${e.message})`, {
        loc: locOf(dir, file, 1, 1),
        hint: 'split very long chains of steps into modules (defineModule) of a few hundred steps each, or pass --no-typecheck',
      }),
    ];
  }
  const { diagnostics, inputs } = checked;
  const hashed = inputs.map((f) => ({ file: f, sha256: hashFile(f) ?? '' }));
  writeCached('typecheck', key, JSON.stringify({ inputs: hashed, diagnostics } satisfies CachedCheck));
  return diagnostics;
};

const entries: Entries = { imgc: pathToFileURL(imgcEntry).href, stdlib: pathToFileURL(stdlibEntry).href };

let hooksRegistered = false;
const registerHooks = async () => {
  if (hooksRegistered) return;
  hooksRegistered = true;
  // Loaded before the hooks exist, so that each of their modules is not sent through the hooks thread.
  await Promise.all([import(entries.imgc), import(entries.stdlib)]);
  const hooks = path.join(here, existsSync(path.join(here, 'hooks.js')) ? 'hooks.js' : 'hooks.ts');
  register(pathToFileURL(hooks), { data: { imgcEntry: entries.imgc, stdlibEntry: entries.stdlib } });
};

/** The URL to import the definition from: linked in-thread when it can be (see ./link.ts), else through the module hooks. */
const importableUrl = async (file: string): Promise<string> => {
  // Stack traces and step locations are read through the modules' source maps.
  process.setSourceMapsEnabled(true);
  let linked: Linked;
  try {
    linked = process.env['IMGC_LOADER'] === 'hooks' ? { needsHooks: 'IMGC_LOADER=hooks' } : linkDefinition(file, entries);
  } catch {
    linked = { needsHooks: 'linking failed' }; // the hooks meet the same problem and report it as they always did
  }
  if ('url' in linked) return linked.url;
  await registerHooks();
  return pathToFileURL(file).href;
};

interface IRSource {
  toIR(source?: string): unknown;
  packageCatalog?: PackageCatalog;
}
const isImage = (v: unknown): v is IRSource => typeof v === 'object' && v !== null && typeof (v as IRSource).toIR === 'function';

/** Where in the user's files an error was thrown, from its (source-mapped) stack. */
const thrownAt = (err: unknown, dir: string): SourceLocation | undefined => {
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  for (const line of stack.split('\n')) {
    const m = /(file:\/\/[^\s()]+|\/[^\s():]+):(\d+):(\d+)/.exec(line);
    if (!m) continue;
    const file = m[1]!.startsWith('file:') ? fileURLToPath(m[1]!) : m[1]!;
    if ([srcRoot, path.dirname(stdlibEntry)].some((d) => file.startsWith(d + path.sep))) continue;
    if (file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    return locOf(dir, file, Number(m[2]), Number(m[3]));
  }
  return undefined;
};

export const loadDefinition = async (file: string, opts: LoadOptions = {}): Promise<LoadedDefinition> => {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  if (!existsSync(abs)) return { dir, diagnostics: [diagnostic('IMGC1005', `cannot read definition '${file}': no such file`)] };
  try {
    readFileSync(abs);
  } catch (e) {
    return { dir, diagnostics: [diagnostic('IMGC1005', `cannot read definition '${file}': ${(e as Error).message}`)] };
  }
  const diagnostics = opts.typecheck === false ? [] : await typecheck(abs, dir);
  if (diagnostics.some((d) => d.code === 'IMGC1006')) return { dir, diagnostics };

  const url = await importableUrl(abs);
  setDefinitionDir(dir);
  let exported: unknown;
  try {
    const mod = (await import(url)) as { default?: unknown };
    exported = mod.default;
  } catch (err) {
    const message = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
    return { dir, diagnostics: [...diagnostics, diagnostic('IMGC1002', message, { loc: thrownAt(err, dir) })] };
  } finally {
    setDefinitionDir(undefined);
  }
  if (!isImage(exported)) {
    return { dir, diagnostics: [...diagnostics, diagnostic('IMGC1003', `'${path.basename(abs)}' has no default export of an image`, { hint: 'end the file with `export default image(...)...`' })] };
  }
  let raw: unknown;
  try {
    raw = exported.toIR(path.basename(abs));
  } catch (err) {
    return { dir, diagnostics: [...diagnostics, diagnostic('IMGC1002', (err as Error).message, { loc: thrownAt(err, dir) })] };
  }
  const resolved = resolveVariables((raw as { phases?: unknown } | null)?.phases, opts.vars ?? []);
  if (resolved.diagnostics.length) return { dir, diagnostics: [...diagnostics, ...resolved.diagnostics] };
  if (resolved.variables?.length && typeof raw === 'object' && raw !== null) raw = { ...raw, variables: resolved.variables };
  const { ir, diagnostics: invalid } = validateImage(raw);
  if (!ir) return { dir, diagnostics: [...diagnostics, ...invalid] };
  return { dir, ir, ...(exported.packageCatalog ? { catalog: exported.packageCatalog } : {}), diagnostics };
};
