// `imgc build` and `imgc verify`, as functions main.ts dispatches to. They
// load and check the definition like every other command (loadDefinition,
// checkImage, the same diagnostics), then build or verify for real.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { afterCommand } from './build-args.js';
import { chooseColor, colorWanted } from './color.js';
import { commandHelp, commandNamed, parseCommand, type FlagValues } from './commands.js';
import { formatText } from '../check/format.js';
import { CompileError } from '../compilers/types.js';
import type { LoadedDefinition } from '../load/index.js';
import { UsageError } from './exit.js';
import { asUsage, givenVariables, loadFromCli, loadSelection, selectionReport, type LoadFlags } from './load-check.js';
import type { Image } from '../ir/schema.js';
import type { BuildPlan } from '../build/plan.js';
import { missingSensitive, missingSensitiveMessage, withValues, type SensitiveValues } from '../build/secrets.js';
import { imageView, throughPhase } from '../ir/phases.js';
import { didYouMean } from '../core/suggest.js';
import { buildImage, freeBytes, type Io } from '../build/index.js';
import { formatVerify, verifyImage, verifyJson, verifyRoot } from '../verify/index.js';
import { verifyBoot } from '../verify/boot.js';
import { contractBaseCheck, upToPhase } from './contract-base.js';

/** Loads and checks the definition (a matrix's combination by --variant); reports diagnostics on stderr. */
const loadChecked = async (file: string, flags: LoadFlags, io: Io): Promise<{ loaded: LoadedDefinition; exit: number }> => {
  const { loaded, diagnostics, exit } = await loadFromCli(file, flags);
  if (diagnostics.length) io.err(formatText(diagnostics, { dir: loaded.dir, cwd: process.cwd(), color: colorWanted(io.isTTY) }));
  return { loaded, exit };
};

/** The command's flags from the table, and only those (src/cli/commands.ts); --color and --no-color take effect. */
const parse = (argv: string[], command: 'build' | 'verify') => {
  const parsed = parseCommand(commandNamed(command)!, argv[0] === command ? argv.slice(1) : argv);
  chooseColor(parsed.values);
  return { values: parsed.values as FlagValues & { var?: string[]; 'var-file'?: string[] }, positionals: parsed.positionals };
};

const oneFile = (positionals: string[], command: string): string => {
  const rest = afterCommand(positionals, command);
  if (!rest[0]) throw new UsageError(`${command} needs a definition file, e.g. imgc ${command} examples/node-image-debian.ts`);
  if (rest.length > 1) throw new UsageError(`unexpected argument '${rest[1]}'`);
  return rest[0];
};

const guardUsage = async (io: Io, command: 'build' | 'verify', body: () => Promise<number>): Promise<number> => {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`imgc: ${e.message}\n${e.message.includes('imgc help') ? '' : `(imgc help ${command} lists what it takes)\n`}`);
      return 2;
    }
    throw e;
  }
};

