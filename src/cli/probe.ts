// `imgc probe`: the contract of a real root, image or host (src/probe/probe.ts, src/probe/ssh.ts).
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Contract } from '../contract/contract.js';
import { pathPatternError, probeRoot } from '../probe/probe.js';
import { probeSsh, SshProbeError } from '../probe/ssh.js';
import { withImageRoot } from '../verify/index.js';
import { DirView } from '../verify/rootview.js';
import { scratchFor } from './build.js';
import { readContract, writeContract, type Io } from './contract.js';
import { EXIT, UsageError } from './exit.js';

export interface ProbeArgs {
  root?: string | undefined;
  image?: string | undefined;
  ssh?: string | undefined;
  port?: string | undefined;
  identity?: string | undefined;
  knownHosts?: string | undefined;
  sshOptions?: string[] | undefined;
  phase?: string | undefined;
  expect?: string | undefined;
  exclude?: string[] | undefined;
  include?: string[] | undefined;
  out?: string | undefined;
}

/** `imgc probe --root DIR | --image FILE | --ssh USER@HOST [--port N] [--identity F] [--known-hosts F] [--phase P] [--expect CONTRACT] [--exclude P]… [--include P]… [--out F]`. */
export const probeCommand = async (o: ProbeArgs, io: Io): Promise<number> => {
  if ([o.root, o.image, o.ssh].filter((x) => x !== undefined).length !== 1) throw new UsageError('probe needs one of --root DIR, --image FILE or --ssh USER@HOST');
  const sshOnly = ([['--port', o.port], ['--identity', o.identity], ['--known-hosts', o.knownHosts], ['--ssh-option', o.sshOptions?.[0]]] as const).find(([, x]) => x !== undefined);
  if (sshOnly && o.ssh === undefined) throw new UsageError(`${sshOnly[0]} goes with --ssh USER@HOST`);
  const port = o.port !== undefined ? Number(o.port) : undefined;
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new UsageError(`--port ${o.port}: not a TCP port (1-65535)`);
  for (const [flag, file] of [['--identity', o.identity], ['--known-hosts', o.knownHosts]] as const) if (file !== undefined && !existsSync(file)) throw new UsageError(`${flag} ${file}: no such file`);
  if (o.ssh !== undefined && (o.ssh.startsWith('-') || !/^[^\s@]+@?[^\s@]*$/.test(o.ssh))) throw new UsageError(`--ssh ${o.ssh}: not USER@HOST or HOST`);
  const expect = o.expect !== undefined ? readContract(o.expect).contract.facts : [];
  for (const [flag, pats] of [['--exclude', o.exclude], ['--include', o.include]] as const)
    for (const p of pats ?? []) {
      const why = pathPatternError(p);
      if (why) throw new UsageError(`${flag} ${p}: ${why} (a pattern is an absolute path; * stands for one name: /home/*/.cache)`);
    }
  const opts = { phase: o.phase ?? 'base', expect, exclude: o.exclude ?? [], include: o.include ?? [] };
  let c: Contract;
  try {
    if (o.ssh !== undefined) {
      c = await probeSsh({ target: o.ssh, port, identity: o.identity, knownHosts: o.knownHosts, options: o.sshOptions }, tmpdir(), opts);
    } else if (o.root !== undefined) {
      const dir = path.resolve(o.root);
      if (!existsSync(path.join(dir, 'etc')) || !existsSync(path.join(dir, 'var/lib/dpkg/status'))) throw new UsageError(`${o.root} is not a root filesystem with dpkg (no etc/ or var/lib/dpkg/status)`);
      c = probeRoot(dir, new DirView(dir, o.root), { ...opts, name: path.basename(dir) });
    } else {
      const image = o.image!;
      if (!existsSync(image)) throw new UsageError(`--image ${image}: no such file`);
      c = await withImageRoot(image, scratchFor(image), (view, dir) => probeRoot(dir, view, { ...opts, name: path.basename(image) }));
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
    io.err(`imgc probe: ${(e as Error).message}\n${e instanceof SshProbeError ? `  hint: ${e.hint}\n` : ''}`);
    return EXIT.usage;
  }
  return writeContract(c, o.out, io);
};
