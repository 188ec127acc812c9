// A step kind is changed in at most three files under src/: its kind file
// (src/steps/<kind>.ts), the registry (src/steps/index.ts) and at most one
// more (the builder that writes it in a definition: src/dsl/builder.ts, or
// src/dsl/artifacts.ts for phase 3's).
// Everything else reaches a kind through the registry and the kind's fields,
// never by its name (docs/architecture.md, "Add a step kind").
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kinds } from '../../src/steps/index.js';
import { repoRoot } from '../helpers/cli.js';
import { relativeImports } from '../helpers/imports.js';

const MAX_FILES = 3;
/** Written by `npm run gen` from the registry, never by hand (scripts/gen.mjs). */
const GENERATED = new Set(['src/ir/types.ts']);

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return n.endsWith('.ts') && !n.endsWith('.d.ts') ? [path.relative(repoRoot, p)] : [];
  });

const texts = new Map(sourceFiles(path.join(repoRoot, 'src')).filter((f) => !GENERATED.has(f)).map((f) => [f, readFileSync(path.join(repoRoot, f), 'utf8')]));
const registry = texts.get('src/steps/index.ts')!;

/** The file a kind is written in, from the registry's import of it: `import { user } from './user.js'` → src/steps/user.ts. */
const kindFile = (name: string): string => {
  const m = new RegExp(`import \\{ ${name}\\b[^}]*\\} from '\\./([^']+)\\.js'`).exec(registry);
  if (!m) throw new Error(`src/steps/index.ts imports no kind '${name}'`);
  return `src/steps/${m[1]}.ts`;
};

/** The files under src/ that `file` imports (relative imports, resolved; `.js` is the `.ts` beside it). */
const importsOf = (file: string, text: string): string[] =>
  relativeImports(path.join(repoRoot, file), text).map((t) => path.relative(repoRoot, t.replace(/\.js$/, '.ts')));

/**
 * Whether `text` (of `file`) names kind `name`: its step type (`UserStep`,
 * `StepOf<'user'>`), the registry's entry (`kinds.user`: the builder's method
 * calls `kinds.user.make`), or an import of its kind file (its options' types, its helpers).
 */
const names = (name: string, file: string, text: string): boolean =>
  new RegExp(`\\b${name[0]!.toUpperCase()}${name.slice(1)}Step\\b|StepOf<\\s*'${name}'\\s*>|\\bkinds\\s*(\\.\\s*${name}\\b|\\[\\s*'${name}'\\s*\\])`).test(text) ||
  importsOf(file, text).includes(kindFile(name));

/** The files under src/ (but generated ones) that name kind `name`, sorted; its kind file always. */
const filesNaming = (name: string): string[] =>
  [...new Set([kindFile(name), ...[...texts].filter(([f, text]) => names(name, f, text)).map(([f]) => f)])].sort();

describe('the files that name a step kind', () => {
  const all = Object.keys(kinds);
  const table = Object.fromEntries(all.map((n) => [n, filesNaming(n)]));

  it('finds each kind in the registry and, for the kinds a definition writes, in its builder', () => {
    for (const n of all) expect(table[n], n).toContain('src/steps/index.ts');
    // The builders' methods each add `kinds.<kind>.make(…)`: a kind with a method shows its builder.
    const builders = ['src/dsl/builder.ts', 'src/dsl/artifacts.ts'];
    const written = builders.flatMap((f) => all.filter((k) => texts.get(f)!.includes(`kinds.${k}.make(`)).map((k) => [k, f] as const));
    expect(written.map(([k]) => k)).toEqual(expect.arrayContaining(['user', 'artifact', 'cloudImage']));
    for (const [n, f] of written) expect(table[n], n).toContain(f);
  });

  it(`are at most ${MAX_FILES} per kind: its file, the registry and one more`, () => {
    const over = Object.entries(table)
      .filter(([, files]) => files.length > MAX_FILES)
      .map(([n, files]) => `${n}: ${files.join(', ')}`);
    expect(over).toEqual([]);
  });
});
