// Loads a definition: type-checks it with the TypeScript compiler API, then
// evaluates it and turns its default export into IR. Every failure becomes a
// diagnostic with a location; nothing here prints or exits.
import { existsSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import { setDefinitionDir } from '../dsl/location.js';
import { Image, type SourceLocation } from '../ir/schema.js';
import type { PackageCatalog } from '../dsl/types.js';

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

const compilerOptions = (): ts.CompilerOptions => {
  const typeRoots = [path.resolve(srcRoot, '..', '..', 'node_modules', '@types'), path.resolve(srcRoot, '..', 'node_modules', '@types')].filter(existsSync);
  const hasNodeTypes = typeRoots.some((r) => existsSync(path.join(r, 'node')));
  return {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts'],
    types: hasNodeTypes ? ['node'] : [],
    typeRoots,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    paths: { imgc: [imgcTypes], 'imgc/stdlib': [stdlibEntry.replace(/\.js$/, '.d.ts')] },
  };
};

/** TypeScript's diagnostics for the definition and the local files it imports. */
export const typecheck = (file: string, dir: string): Diagnostic[] => {
  const program = ts.createProgram([file], compilerOptions());
  const ownDirs = [srcRoot, path.dirname(stdlibEntry)].map((d) => d + path.sep);
  const isUsers = (f: string) => !f.includes('/node_modules/') && !ownDirs.some((d) => path.resolve(f).startsWith(d));
  const sources = program.getSourceFiles().filter((sf) => !sf.isDeclarationFile && isUsers(sf.fileName));
  const syntactic = sources.flatMap((sf) => program.getSyntacticDiagnostics(sf));
  const all = syntactic.length > 0 ? syntactic : [...program.getOptionsDiagnostics(), ...sources.flatMap((sf) => program.getSemanticDiagnostics(sf))];
  const code = syntactic.length > 0 ? 'IMGC1006' : 'IMGC1001';
  return all.map((d) => {
    const message = `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    if (!d.file || d.start === undefined) return diagnostic(code, message);
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return diagnostic(code, message, { loc: locOf(dir, d.file.fileName, line + 1, character + 1) });
  });
};

let hooksRegistered = false;
const registerHooks = () => {
  if (hooksRegistered) return;
  hooksRegistered = true;
  process.setSourceMapsEnabled(true);
  const hooks = path.join(here, existsSync(path.join(here, 'hooks.js')) ? 'hooks.js' : 'hooks.ts');
  register(pathToFileURL(hooks), { data: { imgcEntry: pathToFileURL(imgcEntry).href, stdlibEntry: pathToFileURL(stdlibEntry).href } });
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
  const diagnostics = opts.typecheck === false ? [] : typecheck(abs, dir);
  if (diagnostics.some((d) => d.code === 'IMGC1006')) return { dir, diagnostics };

  registerHooks();
  setDefinitionDir(dir);
  let exported: unknown;
  try {
    const mod = (await import(pathToFileURL(abs).href)) as { default?: unknown };
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
  const parsed = Image.safeParse(raw);
  if (!parsed.success) {
    const invalid = parsed.error.issues.map((i) => diagnostic('IMGC1004', `invalid ${i.path.join('.')}: ${i.message}`, { loc: nearestLoc(raw, i.path) }));
    return { dir, diagnostics: [...diagnostics, ...invalid] };
  }
  return { dir, ir: parsed.data, ...(exported.packageCatalog ? { catalog: exported.packageCatalog } : {}), diagnostics };
};

/** The location of the innermost IR object on `at` that has one (the step). */
const nearestLoc = (root: unknown, at: readonly PropertyKey[]): SourceLocation | undefined => {
  let node: unknown = root;
  let found: SourceLocation | undefined;
  for (const key of at) {
    if (typeof node !== 'object' || node === null) break;
    const loc = (node as { loc?: SourceLocation }).loc;
    if (loc) found = loc;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  const own = typeof node === 'object' && node !== null ? (node as { loc?: SourceLocation }).loc : undefined;
  return own ?? found;
};
