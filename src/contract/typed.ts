// The typed module written beside a contract's JSON: the contract's facts as
// literal types, for the editor and the type-check, and a base made from the
// JSON itself (imported, so the loader tracks it). Why a module and not a
// typed JSON import: docs/contracts.md.
import path from 'node:path';
import type { Contract } from './contract.js';
import { contractDigest } from './import.js';

const typedKinds = [
  ['user', 'user'],
  ['group', 'group'],
  ['package', 'package'],
  ['path', 'path'],
  ['service', 'service'],
  ['command', 'command'],
] as const;

const union = (keys: string[]): string => (keys.length ? keys.map((k) => JSON.stringify(k)).join(' | ') : 'never');

/** Where the typed module of contract file `json` goes: `x.contract.json` → `x.contract.ts`. */
export const typedModulePath = (json: string): string => json.replace(/\.json$/i, '') + '.ts';

/** The module's text; `json` is the contract file's path (only its name is written: the two stay side by side). */
export const typedModule = (c: Contract, json: string): string => {
  const name = path.basename(json);
  const lines = typedKinds.map(([kind, field]) => `  ${field}: ${union(c.facts.filter((f) => f.kind === kind).map((f) => f.key))};`);
  return [
    `// Written by imgc beside ${name}: its facts as types, so that the editor completes them`,
    '// and refuses others. Do not edit: write the contract again, and this file with it.',
    "import { fromContract } from 'imgc';",
    '',
    `/** What holds in image '${c.image}' after phase '${c.phase}' (${c.base.distro} ${c.base.release}). */`,
    'export interface ContractFacts {',
    ...lines,
    '}',
    '',
    // The JSON by its path, not imported: an import of JSON needs import attributes, which a
    // CommonJS project refuses (TS2856), and resolveJsonModule. fromContract reads the file
    // relative to this module and the loader follows it.
    `export default fromContract<ContractFacts>('./${name}', { digest: '${contractDigest(c)}' });`,
    '',
  ].join('\n');
};
