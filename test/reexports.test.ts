// No module under src/ only re-exports another: importers name the module
// that holds the code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });

/** Code lines (comments and blank lines dropped) that are all relative re-exports. */
const reexportOnly = (text: string): boolean => {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('//'));
  return code.length > 0 && code.every((l) => /^export (\*|(type )?\{[^}]*\}) from '\.{1,2}\//.test(l));
};

it('no module under src only re-exports another', () => {
  const shims = files(path.join(repoRoot, 'src'))
    .map((f) => path.relative(repoRoot, f))
    .filter((f) => reexportOnly(readFileSync(path.join(repoRoot, f), 'utf8')));
  expect(shims).toEqual([]);
});
