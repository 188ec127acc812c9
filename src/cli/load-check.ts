// Every command's first step: load the definition, check its contracts, and
// say what exit code the diagnostics mean.
import { foldTypeErrors, hasErrors, sortDiagnostics, type Diagnostic } from '../check/diagnostic.js';
import path from 'node:path';
import { DEFAULT_TIMEOUT_SECONDS, loadDefinition, type GivenValue, type LoadedDefinition, type LoadOptions } from '../load/index.js';
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

/** loadAndCheck with the command line's flags; a malformed --var or imgc.toml is a UsageError. */
export const loadFromCli = (file: string, flags: LoadFlags): Promise<Checked> =>
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

/** Exit 2 when the definition cannot be loaded, 1 for contract or type errors, else 0. */
export const loadAndCheck = async (file: string, opts: LoadOptions): Promise<Checked> => {
  const loaded = await loadDefinition(file, opts);
  const contract = loaded.findings ?? [];
  const diagnostics = sortDiagnostics(foldTypeErrors(loaded.diagnostics, contract));
  const loadFailed = !loaded.ir || loaded.diagnostics.some((d) => d.code !== 'IMGC1001');
  const exit = loadFailed ? EXIT.usage : hasErrors(diagnostics) ? EXIT.contract : EXIT.ok;
  return { loaded, diagnostics, exit };
};

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
