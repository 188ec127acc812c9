// Every command's first step: load the definition, check its contracts, and
// say what exit code the diagnostics mean.
import { foldTypeErrors, hasErrors, sortDiagnostics, type Diagnostic } from '../check/diagnostic.js';
import path from 'node:path';
import { DEFAULT_TIMEOUT_SECONDS, loadDefinition, type GivenValue, type LoadedDefinition, type LoadedVariant, type LoadOptions } from '../load/index.js';
import { didYouMean } from '../core/suggest.js';
import { existsSync } from 'node:fs';
import { readVarFile } from './var-file.js';

import { EXIT, UsageError } from './exit.js';

/** The options every command that loads a definition takes. */
export interface LoadFlags {
  'no-typecheck'?: boolean;
  var?: string[];
  'var-file'?: string[];
  /** Seconds the definition may take to evaluate (--timeout). */
  timeout?: string | undefined;
  /** A matrix's combination to act on, by name (--variant). */
  variant?: string | undefined;
  /** Every combination of a matrix (--all, where a command takes it). */
  all?: boolean | undefined;
}

/** --timeout SECONDS: a positive number; the default when absent. */
export const timeoutSeconds = (value: string | undefined): number => {
  if (value === undefined) return DEFAULT_TIMEOUT_SECONDS;
  const seconds = Number(value);
  if (!/^\s*[0-9.]+\s*$/.test(value) || !(seconds > 0)) throw new UsageError(`--timeout takes a number of seconds greater than 0 (got '${value}')`);
  return seconds;
};

/** imgc.toml's reader, loaded only when there is one to read: it brings zod, which this process needs for nothing else. */
const config = existsSync(path.join(process.cwd(), 'imgc.toml')) ? await import('./config.js') : undefined;

/** `f()`, with a malformed imgc.toml (ConfigError) turned into a UsageError. */
export const asUsage = <T>(f: () => T): T => {
  try {
    return f();
  } catch (e) {
    if (config && e instanceof config.ConfigError) throw new UsageError(e.message);
    throw e;
  }
};

/** imgc.toml of the current directory, if any (its errors are usage errors). */
export const projectConfig = (): ReturnType<typeof import('./config.js').readProjectConfig> => asUsage(() => config?.readProjectConfig(process.cwd()));

/** loadAndCheck with the command line's flags; a malformed --var or imgc.toml is a UsageError. A matrix's file as such (see {@link loadSelection}). */
const loadFile = (file: string, flags: LoadFlags): Promise<Checked> =>
  loadAndCheck(file, {
    typecheck: !flags['no-typecheck'],
    vars: asUsage(() => givenVariables(flags.var ?? [], process.env, flags['var-file'] ?? [])),
    timeoutSeconds: timeoutSeconds(flags.timeout),
  });

export interface Checked {
  loaded: LoadedDefinition;
  diagnostics: Diagnostic[];
  exit: number;
}

/** One image a command acts on: a plain definition's, or a matrix's combination (named in `variant`, and in its diagnostics). */
export interface Selected extends Checked {
  variant?: { name: string; values: Record<string, string> };
}

/** What a command acts on: the definition as loaded (a matrix's: its file's own diagnostics, no image) and the images chosen. */
export interface Selection {
  checked: Checked;
  images: Selected[];
  /** What no one image says: a matrix's type diagnostics, when every combination is taken (each then has only its own). */
  fileDiagnostics: Diagnostic[];
}

/** A selection's diagnostics, each mistake once, and the exit they mean (the worst of its images'). */
export const selectionReport = ({ checked, images, fileDiagnostics }: Selection): { diagnostics: Diagnostic[]; exit: number } => ({
  diagnostics: [...fileDiagnostics, ...images.flatMap((i) => i.diagnostics)],
  exit: Math.max(fileDiagnostics.length ? checked.exit : EXIT.ok, ...images.map((i) => i.exit)),
});

/** Exit 2 when the definition cannot be loaded, 1 for contract or type errors, else 0. */
export const loadAndCheck = async (file: string, opts: LoadOptions): Promise<Checked> => checkLoaded(await loadDefinition(file, opts));

const checkLoaded = (loaded: LoadedDefinition): Checked => {
  const contract = loaded.findings ?? [];
  const diagnostics = sortDiagnostics(foldTypeErrors(loaded.diagnostics, contract));
  const loadFailed = (!loaded.ir && !loaded.variants) || loaded.diagnostics.some((d) => d.code !== 'IMGC1001');
  const exit = loadFailed ? EXIT.usage : hasErrors(diagnostics) ? EXIT.contract : EXIT.ok;
  return { loaded, diagnostics, exit };
};

