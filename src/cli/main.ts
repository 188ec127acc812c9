// The `imgc` command. Exit codes: 0 clean, 1 contract (or type) errors in the
// definition, 2 usage errors or a definition that cannot be loaded.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Diagnostic } from '../check/diagnostic.js';
import { formatJson, formatSarif, formatText, type FormatContext } from '../check/format.js';
import { isTarget, targets, type PackerVersion } from '../compilers/targets.js';
import type { LoadedDefinition } from '../load/index.js';
import { colorWanted, chooseColor } from './color.js';
import { commandHelp, findCommand, overviewHelp, parseCommand, type FlagValues } from './commands.js';
import { EXIT, UsageError } from './exit.js';
import { packageRoot } from '../util/package-root.js';

// Each command imports what only it needs when it runs (the backends, the
// builder, the scaffold, …): `imgc check`, the one CI runs on every push,
// loads the loader and the checker and nothing else.

/** What every command needs besides: the loader and the checker. */
const loadCheck = () => import('./load-check.js');

const pkg = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string };
const version: string = pkg.version;
const targetNames = [...targets].sort();


type Values = FlagValues & { var?: string[]; 'var-file'?: string[] };

const str = (v: Values, name: string): string | undefined => (typeof v[name] === 'string' ? (v[name] as string) : undefined);
const on = (v: Values, name: string): boolean => v[name] === true;
const strs = (v: Values, name: string): string[] => (Array.isArray(v[name]) ? (v[name] as unknown[]).filter((x): x is string => typeof x === 'string') : []);

/** --serial and --max-fail of `compile`: Ansible's batches and failure bound for --runtime/--decommission. */
const fleetFlags = async (v: Values, target: string): Promise<{ serial?: string; maxFail?: number }> => {
  const serial = str(v, 'serial');
  const maxFail = str(v, 'max-fail');
  if (serial === undefined && maxFail === undefined) return {};
  if (target !== 'ansible' || !(on(v, 'runtime') || on(v, 'decommission')))
    throw new UsageError(`--${serial !== undefined ? 'serial' : 'max-fail'} is for a fleet: --target ansible with --runtime or --decommission`);
  const { validSerial } = await import('../compilers/ansible/fleet.js');
  if (serial !== undefined && !validSerial(serial)) throw new UsageError(`--serial takes a number of hosts or a percentage (2, 25%), not '${serial}'`);
  if (maxFail !== undefined && !/^(100|[1-9]?[0-9])$/.test(maxFail)) throw new UsageError(`--max-fail takes a percentage from 0 to 100, not '${maxFail}'`);
  return { ...(serial !== undefined ? { serial } : {}), ...(maxFail !== undefined ? { maxFail: Number(maxFail) } : {}) };
};

const noArguments = (positionals: string[]) => {
  if (positionals.length > 1) throw new UsageError(`${positionals[0]} takes no arguments (got '${positionals[1]}')`);
};

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  isTTY: boolean;
}

/** The loading flags of the command line: --var, --timeout …, and which of a matrix's combinations (--variant, --all). */
const loadFlagsOf = (v: Values): import('./load-check.js').LoadFlags => ({ 'no-typecheck': on(v, 'no-typecheck'), var: v.var, 'var-file': v['var-file'], timeout: str(v, 'timeout'), variant: str(v, 'variant'), all: on(v, 'all') });

/** The one image the command acts on (a matrix's: by --variant). */
const loadChecked = async (file: string, v: Values) => (await loadCheck()).loadFromCli(file, loadFlagsOf(v));

const report = (ds: Diagnostic[], loaded: LoadedDefinition, format: 'text' | 'json' | 'sarif', v: Values, io: Io, stream: 'out' | 'err') => {
  const ctx: FormatContext = { dir: loaded.dir, cwd: process.cwd(), color: colorWanted(io.isTTY) };
  const shown = on(v, 'quiet') ? ds.filter((d) => d.severity === 'error') : ds;
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
  throw new UsageError(`${command} needs a definition file (or an imgc.toml here), e.g. imgc ${command} examples/node-image.ts`);
};

