// Loads a definition: TypeScript 7's compiler checks it (./typecheck.ts)
// while a worker thread evaluates it (./evaluate.ts) into IR, both bounded in
// time and stopped with all they started (../host/bounded.ts). Every
// failure becomes a diagnostic with a location; nothing here prints or exits.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import type { Image } from '../ir/schema.js';
import type { PackageCatalog } from '../dsl/types.js';
import { workerBounded, type WorkerOutcome } from '../host/bounded.js';
import { srcRoot } from './entries.js';
import type { EvaluationRequest, Evaluated, EvaluatedVariant } from './evaluate.js';
import { cacheSalt, typecheck } from './typecheck.js';
import { packageRoot } from '../util/package-root.js';
import { hashInputs, inputsUnchanged, readCachedIf, sha256, writeCachedParts, type HashedInput } from '../util/cache.js';
import type { GivenValue } from './variables.js';
export type { GivenValue } from './variables.js';
/** A combination of a matrix: its name, values, and what its image evaluated to (as an image's load has it). */
export type LoadedVariant = EvaluatedVariant;

export interface LoadedDefinition {
  ir?: Image;
  catalog?: PackageCatalog;
  /** The default export is a matrix (`variants(...)`): its combinations; `ir` is unset, `diagnostics` are the file's (types, a failed evaluation). */
  variants?: LoadedVariant[];
  diagnostics: Diagnostic[];
  /** Absolute directory of the definition; IR locations are relative to it. */
  dir: string;
  /** The user's files the definition is made of, as far as the type-check saw (else the definition alone). */
  files?: string[];
  /** The contract checker's diagnostics on `ir` (made by the evaluation, kept with a reused load). */
  findings?: Diagnostic[];
}

/** How long evaluating a definition (and type-checking it) may take, unless --timeout says otherwise. */
export const DEFAULT_TIMEOUT_SECONDS = 30;

export interface LoadOptions {
  /** Run the TypeScript type-check (default true). */
  typecheck?: boolean;
  /** Values of the definition's variables, highest precedence first (see ./variables.ts). */
  vars?: readonly GivenValue[];
  /** Seconds the evaluation may take (default {@link DEFAULT_TIMEOUT_SECONDS}); the type-check, this or the default, whichever is longer. */
  timeoutSeconds?: number;
}

/** The evaluation's script: beside this file when built; the built one when the sources run (tests). */
const evaluator = (): string => {
  const beside = path.join(path.dirname(fileURLToPath(import.meta.url)), 'evaluate.js');
  return existsSync(beside) ? beside : path.resolve(srcRoot, '..', 'dist', 'src', 'load', 'evaluate.js');
};

/**
 * Evaluates the definition in a worker thread: a module graph and globals of its own, started in a
 * fraction of a process's time (docs/performance.md), and stopped whatever it runs (a loop too).
 */
const evaluateInWorker = async (file: string, vars: readonly GivenValue[], timeoutSeconds: number): Promise<Answer> => {
  const request: EvaluationRequest = { file, vars };
  // The definition's modules are linked by the worker itself, as vm modules, and a bare import is resolved
  // from the file that names it (./link.ts). Only these: the flags imgc was started with may be V8's, which a worker refuses.
  const execArgv = ['--experimental-vm-modules', '--experimental-import-meta-resolve'];
  const { outcome, stop } = workerBounded(evaluator(), { workerData: { evaluate: request }, execArgv }, timeoutSeconds * 1000);
  const end = await outcome;
  // The answer is all that is wanted: what the definition left running (timers, processes) ends here.
  stop();
  if ('message' in end) return { evaluated: JSON.parse(end.message as string) as Evaluated, text: end.message as string };
  return { evaluated: { diagnostics: [stopped(end, file, timeoutSeconds)] } };
};

/** Why the evaluation gave no answer. */
const stopped = (end: Exclude<WorkerOutcome, { message: unknown }>, file: string, timeoutSeconds: number): Diagnostic => {
  const at = { file: path.basename(file), line: 1, column: 1 };
  const hint = 'look for a loop that never ends or an await that never settles at the top level of the definition or a module it imports; pass --timeout SECONDS if it needs longer';
  if (end.timedOut) return diagnostic('IMGC1007', `'${at.file}' did not finish evaluating within ${timeoutSeconds} s: it was stopped, with every process it started`, { loc: at, hint });
  if (end.error !== undefined) return diagnostic('IMGC1002', `the definition's evaluation ended (${end.error instanceof Error ? end.error.message : String(end.error)}) before it produced an image`, { loc: at });
  // Nothing left to run, the definition still pending: it awaits what nothing can settle any more.
  if (end.code === 0) return diagnostic('IMGC1002', `'${at.file}' stopped before it produced an image: it awaits something nothing is left to settle (or it called process.exit(0))`, { loc: at, hint: 'look for an await at the top level of the definition or a module it imports on a promise nothing resolves' });
  return diagnostic('IMGC1002', `the definition's evaluation ended (exit code ${end.code}) before it produced an image`, { loc: at });
};

/** The worker's answer, and the JSON text it came as (none when the worker gave no answer). */
interface Answer {
  evaluated: Evaluated;
  text?: string;
}

