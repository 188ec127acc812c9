#!/usr/bin/env node
// npm run build, after tsc: the modules the evaluation process loads (its
// script, and `imgc` and `imgc/stdlib`, which a definition imports into the
// same process) are rewritten as one esbuild bundle split at those three
// entries, over tsc's output of the same names. The entries share
// chunks (dist/src/chunks), so a definition's `imgc` is the very instance the
// evaluation reads its state from. Loading ~75 modules one by one was most of
// the process's start (docs/performance.md, 2026-12-05). The CLI's modules stay
// tsc's: it never imports these entries. zod is not bundled in: every import of
// src/util/zod becomes `#zod` (package.json "imports": build:zod's bundle), so the
// package ships zod once and a process that loads both the CLI and the evaluation
// loads it once.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const chunks = 'src/chunks';
// Chunks are named by their content's hash: last build's would linger (and ship) beside the new ones.
rmSync(path.join(repo, 'dist', chunks), { recursive: true, force: true });
await build({
  absWorkingDir: repo,
  entryPoints: ['src/index.ts', 'stdlib/index.ts', 'src/load/evaluate.ts'],
  outbase: '.',
  outdir: 'dist',
  // At the entries' depth (dist/src/x/), so that paths the modules compute from import.meta.url (../.., the package) hold in a chunk too.
  chunkNames: `${chunks}/[name]-[hash]`,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  banner: { js: '/*! imgc, bundled by npm run build (scripts/build-eval.mjs) */' },
  logLevel: 'warning',
  plugins: [
    {
      name: 'zod-once',
      setup(b) {
        b.onResolve({ filter: /\/util\/zod(\.js)?$/ }, (args) =>
          path.resolve(args.resolveDir, args.path).replace(/\.js$/, '') === path.join(repo, 'src', 'util', 'zod') ? { path: '#zod', external: true } : undefined,
        );
      },
    },
  ],
});
