// The evaluation, in a worker thread: imports a definition (./link.ts),
// turns its default export into IR and posts it back to the loader
// (./index.ts), which started the worker and stops it, with all it started,
// when its time is up. One request per worker.
import { parentPort, workerData } from 'node:worker_threads';
import path from 'node:path';
import { checkImage } from '../check/checker.js';
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import { validateImage } from '../check/validate.js';
import { definitionFilesRead, setDefinitionDir, userLocation } from '../dsl/location.js';
import { reportStartedProcesses } from '../host/bounded.js';
import type { PackageCatalog } from '../dsl/types.js';
import type { Image, SourceLocation } from '../ir/schema.js';
import { syntaxErrorName } from './entries.js';
import { importDefinition, type ModulesLoaded } from './link.js';
import { resolveVariables, type GivenValue } from './variables.js';

export type EvaluationRequest = { file: string; vars: readonly GivenValue[] };

/** What one image evaluates to: its IR, the checker's findings, its catalog, its diagnostics. */
type EvaluatedImage = Pick<Evaluated, 'ir' | 'findings' | 'catalog' | 'diagnostics'>;

/** One combination of a matrix (src/dsl/variants.ts), evaluated as an image of its own. */
export interface EvaluatedVariant extends EvaluatedImage {
  name: string;
  values: Record<string, string>;
  /** The combination a command takes without --variant or --all. */
  default?: true;
}

export interface Evaluated {
  ir?: Image;
  /** A matrix: its combinations, in declaration order (`ir` is then unset). */
  variants?: EvaluatedVariant[];
  /** The contract checker's diagnostics on `ir`: here, where the step kinds and zod are loaded already, not in the CLI too. */
  findings?: Diagnostic[];
  catalog?: PackageCatalog;
  diagnostics: Diagnostic[];
  /** A file of the definition cannot be parsed: nothing of it ran. */
  syntaxError?: true;
  /** All the result was made from, when that is known (see {@link watchInputs}): the files read, the environment variables and their values. */
  inputs?: { files: string[]; env: Record<string, string | null> };
}

/**
 * Notes what the definition reads besides its modules: each environment
 * variable; and the clock, randomness or the network, whose use makes the
 * result one that cannot be reused (./link.ts notes imports of Node's modules
 * and packages). Returns what was read, or undefined after such a use.
 */
const watchInputs = (): (() => Record<string, string | null> | undefined) => {
  const env: Record<string, string | null> = {};
  let impure = false;
  process.env = new Proxy(process.env, { get: (t, k) => (typeof k === 'string' && !(k in env) && (env[k] = t[k] ?? null), Reflect.get(t, k)) });
  const taint = <T extends object>(o: T, k: keyof T) => {
    const f = o[k];
    if (typeof f === 'function') o[k] = ((...a: unknown[]) => ((impure = true), Reflect.apply(f, o, a))) as T[keyof T];
  };
  [[Math, 'random'], [Date, 'now'], [performance, 'now'], [crypto, 'getRandomValues'], [crypto, 'randomUUID'], [globalThis, 'fetch']].forEach(([o, k]) => taint(o as object, k as never));
  globalThis.Date = new Proxy(Date, { construct: (t, a, n) => ((impure ||= a.length === 0), Reflect.construct(t, a, n)), apply: (t) => ((impure = true), t()) });
  return () => (impure ? undefined : env);
};

type IRSource = { toIR(source?: string): unknown; packageCatalog?: PackageCatalog };
const isImage = (v: unknown): v is IRSource => typeof v === 'object' && v !== null && typeof (v as IRSource).toIR === 'function';
type MatrixSource = { variants(): readonly { name: string; values: Record<string, string>; image: IRSource; default?: true }[] };
const isMatrix = (v: unknown): v is MatrixSource => typeof v === 'object' && v !== null && typeof (v as MatrixSource).variants === 'function' && 'axes' in v;

/** Where in the user's files an error was thrown, from its (source-mapped) stack. */
const thrownAt = (err: unknown): SourceLocation | undefined => {
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  for (const line of stack.split('\n')) {
    // A path, not the end of Node's own `node:internal/modules/…` frames.
    const m = /(file:\/\/[^\s()]+|(?<![\w:])\/[^\s():]+):(\d+):(\d+)/.exec(line);
    const loc = m ? userLocation(m[1]!, Number(m[2]), Number(m[3])) : undefined;
    if (loc) return loc;
  }
  return undefined;
};