/** `imgc build FILE …` (argv may start with "build"). */
export const buildCommand = (argv: string[], io: Io): Promise<number> =>
  guardUsage(io, 'build', async () => {
    const { values: v, positionals } = parse(argv, 'build');
    if (v.help) {
      io.out(commandHelp(commandNamed('build')!));
      return 0;
    }
    const file = oneFile(positionals, 'build');
    const target = (v.target as string | undefined) ?? 'shell';
    if (target !== 'shell' && target !== 'ansible') throw new UsageError(`--target must be shell or ansible (got '${target}'); Packer builds are 'packer build' on the output of imgc compile --target packer`);
    if (v['from-tar'] && v['from-dir']) throw new UsageError('--from-tar and --from-dir exclude each other');
    const format = v.format === 'json' ? 'json' : 'text';
    // --all: every combination of a matrix, checked first, then built one after another, each into OUT/<name>.
    const selection = await loadSelection(file, v, { allFlag: true });
    const { diagnostics, exit } = selectionReport(selection);
    if (diagnostics.length) io.err(formatText(diagnostics, { dir: selection.checked.loaded.dir, cwd: process.cwd(), color: colorWanted(io.isTTY) }));
    const images = selection.images;
    if (exit !== 0 || images.some((i) => !i.loaded.ir)) return exit;
    const variants = selection.checked.loaded.variants;
    if (variants && v.variant === undefined && !v.all && format === 'text') {
      io.err(`imgc: ${images[0]!.loaded.ir!.name}, the default of the ${variants.length} combinations in ${file} (--variant NAME for another, --all for every one; imgc variants lists them)\n`);
    }
    // --all --plan --format json: one JSON array of the plans.
    const plans: BuildPlan[] = [];
    const buildOne = async (loaded: LoadedDefinition, ir: Image, outDir: string): Promise<number> => {
      if (v.plan) return await showPlan(ir, { target, outDir, fromTar: v['from-tar'] as string | undefined, fromDir: v['from-dir'] as string | undefined, noCache: Boolean(v['no-cache']), sensitive: sensitiveValues(ir, (v.var as string[] | undefined) ?? []) }, format, io, v.all && format === 'json' ? plans : undefined);
      let fromTar = v['from-tar'] as string | undefined;
      const fromDir = v['from-dir'] as string | undefined;
      const origin = ir.base.origin;
      try {
        if (origin?.kind === 'definition' && !fromTar && !fromDir) {
          // The other definition's root after its phase, as a tarball beside this build's output (kept, so the next build reuses it).
          io.err(`imgc: the base is ${origin.file} after phase '${origin.phase}': building it first\n`);
          const other = await loadChecked(path.resolve(loaded.dir, origin.file), { ...v, variant: undefined, all: undefined }, io);
          if (!other.loaded.ir || other.exit !== 0) return other.exit;
          const baseOut = `${outDir}.base`;
          const built = await buildImage(
            upToPhase(other.loaded.ir, origin.phase),
            { target, outDir: baseOut, noCache: Boolean(v['no-cache']), definitionDir: other.loaded.dir, sensitive: sensitiveValues(other.loaded.ir, (v.var as string[] | undefined) ?? []) },
            io,
          );
          if (built.exitCode !== 0) return built.exitCode;
          fromTar = path.join(baseOut, 'rootfs.tar');
        }
        const checkBase = contractBaseCheck(ir, loaded.dir, fromTar ?? fromDir ?? 'of the base');
        const { exitCode } = await buildImage(
          ir,
          {
            target,
            outDir,
            ...(fromTar ? { fromTar } : {}),
            ...(fromDir ? { fromDir } : {}),
            ...(checkBase ? { checkBase } : {}),
            noCache: Boolean(v['no-cache']),
            keepRoot: Boolean(v['keep-root']),
            ...(v.until !== undefined ? { until: v.until as string } : {}),
            definitionDir: loaded.dir,
            sensitive: sensitiveValues(ir, (v.var as string[] | undefined) ?? []),
            format,
          },
          io,
        );
        return exitCode;
      } catch (e) {
        if (e instanceof CompileError) {
          io.err(formatText(e.diagnostics, { dir: loaded.dir, cwd: process.cwd(), color: colorWanted(io.isTTY) }));
          return 1;
        }
        throw e;
      }
    };
    let worst = 0;
    for (const { loaded } of images) {
      const ir = until(loaded.ir!, v.until as string | undefined);
      const given = v.out as string | undefined;
      const outDir = path.resolve(v.all && given ? path.join(given, ir.name) : (given ?? path.join('out', ir.name, 'build')));
      if (v.all && format === 'text') io.err(`imgc: variant ${ir.name} into ${path.relative(process.cwd(), outDir)}\n`);
      const code = await buildOne(loaded, ir, outDir);
      // A plan changes nothing: every combination's is shown. A build stops at the first that fails.
      worst = Math.max(worst, code);
      if (code !== 0 && !v.plan) return code;
    }
    if (v.all && v.plan && format === 'json') io.out(`${JSON.stringify(plans, null, 2)}\n`);
    return worst;
  });

/** The image `imgc build --until PHASE` builds: its phases through PHASE; a usage error names the phases it could be. */
const until = (ir: Image, phase: string | undefined): Image => {
  if (phase === undefined) return ir;
  const built = imageView(ir);
  const cut = throughPhase(built, phase);
  if (cut) return cut;
  if (ir.phases.some((p) => p.name === phase)) throw new UsageError(`--until: phase '${phase}' runs on existing hosts only (imgc compile --runtime), never in imgc build`);
  const names = built.phases.map((p) => p.name);
  const near = didYouMean(phase, names);
  throw new UsageError(`--until: ${ir.name} has no phase '${phase}'${near ? ` (did you mean '${near}'?)` : ''}; its phases: ${names.join(', ')}`);
};