/** What a load is made of besides its directory: the evaluation's answer and the type-check's. */
const compose = (evaluated: Evaluated, types: Diagnostic[], files: string[]): Kept => {
  const { syntaxError, inputs: _inputs, ...rest } = evaluated;
  // A file that cannot be parsed did not run; tsc then reports only its syntax errors, in its own words.
  return syntaxError
    ? { files, diagnostics: types.length ? types.map((d) => diagnostic('IMGC1006', d.message, { loc: d.loc })) : evaluated.diagnostics }
    : { ...rest, files, diagnostics: [...types, ...evaluated.diagnostics] };
};

/**
 * imgc's code as the evaluation runs it, by its files' sizes and times, so that a result made by other
 * code is not reused: the bundle's three entries and their chunks (scripts/build-eval.mjs). Every build
 * rewrites the entries.
 */
const installation = (): string => {
  const load = path.dirname(evaluator());
  const built = path.dirname(load);
  const chunks = path.join(built, 'chunks');
  const entries = [path.join(load, 'evaluate.js'), path.join(built, 'index.js'), path.join(path.dirname(built), 'stdlib', 'index.js')];
  // The archives' tables (stdlib/archive/*.txt) are read when a definition installs a package.
  const archives = path.join(packageRoot, 'stdlib', 'archive');
  const files = [
    ...entries,
    ...(existsSync(chunks) ? readdirSync(chunks).filter((f) => f.endsWith('.js')).map((f) => path.join(chunks, f)) : []),
    ...(existsSync(archives) ? readdirSync(archives).filter((f) => f.endsWith('.txt')).map((f) => path.join(archives, f)) : []),
  ];
  return sha256(
    files
      .map((f) => [f, statSync(f, { throwIfNoEntry: false })] as const)
      .map(([f, st]) => (st ? `${f}\0${st.size}\0${st.mtimeMs}` : f))
      .join('\n'),
  );
};

/** What a kept result was made from: the head of its entry, judged before the result is read. */
interface MadeFrom {
  inputs: HashedInput[];
  env: Record<string, string | null>;
}
type Kept = Omit<LoadedDefinition, 'dir'>;
/**
 * What a kept entry holds: the evaluation's answer as the worker sent it (written as it came, not
 * made into JSON again: 3 MB for 10,000 steps) and the type-check's, composed again when reused.
 */
interface KeptParts {
  types: Diagnostic[];
  files: string[];
  evaluated: Evaluated;
}

/**
 * A definition that reads nothing but its own files, imgc and environment variables (./evaluate.ts says
 * when), and is given no variable values, gives the same result while those are unchanged: it is kept.
 */
const resultCache = (file: string, opts: LoadOptions) => {
  // Not with variable values given: a key made from a sensitive one could be tried against guesses.
  if (opts.vars?.length) return { get: () => undefined, put: () => {} };
  const key = `${sha256(JSON.stringify([cacheSalt, installation(), file, process.cwd(), opts.typecheck !== false]))}.json`;
  return {
    // The result (six images of the reference example: 800 KB) is read only once its inputs are found unchanged.
    get: (): Kept | undefined => {
      const kept = readCachedIf<MadeFrom, KeptParts>('loaded', key, (h) => Object.entries(h.env).every(([k, v]) => (process.env[k] ?? null) === v) && inputsUnchanged(h.inputs));
      // An entry of another form (an older imgc's) is made again, as a corrupt one is.
      return kept && Array.isArray(kept.types) && Array.isArray(kept.files) && Array.isArray(kept.evaluated?.diagnostics) ? compose(kept.evaluated, kept.types, kept.files) : undefined;
    },
    put: (madeFrom: MadeFrom, types: Diagnostic[], files: string[], evaluated: string) =>
      writeCachedParts('loaded', key, madeFrom, `{"types":${JSON.stringify(types)},"files":${JSON.stringify(files)},"evaluated":${evaluated}}`),
  };
};

export const loadDefinition = async (file: string, opts: LoadOptions = {}): Promise<LoadedDefinition> => {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  try {
    readFileSync(abs);
  } catch (e) {
    return { dir, diagnostics: [diagnostic('IMGC1005', `cannot read definition '${file}': ${existsSync(abs) ? (e as Error).message : 'no such file'}`)] };
  }
  const cache = resultCache(abs, opts);
  const reused = cache.get();
  if (reused) return { ...reused, dir };
  const timeout = opts.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  // The evaluation first: for most definitions it takes longer than the type-check (10,000 steps are the other way round).
  const [{ evaluated, text }, checked] = await Promise.all([
    evaluateInWorker(abs, opts.vars ?? [], timeout),
    // The compiler's own bound is never below the default: a short --timeout is meant for the definition.
    opts.typecheck === false ? { diagnostics: [], files: [abs] } : typecheck(abs, Math.max(timeout, DEFAULT_TIMEOUT_SECONDS) * 1000),
  ]);
  const { diagnostics: types, files } = checked;
  const loaded = compose(evaluated, types, files);
  const { inputs } = evaluated;
  // A type-check that failed (no inputs) is tried again next time.
  const typeInputs = opts.typecheck === false ? [] : 'inputs' in checked ? checked.inputs : undefined;
  if (inputs && typeInputs && text !== undefined) cache.put({ inputs: [...hashInputs(inputs.files), ...typeInputs], env: inputs.env }, types, files, text);
  return { ...loaded, dir };
};