const messageOf = (err: unknown) => (err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err));

export const evaluate = async (req: EvaluationRequest): Promise<Evaluated> => {
  reportStartedProcesses();
  const inputsRead = watchInputs();
  const { result, loaded } = await run(req);
  const env = inputsRead();
  return env && loaded && !loaded.impure ? { ...result, inputs: { files: [...loaded.files, ...definitionFilesRead()], env } } : result;
};

/** Evaluates the definition: the answer, and what its modules were loaded from (none when the import failed: such an answer is not kept). */
const run = async ({ file, vars }: EvaluationRequest): Promise<{ result: Evaluated; loaded?: ModulesLoaded }> => {
  setDefinitionDir(path.dirname(file));
  let imported: Awaited<ReturnType<typeof importDefinition>>;
  try {
    imported = await importDefinition(file);
  } catch (err) {
    if (err instanceof Error && err.name === syntaxErrorName) return { result: { syntaxError: true, diagnostics: [diagnostic('IMGC1006', err.message, { loc: thrownAt(err) })] } };
    return { result: { diagnostics: [diagnostic('IMGC1002', messageOf(err), { loc: thrownAt(err) })] } };
  }
  return { result: answer(imported.namespace['default'], file, vars), loaded: imported.loaded };
};

/** The answer for what the definition exported: an image's IR, a matrix's, or why not. */
const answer = (exported: unknown, file: string, vars: readonly GivenValue[]): Evaluated => {
  if (isMatrix(exported)) {
    let list: ReturnType<MatrixSource['variants']>;
    try {
      list = exported.variants();
    } catch (err) {
      return { diagnostics: [diagnostic('IMGC1002', messageOf(err), { loc: thrownAt(err) })] };
    }
    return { diagnostics: [], variants: list.map(({ name, values, image, default: isDefault }) => ({ name, values: { ...values }, ...(isDefault ? { default: true as const } : {}), ...imageOf(image, file, vars) })) };
  }
  if (!isImage(exported)) return { diagnostics: [diagnostic('IMGC1003', `'${path.basename(file)}' has no default export of an image`, { hint: 'end the file with `export default image(...)...` (or `variants(...)`)' })] };
  return imageOf(exported, file, vars);
};

/** One image's IR, validated and contract-checked. */
const imageOf = (exported: IRSource, file: string, vars: readonly GivenValue[]): EvaluatedImage => {
  let raw: unknown;
  try {
    raw = exported.toIR(path.basename(file));
  } catch (err) {
    return { diagnostics: [diagnostic('IMGC1002', messageOf(err), { loc: thrownAt(err) })] };
  }
  const resolved = resolveVariables((raw as { phases?: unknown } | null)?.phases, vars);
  if (resolved.diagnostics.length) return { diagnostics: resolved.diagnostics };
  if (resolved.variables?.length && typeof raw === 'object' && raw !== null) raw = { ...raw, variables: resolved.variables };
  const { ir, diagnostics } = validateImage(raw);
  if (!ir) return { diagnostics };
  return { ir, findings: checkImage(ir), diagnostics: [], ...(exported.packageCatalog ? { catalog: exported.packageCatalog } : {}) };
};

// Started by the loader: one request, one answer; the loader then ends the worker (the definition may have left timers or handles open).
const request = (workerData as { evaluate?: EvaluationRequest } | null)?.evaluate;
const loader = parentPort;
if (loader && request) {
  // As JSON text: one string crosses to the loader, where a structured clone of a large IR's many
  // objects costs about twice as much to make and to read (docs/performance.md, 2026-12-07).
  const send = (result: Evaluated) => loader.postMessage(JSON.stringify(result));
  // Thrown later by what the definition left running (a timer, a rejected promise): located as if thrown at the top level.
  process.once('uncaughtException', (err) => send({ diagnostics: [diagnostic('IMGC1002', messageOf(err), { loc: thrownAt(err) })] }));
  void evaluate(request)
    .catch((err: unknown): Evaluated => ({ diagnostics: [diagnostic('IMGC1002', messageOf(err))] }))
    .then(send);
}