const runCommand = async (argv: string[], io: Io): Promise<number> => {
  const first = argv[0];
  if (first === '-V' || first === '--version') {
    io.out(`${version}\n`);
    return EXIT.ok;
  }
  if (first === undefined || first === '-h' || first === '--help') {
    (first ? io.out : io.err)(overviewHelp(version));
    return first ? EXIT.ok : EXIT.usage;
  }
  const command = findCommand(first).name;
  // build and verify have their own module (src/cli/build.ts).
  if (command === 'build' || command === 'verify') {
    await loadCheck();
    const build = await import('./build.js');
    return command === 'build' ? build.buildCommand(argv.slice(1), io) : build.verifyCommand(argv.slice(1), io);
  }
  const parsed = parseCommand(findCommand(command), argv.slice(1));
  const v = parsed.values as Values;
  const positionals = [command, ...parsed.positionals];
  chooseColor(v);
  if (on(v, 'help')) {
    io.out(commandHelp(findCommand(command)));
    return EXIT.ok;
  }
  try {
    switch (command) {
      case 'check': {
        const format = (str(v, 'format') ?? 'text') as 'text' | 'json' | 'sarif';
        const file = await fileArg(positionals, command);
        const against = str(v, 'against');
        const checkOnce = async () => {
          const lc = await loadCheck();
          // A matrix: every combination (or the one --variant names), each checked as an image of its own.
          const selection = await lc.loadSelection(file, loadFlagsOf(v), { every: true });
          const against_ = against ? (await import('./contract.js')).checkAgainst : undefined;
          const images = selection.images.map((i) => {
            if (!against_ || !i.loaded.ir) return i;
            const checked = against_(i, against!);
            return { ...i, ...checked, diagnostics: checked.diagnostics.map((d) => (i.variant && d.code !== 'IMGC1001' ? { ...d, variant: i.variant.name } : d)) };
          });
          const { diagnostics, exit } = lc.selectionReport({ ...selection, images });
          const loaded = selection.checked.loaded;
          report(diagnostics, loaded, format, v, io, 'out');
          for (const { loaded: one } of images) {
            const ir = one.ir;
            if (format === 'text' && exit === EXIT.ok && !on(v, 'quiet')) io.out(`${ir?.name}: ${ir?.phases.length} phases, ${ir?.phases.reduce((n, p) => n + p.steps.length + p.pre.length + p.post.length, 0)} steps, contracts hold\n`);
            // --verbose: what was checked, step by step, with the facts each provides and requires.
            if (format === 'text' && on(v, 'verbose') && ir) io.out(`\n${(await import('./explain.js')).explainText(ir)}`);
          }
          return { exit, files: loaded.files ?? [] };
        };
        if (on(v, 'watch')) return (await import('./watch.js')).watch(path.resolve(file), checkOnce, io);
        return (await checkOnce()).exit;
      }
      case 'ir':
      case 'explain': {
        const { loaded, diagnostics, exit } = await loadChecked(await fileArg(positionals, command), v);
        if (!loaded.ir || exit === EXIT.usage) {
          report(diagnostics, loaded, 'text', v, io, 'err');
          return exit;
        }
        const graph = str(v, 'graph') as 'mermaid' | 'dot' | 'lifecycle' | undefined;
        const ir = loaded.ir;
        const render = {
          mermaid: async () => (await import('./graph.js')).mermaidGraph(ir, { baseEdges: !on(v, 'no-base-edges') }),
          dot: async () => (await import('./graph.js')).dotGraph(ir, { baseEdges: !on(v, 'no-base-edges') }),
          lifecycle: async () => (await import('../ir/lifecycle.js')).lifecycleMermaid(ir),
        };
        io.out(command === 'ir' ? (await import('../ir/index.js')).irToJson(ir) : graph ? await render[graph]() : (await import('./explain.js')).explainText(ir));
        if (diagnostics.length) report(diagnostics, loaded, 'text', v, io, 'err');
        return exit;
      }
      case 'compile': {
        const file = await fileArg(positionals, command);
        const settings = positionals[1] ? undefined : (await loadCheck()).projectConfig()?.config.compile;
        const target = str(v, 'target') ?? settings?.target;
        if (!target) throw new UsageError(`compile needs --target (${targetNames.join(', ')})`);
        if (!isTarget(target)) throw new UsageError(`unknown target '${target}'; targets: ${targetNames.join(', ')}`);
        const { compilers, CompileError } = await import('../compilers/index.js');
        const compiler = compilers[target];
        const provisioner = (str(v, 'provisioner') ?? 'shell') as 'shell' | 'ansible';
        const hostTargets = ['ansible', 'shell'];
        if ((on(v, 'runtime') || on(v, 'decommission')) && !hostTargets.includes(compiler.target))
          throw new UsageError(`--${on(v, 'runtime') ? 'runtime' : 'decommission'} is for existing hosts: targets ${hostTargets.join(', ')} (not '${compiler.target}')`);
        const fleet = await fleetFlags(v, compiler.target);
        const asJson = str(v, 'format') === 'json';
        // --all: every combination of a matrix, each into a folder of its own (its name under --out).
        const lc = await loadCheck();
        const selection = await lc.loadSelection(file, loadFlagsOf(v), { allFlag: true });
        const { diagnostics, exit } = lc.selectionReport(selection);
        const loaded = selection.checked.loaded;
        const all = on(v, 'all');
        // --format json: one object on stdout whatever happened (the check's diagnostics, the refusals, the files), nothing on stderr; with --all, one per combination.
        const { jsonDiagnostics } = await import('../check/format.js');
        const { sha256 } = await import('../util/cache.js');
        const ctx: FormatContext = { dir: loaded.dir, cwd: process.cwd(), color: false };
        const result = (variant: string | undefined, outDir: string | undefined, files: Record<string, string>, refusals: Diagnostic[], ds: Diagnostic[]) => ({
          ...(variant === undefined ? {} : { variant }),
          target: compiler.target,
          out: outDir === undefined ? null : path.relative(process.cwd(), outDir) || '.',
          files: Object.keys(files).sort().map((f) => ({ path: f, bytes: Buffer.byteLength(files[f]!), sha256: sha256(files[f]!) })),
          refusals: jsonDiagnostics(refusals, ctx).map(({ stepId, ...d }) => ({ step: stepId ?? null, ...d })),
          diagnostics: jsonDiagnostics(ds, ctx),
        });
        const json = (results: ReturnType<typeof result>[]) => io.out(`${JSON.stringify(all ? results : results[0], null, 2)}\n`);
        if (diagnostics.length && !asJson) report(diagnostics, loaded, 'text', v, io, 'err');
        // Nothing is written unless every combination checks: no half-written matrix.
        if (exit !== EXIT.ok || selection.images.some((i) => !i.loaded.ir)) {
          if (asJson) json(all ? selection.images.map((i) => result(i.variant?.name, undefined, {}, [], [...selection.fileDiagnostics, ...i.diagnostics])) : [result(undefined, undefined, {}, [], diagnostics)]);
          return exit;
        }
        const packerVersion = (str(v, 'packer-version') as PackerVersion | undefined) ?? settings?.packer?.version;
        const compiled: { name: string | undefined; outDir: string; files: Record<string, string>; ds: Diagnostic[] }[] = [];
        for (const image of selection.images) {
          const ir = image.loaded.ir!;
          try {
            const files = compiler.compile(ir, { provisioner, json: on(v, 'json'), runtime: on(v, 'runtime'), decommission: on(v, 'decommission'), ...(packerVersion ? { packerVersion } : {}), ...fleet });
            const given = str(v, 'out');
            const outDir = path.resolve(all && given ? path.join(given, ir.name) : (given ?? path.join(settings?.out ?? 'out', ir.name, compiler.target)));
            compiled.push({ name: image.variant?.name, outDir, files, ds: image.diagnostics });
          } catch (e) {
            if (!(e instanceof CompileError)) throw e;
            const refusals = e.diagnostics.map((d) => (image.variant ? { ...d, variant: image.variant.name } : d));
            if (asJson) json([...compiled.map((c) => result(c.name, undefined, {}, [], c.ds)), result(image.variant?.name, undefined, {}, refusals, image.diagnostics)]);
            else report(refusals, loaded, 'text', v, io, 'err');
            return EXIT.contract;
          }
        }
        for (const { outDir, files } of compiled) (await import('../host/write.js')).writeTreeAtomically(outDir, files);
        if (asJson) json(compiled.map((c) => result(c.name, c.outDir, c.files, [], c.ds)));
        else if (!on(v, 'quiet'))
          for (const { outDir, files } of compiled)
            io.out(`${Object.keys(files).length} files written to ${path.relative(process.cwd(), outDir) || '.'}\n${on(v, 'verbose') ? Object.keys(files).sort().map((f) => `  ${f}\n`).join('') : ''}`);
        return EXIT.ok;
      }
      case 'variants': {
        const format = str(v, 'format') === 'json' ? 'json' : 'text';
        const lc = await loadCheck();
        // The file as loaded, not one image: a matrix lists its combinations, an image itself.
        const { checked } = await lc.loadSelection(await fileArg(positionals, command), loadFlagsOf(v), { every: true });
        const { loaded, diagnostics, exit } = checked;
        // What only stops the listing is reported; the rest is imgc check's.
        if (exit === EXIT.usage) {
          report(diagnostics, loaded, 'text', v, io, 'err');
          return exit;
        }
        const { variantsOf, variantsText } = await import('./variants.js');
        const list = variantsOf(loaded);
        io.out(format === 'json' ? `${JSON.stringify(list, null, 2)}\n` : variantsText(list));
        return EXIT.ok;
      }
      case 'init': {
        if (positionals.length > 2) throw new UsageError(`unexpected argument '${positionals[2]}'`);
        const dir = path.resolve(positionals[1] ?? '.');
        let done: import('./init.js').Scaffolded;
        try {
          const init = await import('./init.js');
          done = init.scaffold(dir, init.imgcInstall(packageRoot));
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        const rel = path.relative(process.cwd(), dir);
        io.out(
          [...done.created.map((f) => `  created ${f}\n`), ...done.updated.map((f) => `  updated ${f}\n`), ...done.kept.map((f) => `  kept ${f}\n`)].join('') +
            `next: ${rel ? `cd ${rel} && ` : ''}npm install && npx imgc check\n`,
        );
        return EXIT.ok;
      }
      case 'docs':
        noArguments(positionals);
        io.out(await (await import('./docs.js')).stdlibReference());
        return EXIT.ok;
      case 'schema': {
        noArguments(positionals);
        const which = (['contract', 'build-events', 'build-plan', 'variants'] as const).filter((f) => on(v, f));
        if (which.length > 1) throw new UsageError(`${which.map((f) => `--${f}`).join(' and ')} exclude each other`);
        const schema =
          which[0] === 'contract'
            ? (await import('../contract/contract.js')).contractJsonSchema()
            : which[0] === 'build-events'
              ? (await import('../build/events.js')).buildEventsJsonSchema()
              : which[0] === 'build-plan'
                ? (await import('../build/plan.js')).buildPlanJsonSchema()
                : which[0] === 'variants'
                  ? (await import('./variants.js')).variantsJsonSchema()
                  : (await import('../ir/index.js')).imageJsonSchema();
        io.out(`${JSON.stringify(schema, null, 2)}\n`);
        return EXIT.ok;
      }
      case 'contract': {
        const cmd = await import('./contract.js');
        if (positionals[1] === 'diff') {
          // The command's other flags act on a definition; a diff reads two contract files, which already hold one combination and phase each.
          const given = findCommand(command).flags.find((f) => f.name !== 'format' && v[f.name] !== undefined)?.name;
          if (given) throw new UsageError(`contract diff compares two contract files and takes only --format: --${given} is for writing each of them (imgc contract FILE --${given} …)`);
          return cmd.contractDiff(positionals.slice(2), (str(v, 'format') ?? 'text') as 'text' | 'json' | 'sarif', io, version);
        }
        const { loaded, diagnostics, exit } = await loadChecked(await fileArg(positionals, command), v);
        if (diagnostics.length) report(diagnostics, loaded, 'text', v, io, 'err');
        if (!loaded.ir || exit !== EXIT.ok) return exit;
        return cmd.contractExport(loaded.ir, str(v, 'phase'), str(v, 'out'), io);
      }
      case 'probe':
        noArguments(positionals);
        return (await import('./probe.js')).probeCommand({ root: str(v, 'root'), image: str(v, 'image'), ssh: str(v, 'ssh'), port: str(v, 'port'), identity: str(v, 'identity'), knownHosts: str(v, 'known-hosts'), sshOptions: strs(v, 'ssh-option'), phase: str(v, 'phase'), expect: str(v, 'expect'), exclude: strs(v, 'exclude'), include: strs(v, 'include'), out: str(v, 'out') }, io);
      case 'help': {
        if (positionals.length > 2) throw new UsageError(`unexpected argument '${positionals[2]}'`);
        io.out(positionals[1] ? commandHelp(findCommand(positionals[1])) : overviewHelp(version));
        return EXIT.ok;
      }
      case 'completion': {
        const shell = positionals[1];
        if (positionals.length !== 2 || (shell !== 'bash' && shell !== 'zsh' && shell !== 'fish')) throw new UsageError('completion takes one of bash, zsh, fish');
        io.out((await import('./completion.js')).completionScript(shell));
        return EXIT.ok;
      }
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

export const run = async (argv: string[], io: Io): Promise<number> => {
  try {
    return await runCommand(argv, io);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`imgc: ${e.message}\n`);
    return EXIT.usage;
  }
};
