// Runs the built CLI as a user would, and loads examples' IR through it.
import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Image } from '../../src/ir/schema.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const imgcBin = path.join(repoRoot, 'bin', 'imgc.js');

export const imgc = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) =>
  execa('node', [imgcBin, ...args], { cwd: opts.cwd ?? repoRoot, reject: false, env: opts.env ?? {}, all: true });

/** The good examples: every examples/*.ts that exports an image. */
export const goodExamples = (): string[] =>
  readdirSync(path.join(repoRoot, 'examples'))
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => `examples/${f}`);

const irCache = new Map<string, Image>();
/** The IR of a definition, via `imgc ir` (no type-check: the check tests do that). */
export const irOf = async (file: string): Promise<Image> => {
  const cached = irCache.get(file);
  if (cached) return cached;
  const r = await imgc(['ir', '--no-typecheck', file]);
  if (r.exitCode !== 0) throw new Error(`imgc ir ${file} failed (${r.exitCode}):\n${r.all}`);
  const ir = JSON.parse(r.stdout) as Image;
  irCache.set(file, ir);
  return ir;
};

export { tempDir } from './temp.js';
