// Golden files: compiled output compared byte for byte with test/golden/.
// Regenerate only on purpose: UPDATE_GOLDEN=1 npm test.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { repoRoot } from './cli.js';

const listFiles = (dir: string, prefix = ''): string[] =>
  existsSync(dir)
    ? readdirSync(dir).flatMap((f) => (statSync(path.join(dir, f)).isDirectory() ? listFiles(path.join(dir, f), `${prefix}${f}/`) : [`${prefix}${f}`])).sort()
    : [];

/** Asserts `files` equal test/golden/<name>/ exactly (same file set, same bytes). */
export const expectGolden = (name: string, files: Record<string, string>): void => {
  const dir = path.join(repoRoot, 'test', 'golden', name);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    rmSync(dir, { recursive: true, force: true });
    for (const [rel, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), content);
    }
    return;
  }
  expect(listFiles(dir), `golden file list for ${name} (UPDATE_GOLDEN=1 to regenerate)`).toEqual(Object.keys(files).sort());
  for (const [rel, content] of Object.entries(files)) {
    expect(content, `golden ${name}/${rel}`).toBe(readFileSync(path.join(dir, rel), 'utf8'));
  }
};
