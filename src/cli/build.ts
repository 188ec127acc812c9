// `imgc build` and `imgc verify`, as functions main.ts dispatches to. They
// load and check the definition like every other command (loadDefinition,
// checkImage, the same diagnostics), then build or verify for real.
import path from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { afterCommand, buildOptions, commonOptions, verifyOptions } from './build-args.js';
import { formatText } from '../check/format.js';
import { CompileError } from '../compilers/types.js';
import type { LoadedDefinition } from '../load/index.js';
import { UsageError } from './exit.js';
import { loadFromCli, type LoadFlags } from './load-check.js';
import { buildImage, freeBytes, type Io } from '../build/index.js';
import { formatVerify, verifyImage, verifyJson, verifyRoot } from '../verify/index.js';
import { verifyBoot } from '../verify/boot.js';

export const buildUsage = `Usage:
  imgc build FILE [--target shell|ansible] [--out DIR] [--from-tar FILE | --from-dir DIR]
                  [--no-cache] [--keep-root] [--no-typecheck] [--var NAME=VALUE]
      Builds the image for real, as root: debootstrap (cached) or the given root,
      the phases in a chroot, the artifacts, then verifies the facts.
      --out defaults to out/<image>/build. Exit: 0 built, 1 failed, 2 usage.
  imgc verify FILE (--root DIR | --image FILE.raw|.qcow2|.tar[.zst|.gz]) [--format text|json] [--no-typecheck]
      Checks every fact the definition promises against a built root or image,
      read as files. Exit: 0 all hold, 1 some do not, 2 usage.
  imgc verify FILE --boot DISK.raw|.qcow2 [--boot-timeout SECONDS] [--format text|json]
      Boots a bootable disk in QEMU (a temporary copy; no network; KVM when it
      works, else TCG; IMGC_QEMU_ACCEL=kvm|tcg) and checks the runtime facts:
      services active, kernel modules loaded, sysctls, swap off, users, groups,
      commands. The console log goes to logs/boot-console.log beside the disk.
`;

/** Loads and checks the definition; reports diagnostics on stderr. */
const loadChecked = async (file: string, flags: LoadFlags, io: Io): Promise<{ loaded: LoadedDefinition; exit: number }> => {
  const { loaded, diagnostics, exit } = await loadFromCli(file, flags);
  if (diagnostics.length) io.err(formatText(diagnostics, { dir: loaded.dir, cwd: process.cwd(), color: io.isTTY && !process.env['NO_COLOR'] }));
  return { loaded, exit };
};

/** parseArgs with the options every command has; its errors are usage errors. */
const parse = <O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) => {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...commonOptions, ...options } });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
};

const oneFile = (positionals: string[], command: string): string => {
  const rest = afterCommand(positionals, command);
  if (!rest[0]) throw new UsageError(`imgc ${command} needs a definition file, e.g. imgc ${command} examples/node-image-debian.ts`);
  if (rest.length > 1) throw new UsageError(`unexpected argument '${rest[1]}'`);
  return rest[0];
};

const guardUsage = async (io: Io, body: () => Promise<number>): Promise<number> => {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`imgc: ${e.message}\n\n${buildUsage}`);
      return 2;
    }
    throw e;
  }
};

/** `imgc build FILE …` (argv may start with "build"). */
export const buildCommand = (argv: string[], io: Io): Promise<number> =>
  guardUsage(io, async () => {
    const { values: v, positionals } = parse(argv, buildOptions);
    if (v.help) {
      io.out(buildUsage);
      return 0;
    }
    const file = oneFile(positionals, 'build');
    const target = (v.target as string | undefined) ?? 'shell';
    if (target !== 'shell' && target !== 'ansible') throw new UsageError(`--target must be shell or ansible (got '${target}'); Packer builds are 'packer build' on the output of imgc compile --target packer`);
    if (v['from-tar'] && v['from-dir']) throw new UsageError('--from-tar and --from-dir exclude each other');
    const { loaded, exit } = await loadChecked(file, v, io);
    if (!loaded.ir || exit !== 0) return exit;
    const ir = loaded.ir;
    try {
      const { exitCode } = await buildImage(
        ir,
        {
          target,
          outDir: path.resolve((v.out as string | undefined) ?? path.join('out', ir.name, 'build')),
          ...(v['from-tar'] ? { fromTar: v['from-tar'] as string } : {}),
          ...(v['from-dir'] ? { fromDir: v['from-dir'] as string } : {}),
          noCache: Boolean(v['no-cache']),
          keepRoot: Boolean(v['keep-root']),
          definitionDir: loaded.dir,
        },
        io,
      );
      return exitCode;
    } catch (e) {
      if (e instanceof CompileError) {
        io.err(formatText(e.diagnostics, { dir: loaded.dir, cwd: process.cwd(), color: io.isTTY && !process.env['NO_COLOR'] }));
        return 1;
      }
      throw e;
    }
  });

/** Where to extract an image for verification: beside it, unless /tmp has room. */
const scratchFor = (image: string): string => {
  const t = tmpdir();
  return freeBytes(t) > 8 * 1024 ** 3 ? t : path.dirname(path.resolve(image));
};

/** `imgc verify FILE --root DIR | --image FILE` (argv may start with "verify"). */
export const verifyCommand = (argv: string[], io: Io): Promise<number> =>
  guardUsage(io, async () => {
    const { values: v, positionals } = parse(argv, verifyOptions);
    if (v.help) {
      io.out(buildUsage);
      return 0;
    }
    const file = oneFile(positionals, 'verify');
    const root = v.root as string | undefined;
    const image = v.image as string | undefined;
    const boot = v.boot as string | undefined;
    if ([root, image, boot].filter(Boolean).length !== 1) throw new UsageError('imgc verify needs exactly one of --root DIR, --image FILE or --boot DISK');
    const timeoutText = (v['boot-timeout'] as string | undefined) ?? '600';
    if (!/^[1-9]\d*$/.test(timeoutText)) throw new UsageError(`--boot-timeout must be a number of seconds (got '${timeoutText}')`);
    const format = (v.format as string | undefined) ?? 'text';
    if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json (got '${format}')`);
    const { loaded, exit } = await loadChecked(file, v, io);
    if (!loaded.ir || exit === 2) return exit;
    let result;
    try {
      result = boot
        ? await verifyBoot(loaded.ir, boot, {
            timeoutSeconds: Number(timeoutText),
            consoleLog: path.join(path.dirname(path.resolve(boot)), 'logs', 'boot-console.log'),
            scratch: scratchFor(boot),
            onInfo: (l) => io.err(`imgc: ${l}\n`),
          })
        : root
          ? verifyRoot(loaded.ir, root)
          : await verifyImage(loaded.ir, image!, scratchFor(image!));
    } catch (e) {
      io.err(`imgc verify: ${(e as Error).message}\n`);
      return 2;
    }
    const ctx = { dir: loaded.dir, cwd: process.cwd() };
    io.out(format === 'json' ? verifyJson(result, ctx) : formatVerify(result, { ...ctx, color: io.isTTY && !process.env['NO_COLOR'] }));
    return result.failures.length ? 1 : 0;
  });
