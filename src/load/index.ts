// Loads a definition: type-checks it with the TypeScript compiler API while
// it evaluates it and turns its default export into IR. Every failure becomes a
// diagnostic with a location; nothing here prints or exits.
import { existsSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { linkDefinition, type Entries, type Linked } from './link.js';
import { imgcEntry, srcRoot, stdlibEntry } from './entries.js';
import { locOf, prefetchedTranspiles, typecheck } from './typecheck.js';
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

/** How to import the definition: linked in-thread when it can be (see ./link.ts), else through the module hooks. */
const link = (file: string): Linked => {
  if (process.env['IMGC_LOADER'] === 'hooks') return { needsHooks: 'IMGC_LOADER=hooks' };
  try {
    return linkDefinition(file, entries);
  } catch {
    return { needsHooks: 'linking failed' }; // the hooks meet the same problem and report it as they always did
  }
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

const isSyntaxError = (d: Diagnostic) => d.code === 'IMGC1006';

export const loadDefinition = async (file: string, opts: LoadOptions = {}): Promise<LoadedDefinition> => {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  if (!existsSync(abs)) return { dir, diagnostics: [diagnostic('IMGC1005', `cannot read definition '${file}': no such file`)] };
  try {
    readFileSync(abs);
  } catch (e) {
    return { dir, diagnostics: [diagnostic('IMGC1005', `cannot read definition '${file}': ${(e as Error).message}`)] };
  }
  // The type-check runs in a process of its own (./typecheck.ts) while this one evaluates.
  // A type-check server transpiles the files first, into the cache link() reads.
  const transpiled = prefetchedTranspiles(abs);
  const typechecked = opts.typecheck === false ? Promise.resolve([]) : typecheck(abs, dir);
  typechecked.catch(() => {}); // awaited below on every path; this only keeps Node from calling it unhandled meanwhile
  const done = async (more: Diagnostic[], rest: Omit<LoadedDefinition, 'dir' | 'diagnostics'> = {}): Promise<LoadedDefinition> => {
    const types = await typechecked;
    // A syntax error makes whatever the evaluation said beside the point.
    if (types.some(isSyntaxError)) return { dir, diagnostics: types };
    return { dir, ...rest, diagnostics: [...types, ...more] };
  };

  // Stack traces and step locations are read through the modules' source maps.
  process.setSourceMapsEnabled(true);
  await transpiled;
  const linked = link(abs);
  // Code with syntax errors is not run. A linked file's transpile says so; through the hooks, only the type-check can.
  if (!('url' in linked) && opts.typecheck !== false && (await typechecked).some(isSyntaxError)) return done([]);
  if (!('url' in linked)) await registerHooks();
  setDefinitionDir(dir);
  let exported: unknown;
  try {
    const mod = (await import('url' in linked ? linked.url : pathToFileURL(abs).href)) as { default?: unknown };
    exported = mod.default;
  } catch (err) {
    const message = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
    return done([diagnostic('IMGC1002', message, { loc: thrownAt(err, dir) })]);
  } finally {
    setDefinitionDir(undefined);
  }
  if (!isImage(exported)) {
    return done([diagnostic('IMGC1003', `'${path.basename(abs)}' has no default export of an image`, { hint: 'end the file with `export default image(...)...`' })]);
  }
  let raw: unknown;
  try {
    raw = exported.toIR(path.basename(abs));
  } catch (err) {
    return done([diagnostic('IMGC1002', (err as Error).message, { loc: thrownAt(err, dir) })]);
  }
  const resolved = resolveVariables((raw as { phases?: unknown } | null)?.phases, opts.vars ?? []);
  if (resolved.diagnostics.length) return done(resolved.diagnostics);
  if (resolved.variables?.length && typeof raw === 'object' && raw !== null) raw = { ...raw, variables: resolved.variables };
  const { ir, diagnostics: invalid } = validateImage(raw);
  if (!ir) return done(invalid);
  return done([], { ir, ...(exported.packageCatalog ? { catalog: exported.packageCatalog } : {}) });
};
