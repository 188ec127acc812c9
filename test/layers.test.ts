// Data flows one way: each folder under src/ (and stdlib/) imports only the
// folders below it in LAYERS. The order is docs/architecture.md's "Rooms";
// a new folder gets its place here deliberately.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

/** Bottom to top. `index` is src/index.ts, the package's public entry. */
const LAYERS = ['util', 'core', 'host', 'emit', 'steps', 'ir', 'dsl', 'check', 'load', 'stdlib', 'contract', 'compilers', 'verify', 'build', 'probe', 'cli', 'index'];

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.(ts|mts|js|mjs)$/.test(n) && !n.endsWith('.d.ts') ? [p] : [];
  });

/** The room of a file: its folder under src/ (a file directly in src/ is a room of its own), or stdlib. */
const roomOf = (file: string): string => {
  const parts = path.relative(repoRoot, file).split(path.sep);
  if (parts[0] !== 'src') return parts[0]!;
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.[a-z]+$/, '');
};

/** Every import between two rooms: `from` imports `to` in `file`. */
const roomImports = (): Array<{ from: string; to: string; file: string }> =>
  ['src', 'stdlib'].flatMap((top) =>
    sourceFiles(path.join(repoRoot, top)).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].flatMap((m) => {
        const from = roomOf(file);
        const to = roomOf(path.resolve(path.dirname(file), m[1]!));
        return from === to ? [] : [{ from, to, file: path.relative(repoRoot, file) }];
      }),
    ),
  );

describe('folder layers', () => {
  const edges = roomImports();

  it('every folder has a place in the order', () => {
    const rooms = new Set(edges.flatMap((e) => [e.from, e.to]));
    expect([...rooms].filter((r) => !LAYERS.includes(r))).toEqual([]);
  });

  it('no folder imports a folder above it', () => {
    const upward = edges.filter((e) => LAYERS.indexOf(e.to) > LAYERS.indexOf(e.from)).map((e) => `${e.file}: ${e.from} imports ${e.to}`);
    expect([...new Set(upward)]).toEqual([]);
  });

  it('src/host imports nothing of imgc but the IR primitives of src/core (build, verify and a probe share it)', () => {
    expect(edges.filter((e) => e.from === 'host' && e.to !== 'core').map((e) => `${e.file} imports ${e.to}`)).toEqual([]);
  });
});