/** A matrix's combination checked as a definition of its own, with the file's type diagnostics. */
const variantChecked = (loaded: LoadedDefinition, v: LoadedVariant): Selected => {
  const { variants: _all, ...file } = loaded;
  const { name, values, diagnostics, default: _default, ...image } = v;
  const checked = checkLoaded({ ...file, ...image, diagnostics: [...loaded.diagnostics, ...diagnostics] });
  return { ...checked, diagnostics: checked.diagnostics.map((d) => (d.code === 'IMGC1001' ? d : { ...d, variant: name })), variant: { name, values } };
};

/**
 * The one reading of --variant NAME and --all for every command: a plain definition is its image (--all, or --variant
 * its own name, take it); a matrix needs a choice, unless `every` (check: all of them by default) or it has a default
 * combination, which is then taken. An unknown NAME says which is meant.
 */
export const loadSelection = async (file: string, flags: LoadFlags, opts: { every?: boolean; allFlag?: boolean } = {}): Promise<Selection> => {
  if (flags.variant !== undefined && flags.all) throw new UsageError('--variant and --all exclude each other');
  const checked = await loadFile(file, flags);
  const list = checked.loaded.variants;
  if (!list) {
    // One image is the matrix of itself (as `imgc variants` lists it), so one CI workflow serves both kinds of file.
    const own = checked.loaded.ir?.name;
    if (flags.variant !== undefined && own !== undefined && flags.variant !== own) throw new UsageError(`'${file}' is one image, '${own}', not a matrix (export default variants(...)): it has no variant '${flags.variant}'`);
    return { checked, images: [checked], fileDiagnostics: [] };
  }
  const names = list.map((v) => v.name);
  if (flags.variant !== undefined) {
    const chosen = list.find((v) => v.name === flags.variant);
    if (chosen) return { checked, images: [variantChecked(checked.loaded, chosen)], fileDiagnostics: [] };
    const near = didYouMean(flags.variant, names);
    throw new UsageError(`'${file}' has no variant '${flags.variant}'${near ? `; did you mean '${near}'?` : ''} (its variants: ${names.join(', ')})`);
  }
  if (!flags.all && !opts.every) {
    const fallback = list.find((v) => v.default);
    if (fallback) return { checked, images: [variantChecked(checked.loaded, fallback)], fileDiagnostics: [] };
    throw new UsageError(`'${file}' is a matrix of ${names.length} images: pass --variant NAME${opts.allFlag ? ' or --all' : ''} (its variants: ${names.join(', ')})`);
  }
  // A type error is the file's: said once, unless a combination's contract error is the same mistake (it then says
  // TypeScript saw it too, as for an image), and named by no combination.
  const types = checked.diagnostics.filter((d) => d.code === 'IMGC1001');
  const images = list.map((v) => variantChecked(checked.loaded, v));
  return {
    checked,
    images: images.map((i) => ({ ...i, diagnostics: i.diagnostics.filter((d) => !types.includes(d)) })),
    fileDiagnostics: [...checked.diagnostics.filter((d) => d.code !== 'IMGC1001'), ...types.filter((t) => images.every((i) => i.diagnostics.includes(t)))],
  };
};

/** The one image a command acts on (a matrix's by --variant), loaded and checked; a malformed --var or imgc.toml is a UsageError. */
export const loadFromCli = async (file: string, flags: LoadFlags): Promise<Selected> => (await loadSelection(file, flags)).images[0]!;

/**
 * Variable values from every source, in precedence order: `--var NAME=VALUE`,
 * then --var-file (the last file first, as Packer takes them), then
 * IMGC_VAR_<NAME>, then imgc.toml's [vars] (with its line, for errors).
 * Throws UsageError for a malformed --var or --var-file, ConfigError for a malformed imgc.toml.
 */
export const givenVariables = (cliVars: readonly string[], env: NodeJS.ProcessEnv = process.env, varFiles: readonly string[] = []): GivenValue[] => {
  const cli = cliVars.map((kv): GivenValue => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--var takes NAME=VALUE (got '${kv.split('=')[0]}')`);
    return { name: kv.slice(0, eq), value: kv.slice(eq + 1), from: '--var', text: true };
  });
  const fromEnv = Object.keys(env)
    .filter((k) => k.startsWith('IMGC_VAR_') && k.length > 'IMGC_VAR_'.length)
    .sort()
    .map((k): GivenValue => ({ name: k.slice('IMGC_VAR_'.length).toLowerCase(), value: env[k] ?? '', from: k, text: true }));
  const project = config?.readProjectConfig(process.cwd());
  const toml = project
    ? Object.entries(project.config.vars).map(([name, value]): GivenValue => {
        const line = project.lineOf?.(['vars', name]);
        return { name, value, from: `${path.relative(process.cwd(), project.file) || 'imgc.toml'}${line ? `:${line}` : ''}` };
      })
    : [];
  const files = [...varFiles].reverse().flatMap((file) =>
    readVarFile(file).map(({ name, value, line }): GivenValue => ({ name, value, from: `${file}${line ? `:${line}` : ''}` })),
  );
  return [...cli, ...files, ...fromEnv, ...toml];
};
