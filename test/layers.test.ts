// Data flows one way: each folder under src/ (and stdlib/) imports only the
// folders below it in LAYERS. The order is docs/architecture.md's "Rooms";
// a new folder gets its place here deliberately.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';
import { relativeImports } from './helpers/imports.js';

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
      relativeImports(file, readFileSync(file, 'utf8')).flatMap((target) => {
        const from = roomOf(file);
        const to = roomOf(target);
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

/** Every relative import between two files of the same folder (src/<folder>/… and below it, or stdlib). */
const fileImports = (): Map<string, string[]> => {
  const graph = new Map<string, string[]>();
  for (const top of ['src', 'stdlib']) {
    for (const file of sourceFiles(path.join(repoRoot, top))) {
      const targets = relativeImports(file, readFileSync(file, 'utf8'))
        .map((t) => t.replace(/\.js$/, '.ts'))
        .filter((t) => roomOf(t) === roomOf(file));
      graph.set(path.relative(repoRoot, file), targets.map((t) => path.relative(repoRoot, t)));
    }
  }
  return graph;
};

/** The strongly connected components of more than one file, or of one file importing itself (Tarjan). */
const loops = (graph: Map<string, string[]>): string[][] => {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do scc.push((w = stack.pop()!));
      while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
};

describe('file loops', () => {
  it('no two files of one folder import each other, directly or around a loop (type imports count too)', () => {
    expect(loops(fileImports())).toEqual([]);
  });

  it('finds a loop when there is one (the check can fail)', () => {
    const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    expect(loops(g)).toEqual([['a', 'b', 'c']]);
  });
});

// The two files every step kind once went through (#35): what a kind needs is in its own file now,
// and these stay the size of what they are for, the builder's chain and the shell frame's helpers.
describe('file sizes', () => {
  const limits: Record<string, number> = { 'src/dsl/builder.ts': 700, 'src/compilers/shell/helpers.ts': 350 };
  for (const [file, max] of Object.entries(limits)) {
    it(`${file} is at most ${max} lines`, () => {
      expect(readFileSync(path.join(repoRoot, file), 'utf8').split('\n').length - 1).toBeLessThanOrEqual(max);
    });
  }
});