/** `imgc build --plan`: the plan on stdout; exit 1 when the build would stop before its first phase. */
const showPlan = async (ir: Image, opts: { target: 'shell' | 'ansible'; outDir: string; fromTar: string | undefined; fromDir: string | undefined; noCache: boolean; sensitive: SensitiveValues }, format: 'text' | 'json', io: Io, collect?: BuildPlan[]): Promise<number> => {
  const { planBuild, formatPlan } = await import('../build/plan.js');
  const origin = ir.base.origin;
  // The build makes that definition's root first, into OUT.base, and starts from its tarball: once made, plan from it.
  const made = path.join(`${opts.outDir}.base`, 'rootfs.tar');
  if (origin?.kind === 'definition' && !opts.fromTar && !opts.fromDir && existsSync(made)) opts.fromTar = made;
  const plan = await planBuild(ir, { target: opts.target, outDir: opts.outDir, ...(opts.fromTar ? { fromTar: opts.fromTar } : {}), ...(opts.fromDir ? { fromDir: opts.fromDir } : {}), noCache: opts.noCache, sensitive: opts.sensitive });
  if (collect) collect.push(plan);
  else io.out(format === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : formatPlan(plan, process.cwd()));
  return plan.blockers.length ? 1 : 0;
};

/**
 * The values of the image's sensitive variables, from the same sources and in
 * the same precedence as every other value (--var, IMGC_VAR_*, imgc.toml);
 * the loader has checked them against their schemas already.
 */
const sensitiveValues = (ir: Image, cliVars: readonly string[]): SensitiveValues => {
  const given = asUsage(() => givenVariables(cliVars));
  const values = new Map<string, string | number | boolean>();
  for (const v of ir.variables ?? []) {
    const g = v.sensitive ? given.find((x) => x.name === v.name) : undefined;
    if (!g || typeof g.value === 'object') continue; // a list variable is never sensitive
    const text = String(g.value);
    values.set(v.name, typeof g.value !== 'string' ? g.value : v.type === 'number' ? Number(text) : v.type === 'boolean' ? text === 'true' : text);
  }
  return values;
};

/** Where to extract an image for verification: beside it, unless /tmp has room. */
export const scratchFor = (image: string): string => {
  const t = tmpdir();
  return freeBytes(t) > 8 * 1024 ** 3 ? t : path.dirname(path.resolve(image));
};

/** `imgc verify FILE --root DIR | --image FILE` (argv may start with "verify"). */
export const verifyCommand = (argv: string[], io: Io): Promise<number> =>
  guardUsage(io, 'verify', async () => {
    const { values: v, positionals } = parse(argv, 'verify');
    if (v.help) {
      io.out(commandHelp(commandNamed('verify')!));
      return 0;
    }
    const file = oneFile(positionals, 'verify');
    const root = v.root as string | undefined;
    const image = v.image as string | undefined;
    const boot = v.boot as string | undefined;
    if ([root, image, boot].filter(Boolean).length !== 1) throw new UsageError('verify needs exactly one of --root DIR, --image FILE or --boot DISK');
    const timeoutText = (v['boot-timeout'] as string | undefined) ?? '600';
    if (!/^[1-9]\d*$/.test(timeoutText)) throw new UsageError(`--boot-timeout must be a number of seconds (got '${timeoutText}')`);
    const format = v.format === 'json' ? 'json' : 'text';
    const { loaded, exit } = await loadChecked(file, v, io);
    if (!loaded.ir || exit === 2) return exit;
    // What the root must hold is what the build wrote (the image: no phase for existing hosts only),
    // every variable at its value, sensitive ones too.
    const built = imageView(loaded.ir);
    const sensitive = sensitiveValues(built, (v.var as string[] | undefined) ?? []);
    const missing = missingSensitive(built, sensitive);
    if (missing.length) throw new UsageError(`${missingSensitiveMessage(missing)} (verify compares the root with the values it was built with)`);
    const ir = withValues(built, sensitive);
    let result;
    try {
      result = boot
        ? await verifyBoot(ir, boot, {
            timeoutSeconds: Number(timeoutText),
            // Never into the folder of the build that made the disk: its logs/ tell how that build went.
            ...(v.console ? { consoleLog: path.resolve(v.console as string) } : {}),
            scratch: scratchFor(boot),
            onInfo: (l) => io.err(`imgc: ${l}\n`),
          })
        : root
          ? verifyRoot(ir, root)
          : await verifyImage(ir, image!, scratchFor(image!));
    } catch (e) {
      io.err(`imgc verify: ${(e as Error).message}\n`);
      return 2;
    }
    const ctx = { dir: loaded.dir, cwd: process.cwd() };
    const kept = 'console' in result && typeof result.console === 'string' ? result.console : undefined;
    if (kept && result.failures.length) io.err(`imgc: the node's console: ${path.relative(ctx.cwd, kept)}\n`);
    io.out(format === 'json' ? verifyJson(result, ctx) : formatVerify(result, { ...ctx, color: colorWanted(io.isTTY) }));
    return result.failures.length ? 1 : 0;
  });
