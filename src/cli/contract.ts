// `imgc contract FILE [--phase P] [--out F]` and `imgc contract diff OLD NEW`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkImage } from '../check/checker.js';
import { hasErrors, sortDiagnostics } from '../check/diagnostic.js';
import { formatSarif, formatText } from '../check/format.js';
import type { Checked } from './load-check.js';
import { contractJson, contractOf, parseContract, type Contract } from '../contract/contract.js';
import { breaks, diffContracts, diffDiagnostics } from '../contract/diff.js';
import { typedModule, typedModulePath } from '../contract/typed.js';
import { contractDetails } from '../contract/import.js';
import type { Image } from '../ir/schema.js';
import { colorWanted } from './color.js';
import { EXIT, UsageError } from './exit.js';
import { writeFileAtomically } from '../host/write.js';

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  isTTY: boolean;
}

/** The contract on stdout, or in `out`; a `.json` file gets its typed module beside it (src/contract/typed.ts). */
export const writeContract = (c: Contract, out: string | undefined, io: Io): number => {
  const text = contractJson(c);
  if (!out) {
    io.out(text);
    return EXIT.ok;
  }
  const file = path.resolve(out);
  writeFileAtomically(file, text);
  if (/\.json$/i.test(file)) writeFileAtomically(typedModulePath(file), typedModule(c, file));
  return EXIT.ok;
};

export const contractExport = (ir: Image, phase: string | undefined, out: string | undefined, io: Io): number => {
  let c: Contract;
  try {
    c = contractOf(ir, phase);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return writeContract(c, out, io);
};

export const readContract = (file: string): { contract: Contract; text: string } => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  try {
    return { contract: parseContract(text, file), text };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
};

/**
 * `imgc check FILE --against CONTRACT`: do the phases after the contract's
 * phase fit a root that has exactly the contract's facts (another team's
 * image, a host)? The definition's own earlier phases are not checked: the
 * contract stands in for them.
 */
export const checkAgainst = (checked: Checked, file: string): Checked => {
  const ir = checked.loaded.ir!;
  const { contract } = readContract(file);
  // A definition whose base is facts (fromContract, fromDefinition): the contract stands in for that base, all its phases are checked.
  const index = ir.base.origin ? -1 : ir.phases.findIndex((p) => p.name === contract.phase);
  if (index < 0 && contract.phase !== 'base' && !ir.base.origin) {
    throw new UsageError(`${file} holds the facts after phase '${contract.phase}', which ${ir.name} does not have; its phases: ${ir.phases.map((p) => p.name).join(', ')}`);
  }
  const { details: _own, ...kept } = ir.base;
  const base: Image['base'] = { ...kept, provides: contract.facts.map(({ kind, key }) => ({ kind, key })), ...contractDetails(contract.facts) };
  // Diagnostics about a fact the base lacks name this contract, not the one the definition was written on.
  if (ir.base.origin) base.origin = { kind: 'contract', file: path.relative(checked.loaded.dir, path.resolve(file)) || file, image: contract.image, phase: contract.phase, version: contract.contract };
  const rest: Image = { ...ir, base, phases: ir.phases.slice(index + 1) };
  const diagnostics = sortDiagnostics([...checked.loaded.diagnostics, ...checkImage(rest)]);
  const exit = checked.exit === EXIT.usage ? EXIT.usage : hasErrors(diagnostics) ? EXIT.contract : EXIT.ok;
  return { loaded: checked.loaded, diagnostics, exit };
};

export const contractDiff = (args: string[], format: 'text' | 'json' | 'sarif', io: Io, version: string): number => {
  if (args.length !== 2) throw new UsageError('contract diff takes two contract files: OLD NEW');
  const [oldFile, newFile] = args as [string, string];
  const old = readContract(oldFile);
  const now = readContract(newFile);
  const d = diffContracts(old.contract, now.contract);
  const ds = diffDiagnostics(d, { file: path.relative(process.cwd(), path.resolve(oldFile)), shown: oldFile, text: old.text }, { file: newFile, phase: now.contract.phase });
  const ctx = { dir: process.cwd(), cwd: process.cwd(), color: colorWanted(io.isTTY) };
  if (format === 'json') io.out(`${JSON.stringify({ breaking: breaks(d), ...d }, null, 2)}\n`);
  else if (format === 'sarif') io.out(formatSarif(ds, ctx, version));
  else {
    if (ds.length) io.out(formatText(ds, ctx));
    for (const f of d.added) io.out(`+ ${f.kind} '${f.key}'\n`);
    io.out(`${oldFile} (after ${old.contract.phase}) → ${newFile} (after ${now.contract.phase}): ${d.removed.length} removed, ${d.changed.length} changed${d.base ? ', base changed' : ''}, ${d.added.length} added\n`);
  }
  return breaks(d) ? EXIT.contract : EXIT.ok;
};

