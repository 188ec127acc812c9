// A definition that starts where another ends: its base is a contract (the
// facts another team's image or a host has) or another definition's phase.
// The checker sees the facts as the base's; the types see them when they are
// known as literals: a contract's typed module (./typed.ts, written beside
// the JSON) or the other definition's own builder type.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BaseImage, ImageBuilder } from '../dsl/image.js';
import { DefinitionError } from '../core/definition-error.js';
import { callerDir, definitionRelative, noteFileRead } from '../dsl/location.js';
import type { Facts, PackageCatalog } from '../dsl/types.js';
import type { Base, Image } from '../ir/types.js';
import { sha256 } from '../util/cache.js';
import { aptCatalog, type AptCatalog } from '../../stdlib/catalog.js';
import { contractFrom, contractJson, contractOf, parseContract, type Contract, type ContractFact } from './contract.js';

/** The digest a typed module records of its contract: it refuses a contract that changed since. */
export const contractDigest = (c: Contract): string => sha256(contractJson(c)).slice(0, 16);

const distros = ['debian', 'ubuntu'] as const;

/** Where a base's facts come from, down to the digest of the contract (`imgc explain` shows it). */
const originOf = (kind: 'contract' | 'definition', file: string, c: Contract): NonNullable<Base['origin']> => ({
  kind,
  file,
  image: c.image,
  phase: c.phase,
  version: c.contract,
  digest: contractDigest(c),
});

/** The details a contract states, as a base's `details` (by fact id); none when it states none. */
export const contractDetails = (facts: readonly ContractFact[]): Pick<Base, 'details'> => {
  const entries = facts.flatMap(({ kind, key, ...d }) => (kind !== 'artifact' && Object.keys(d).length ? [[`${kind}:${key}`, d] as const] : []));
  return entries.length ? { details: Object.fromEntries(entries) } : {};
};

/** The base of a definition that starts from `c`: its facts (a root's, so no artifacts), no root of its own. */
export const contractBase = (c: Contract, origin: NonNullable<Base['origin']>, from: Partial<Pick<Base, 'variant' | 'packageManager'>> = {}): Omit<Base, 'loc'> => {
  const distro = distros.find((d) => d === c.base.distro);
  if (!distro) throw new DefinitionError(`${origin.file}: base distro '${c.base.distro}' is not one imgc builds on (${distros.join(', ')})`);
  return {
    name: c.base.name,
    distro,
    release: c.base.release,
    suite: c.base.suite,
    variant: from.variant ?? 'default',
    packageManager: from.packageManager ?? 'apt',
    include: [],
    provides: c.facts.filter((f) => f.kind !== 'artifact').map(({ kind, key }) => ({ kind, key })),
    ...contractDetails(c.facts),
    origin,
  };
};

export interface FromContractOptions {
  /** Where the contract's file is, relative to the calling file (the typed module names the JSON beside it). */
  from?: string;
  /** The digest of the contract the typed module was generated from. */
  digest?: string;
}

/**
 * A base that is a contract: `image('x').base(fromContract('golden-base.contract.json'))`
 * (a path relative to this file: the checker knows the facts, the types do not),
 * or the default export of the typed module `imgc contract --out` writes beside
 * the JSON (`import golden from './golden-base.contract.js'`): then the editor
 * completes the contract's users, groups, packages, paths, services and commands.
 * `imgc build` takes the root with --from-tar or --from-dir and checks it
 * against the contract before any step runs.
 */
export function fromContract<F extends Facts = Facts>(source: string | object, opts: FromContractOptions = {}): BaseImage<F, AptCatalog> {
  let contract: Contract;
  let file: string;
  if (typeof source === 'string') {
    file = path.resolve(callerDir(), source);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new DefinitionError(`fromContract('${source}'): ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? `no such file (${file})` : (e as Error).message}`);
    }
    noteFileRead(file);
    contract = wrap(() => parseContract(text, source));
  } else {
    if (opts.from === undefined) throw new DefinitionError("fromContract(json) needs the file it was read from: fromContract(json, { from: './x.contract.json' })");
    file = path.resolve(callerDir(), opts.from);
    contract = wrap(() => contractFrom(source, definitionRelative(file)));
  }
  const rel = definitionRelative(file);
  if (opts.digest !== undefined && opts.digest !== contractDigest(contract)) {
    throw new DefinitionError(`${rel} changed since its typed module was written: write it again (imgc contract … --out ${rel}, or imgc probe … --out ${rel})`);
  }
  return { ir: contractBase(contract, originOf('contract', rel, contract)), catalog: aptCatalog as AptCatalog };
}

const wrap = <T>(f: () => T): T => {
  try {
    return f();
  } catch (e) {
    throw new DefinitionError((e as Error).message);
  }
};

/**
 * A base that is another definition after one of its phases (default: its
 * last that changes the root): `base(fromDefinition(baseImage, { phase: 'customize' }))`
 * with `import baseImage from './base-image.js'`. Without `phase` the types
 * carry the other definition's facts; with one they do not (its builder's type
 * knows only its last phase: export the builder at that phase to get them) and
 * the checker alone sees them. `imgc build` builds the other definition (from
 * its cache) up to that phase and starts from its root.
 */
export function fromDefinition<F extends Facts, C extends PackageCatalog>(def: ImageBuilder<F, C>): BaseImage<F, C>;
export function fromDefinition<F extends Facts, C extends PackageCatalog>(def: ImageBuilder<F, C>, opts: { phase: string }): BaseImage<Facts, C>;
export function fromDefinition<F extends Facts, C extends PackageCatalog>(def: ImageBuilder<F, C>, opts: { phase?: string } = {}): BaseImage<Facts, C> {
  if (typeof (def as { toIR?: unknown } | undefined)?.toIR !== 'function') throw new DefinitionError('fromDefinition takes an image (the default export of another definition, imported)');
  const ir: Image = def.toIR();
  const contract = wrap(() => contractOf(ir, opts.phase));
  const { variant, packageManager } = ir.base;
  return {
    ir: contractBase(contract, originOf('definition', ir.source, contract), { variant, packageManager }),
    catalog: def.packageCatalog,
  };
}
