// `imgc probe`: the contract of a real root or image (src/contract/probe.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Contract } from '../contract/contract.js';
import { probeRoot } from '../contract/probe.js';
import { withImageRoot } from '../verify/index.js';
import { DirView } from '../verify/rootview.js';
import { scratchFor } from './build.js';
import { readContract, writeContract, type Io } from './contract.js';
import { EXIT, UsageError } from './exit.js';

/** `imgc probe --root DIR | --image FILE [--phase P] [--expect CONTRACT] [--out F]`. */
export const probeCommand = async (o: { root?: string | undefined; image?: string | undefined; phase?: string | undefined; expect?: string | undefined; out?: string | undefined }, io: Io): Promise<number> => {
  if ((o.root === undefined) === (o.image === undefined)) throw new UsageError('probe needs one of --root DIR or --image FILE');
  const expect = o.expect !== undefined ? readContract(o.expect).contract.facts : [];
  const opts = { phase: o.phase ?? 'base', expect };
  let c: Contract;
  try {
    if (o.root !== undefined) {
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
    io.err(`imgc probe: ${(e as Error).message}\n`);
    return EXIT.usage;
  }
  return writeContract(c, o.out, io);
};
