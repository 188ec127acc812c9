// The tests' temporary directories: each is removed after its test file
// (test/helpers/setup.ts), so that a run leaves nothing in /tmp; set
// IMGC_KEEP_TEST_OUTPUT=1 to keep them for a look.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const created: string[] = [];

/** A fresh directory `imgc-<prefix>-XXXXXX` in `parent` (the temp dir by default). */
export const tempDir = (prefix: string, parent = tmpdir()): string => {
  const dir = mkdtempSync(path.join(parent, `imgc-${prefix}-`));
  created.push(dir);
  return dir;
};

/** Mount points whose path contains `fragment` (e.g. a build's work directory). */
export const mountsContaining = (fragment: string): string[] =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => (l.split(' ')[4] ?? '').replace(/\\040/g, ' '))
    .filter((mp) => mp.includes(fragment));

/** Removes the directories tempDir made, but never one with a mount still below it (rm would reach into /dev). */
export const removeTempDirs = (): void => {
  if (process.env['IMGC_KEEP_TEST_OUTPUT']) return;
  for (const dir of created.splice(0)) {
    if (mountsContaining(dir + path.sep).length === 0) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`kept ${dir}: something is still mounted below it\n`);
  }
};
