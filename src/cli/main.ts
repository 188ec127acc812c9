// The `imgc` command. Exit codes: 0 clean, 1 contract (or type) errors in the
// definition, 2 usage errors or a definition that cannot be loaded.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Diagnostic } from '../check/diagnostic.js';
import { formatJson, formatSarif, formatText, type FormatContext } from '../check/format.js';
import { isTarget, targets } from '../compilers/targets.js';
import type { LoadedDefinition } from '../load/index.js';
import { EXIT, UsageError } from './exit.js';

// Each command imports what only it needs when it runs (the backends, the
// builder, the scaffold, …): `imgc check`, the one CI runs on every push,
// loads the loader and the checker and nothing else.

/** What every command needs besides: the loader and the checker. */
const loadCheck = () => import('./load-check.js');

const pkg = JSON.parse(readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..', 'package.json'), 'utf8')) as { version: string };
const version: string = pkg.version;
const targetNames = [...targets].sort();


/** The usage text (it names the build commands' options, from their module). */
const usage = async (): Promise<string> => `imgc ${version} — typed image definitions, checked before anything runs

Usage:
  imgc init [DIR]         scaffold a project (node-image.ts, imgc.toml, CI snippet)
  imgc check [FILE] [--format text|json|sarif] [--no-typecheck] [--watch] [--quiet|--verbose]
  imgc compile [FILE] --target ${targetNames.join('|')} [--out DIR] [--provisioner shell|ansible] [--json]
                          [--runtime] [--decommission]   (shell, ansible: existing hosts)
  imgc explain FILE [--graph mermaid|dot|lifecycle]
  imgc ir FILE            print the Image IR as JSON
  imgc schema             print the IR's JSON Schema
  imgc docs               print the stdlib reference (Markdown)
  imgc --version | --help
${(await import('./build.js')).buildUsage.replace(/^Usage:\n/, '')}
FILE defaults to imgc.toml's \`definition\` in the current directory.
check, compile, ir and explain take --var NAME=VALUE (repeatable) for the definition's
variables; before IMGC_VAR_<NAME> in the environment, imgc.toml's [vars], the default.
Commands that load a definition take --timeout SECONDS (default 30): how long its
evaluation may take. check --watch checks again on every save, until Ctrl-C.
Exit codes: 0 clean, 1 contract errors, 2 usage or load errors.
`;

const options = {
  format: { type: 'string' },
  graph: { type: 'string' },
  target: { type: 'string', short: 't' },
  out: { type: 'string', short: 'o' },
  provisioner: { type: 'string' },
  json: { type: 'boolean' },
  runtime: { type: 'boolean' },
  decommission: { type: 'boolean' },
  'no-typecheck': { type: 'boolean' },
  timeout: { type: 'string' },
  watch: { type: 'boolean' },
  var: { type: 'string', multiple: true },
  quiet: { type: 'boolean', short: 'q' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

type Values = { [K in keyof typeof options]?: (typeof options)[K]['type'] extends 'string' ? string : boolean };

const oneOf = <T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T => {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`--${name} must be one of ${allowed.join(', ')} (got '${value}')`);
};

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  isTTY: boolean;
}

const loadChecked = async (file: string, v: Values) =>
  (await loadCheck()).loadFromCli(file, { 'no-typecheck': v['no-typecheck'], var: (v as { var?: string[] }).var, timeout: v.timeout });

const report = (ds: Diagnostic[], loaded: LoadedDefinition, format: 'text' | 'json' | 'sarif', v: Values, io: Io, stream: 'out' | 'err') => {
  const ctx: FormatContext = { dir: loaded.dir, cwd: process.cwd(), color: io.isTTY && !process.env['NO_COLOR'] };
  const shown = v.quiet ? ds.filter((d) => d.severity === 'error') : ds;
  const text = format === 'json' ? formatJson(shown, ctx) : format === 'sarif' ? formatSarif(shown, ctx, version) : formatText(shown, ctx);
  if (text) io[stream](text);
};

/** The definition: the argument, else imgc.toml's `definition`. */
const fileArg = async (positionals: string[], command: string): Promise<string> => {
  if (positionals.length > 2) throw new UsageError(`unexpected argument '${positionals[2]}'`);
  const file = positionals[1];
  if (file) return file;
  const project = (await loadCheck()).projectConfig();
  if (project) return path.join(path.dirname(project.file), project.config.definition);
  throw new UsageError(`imgc ${command} needs a definition file (or an imgc.toml here), e.g. imgc ${command} examples/node-image.ts`);
};

const runCommand = async (argv: string[], io: Io): Promise<number> => {
  // build and verify have options of their own (src/cli/build-args.ts).
  if (argv[0] === 'build' || argv[0] === 'verify') {
    await loadCheck();
    const build = await import('./build.js');
    return argv[0] === 'build' ? build.buildCommand(argv.slice(1), io) : build.verifyCommand(argv.slice(1), io);
  }
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true }) as { values: Values; positionals: string[] };
  } catch (e) {
    io.err(`imgc: ${(e as Error).message}\n\n${await usage()}`);
    return EXIT.usage;
  }
  const { values: v, positionals } = parsed;
  if (v.version) {
    io.out(`${version}\n`);
    return EXIT.ok;
  }
  const command = positionals[0];
  if (v.help || !command) {
    (command || v.help ? io.out : io.err)(await usage());
    return v.help ? EXIT.ok : EXIT.usage;
  }
  try {
    switch (command) {
      case 'check': {
        const format = oneOf('format', v.format, ['text', 'json', 'sarif'] as const, 'text');
        const file = await fileArg(positionals, command);
        const checkOnce = async () => {
          const { loaded, diagnostics, exit } = await loadChecked(file, v);
          report(diagnostics, loaded, format, v, io, 'out');
          if (format === 'text' && exit === EXIT.ok && !v.quiet) io.out(`${loaded.ir?.name}: ${loaded.ir?.phases.length} phases, ${loaded.ir?.phases.reduce((n, p) => n + p.steps.length + p.pre.length + p.post.length, 0)} steps, contracts hold\n`);
          // --verbose: what was checked, step by step, with the facts each provides and requires.
          if (format === 'text' && v.verbose && loaded.ir) io.out(`\n${(await import('./explain.js')).explainText(loaded.ir)}`);
          return { exit, files: loaded.files ?? [] };
        };
        if (v.watch) return (await import('./watch.js')).watch(path.resolve(file), checkOnce, io);
        return (await checkOnce()).exit;
      }
      case 'ir':
      case 'explain': {
        const { loaded, diagnostics, exit } = await loadChecked(await fileArg(positionals, command), v);
        if (!loaded.ir || exit === EXIT.usage) {
          report(diagnostics, loaded, 'text', v, io, 'err');
          return exit;
        }
        const graph = command === 'explain' && v.graph ? oneOf('graph', v.graph, ['mermaid', 'dot', 'lifecycle'] as const, 'mermaid') : undefined;
        const ir = loaded.ir;
        const render = {
          mermaid: async () => (await import('./graph.js')).mermaidGraph(ir),
          dot: async () => (await import('./graph.js')).dotGraph(ir),
          lifecycle: async () => (await import('../lifecycle.js')).lifecycleMermaid(ir),
        };
        io.out(command === 'ir' ? (await import('../ir/index.js')).irToJson(ir) : graph ? await render[graph]() : (await import('./explain.js')).explainText(ir));
        if (diagnostics.length) report(diagnostics, loaded, 'text', v, io, 'err');
        return exit;
      }
      case 'compile': {
        const file = await fileArg(positionals, command);
        const settings = positionals[1] ? undefined : (await loadCheck()).projectConfig()?.config.compile;
        const target = v.target ?? settings?.target;
        if (!target) throw new UsageError(`imgc compile needs --target (${targetNames.join(', ')})`);
        if (!isTarget(target)) throw new UsageError(`unknown target '${target}'; targets: ${targetNames.join(', ')}`);
        const { compilers, CompileError } = await import('../compilers/index.js');
        const compiler = compilers[target];
        const provisioner = oneOf('provisioner', v.provisioner, ['shell', 'ansible'] as const, 'shell');
        const hostTargets = ['ansible', 'shell'];
        if ((v.runtime || v.decommission) && !hostTargets.includes(compiler.target))
          throw new UsageError(`--${v.runtime ? 'runtime' : 'decommission'} is for existing hosts: targets ${hostTargets.join(', ')} (not '${compiler.target}')`);
        const { loaded, diagnostics, exit } = await loadChecked(file, v);
        if (diagnostics.length) report(diagnostics, loaded, 'text', v, io, 'err');
        if (!loaded.ir || exit !== EXIT.ok) return exit;
        let files: Record<string, string>;
        try {
          files = compiler.compile(loaded.ir, { provisioner, json: v.json ?? false, runtime: v.runtime ?? false, decommission: v.decommission ?? false });
        } catch (e) {
          if (!(e instanceof CompileError)) throw e;
          report(e.diagnostics, loaded, 'text', v, io, 'err');
          return EXIT.contract;
        }
        const outDir = path.resolve(v.out ?? settings?.out ?? path.join('out', loaded.ir.name, compiler.target));
        (await import('./write.js')).writeTreeAtomically(outDir, files);
        if (!v.quiet) io.out(`${Object.keys(files).length} files written to ${path.relative(process.cwd(), outDir) || '.'}\n${v.verbose ? Object.keys(files).sort().map((f) => `  ${f}\n`).join('') : ''}`);
        return EXIT.ok;
      }
      case 'init': {
        if (positionals.length > 2) throw new UsageError(`unexpected argument '${positionals[2]}'`);
        const dir = path.resolve(positionals[1] ?? '.');
        let written: string[];
        try {
          written = (await import('./init.js')).scaffold(dir, version);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        io.out(`${written.map((f) => `  created ${f}\n`).join('')}next: cd ${path.relative(process.cwd(), dir) || '.'} && npm install && npx imgc check\n`);
        return EXIT.ok;
      }
      case 'docs':
        io.out(await (await import('./docs.js')).stdlibReference());
        return EXIT.ok;
      case 'schema':
        io.out(`${JSON.stringify((await import('../ir/index.js')).imageJsonSchema(), null, 2)}\n`);
        return EXIT.ok;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`imgc: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
};

export const run = (argv: string[], io: Io): Promise<number> => runCommand(argv, io);
