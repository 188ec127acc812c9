// What the published package promises, read from its manifest and its
// sources: runtime dependencies are exactly the packages imgc's shipped code
// imports, every `files` entry exists, and the licence it names ships.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  license: string;
  files: string[];
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : /\.(ts|cjs|mjs|js)$/.test(f) && !f.endsWith('.d.ts') ? [p] : [];
  });

/** The bare packages a file imports or requires (node: builtins aside), by package name. */
const importedPackages = (file: string): string[] => {
  const text = readFileSync(file, 'utf8');
  const specs = [
    ...[...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!),
    ...[...text.matchAll(/\b(?:import|require(?:\.resolve)?)\s*\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!),
    // A package whose manifest is read to find its files (a native binary beside it).
    ...[...text.matchAll(/['"]((?:@[\w.-]+\/)?[\w.-]+)\/package\.json['"]/g)].map((m) => m[1]!),
  ];
  return specs
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !s.startsWith('/') && s !== 'imgc' && !s.startsWith('imgc/'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
};

describe('the package', () => {
  it('depends at run time on exactly what its shipped code imports', () => {
    const shipped = [...sources(path.join(repoRoot, 'src')), ...sources(path.join(repoRoot, 'stdlib')), ...sources(path.join(repoRoot, 'bin'))];
    const used = new Set(shipped.flatMap(importedPackages));
    // Type-only imports of a package whose declarations a consumer gets through another dependency count too.
    expect([...used].filter((p) => !pkg.dependencies[p]).sort(), 'imported but not a runtime dependency').toEqual([]);
    expect(Object.keys(pkg.dependencies).filter((p) => !used.has(p)).sort(), 'a runtime dependency nothing imports').toEqual([]);
  });

  it('ships files that exist and the licence its manifest names', () => {
    // A `!` entry leaves files out (the source maps): it names a pattern, not a file.
    for (const f of pkg.files.filter((g) => !g.startsWith('!'))) expect(existsSync(path.join(repoRoot, f)) || f.startsWith('dist'), `files entry ${f}`).toBe(true);
    expect(pkg.license).toBe('Apache-2.0');
    expect(readFileSync(path.join(repoRoot, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
  });
});
