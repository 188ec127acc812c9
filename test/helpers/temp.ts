// The tests' temporary directories: each is removed after its test file
// (test/helpers/setup.ts), so that a run leaves nothing in /tmp; set
// IMGC_KEEP_TEST_OUTPUT=1 to keep them for a look.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeReclaimed, reclaimDir } from '../../src/build/reclaim.js';

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

/**
 * Removes the directories tempDir made. One with a mount still below it (a
 * test that timed out while its root was mounted for apt) is reclaimed as a
 * killed build's work directory is: what still runs in it is stopped, its
 * mounts are taken down, then it is removed; never rm into a mounted /dev.
 */
export const removeTempDirs = (): void => {
  if (process.env['IMGC_KEEP_TEST_OUTPUT']) return;
  for (const dir of created.splice(0)) {
    if (mountsContaining(dir + path.sep).length === 0) {
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const r = reclaimDir(dir);
    if (r.stuck.length || r.notRemoved) process.stderr.write(`kept ${dir}: ${describeReclaimed(r, dir)}\n`);
    else process.stderr.write(`${dir}: a test left ${r.unmounted} mount(s) and ${r.killed} process(es) in it; stopped, unmounted and removed\n`);
  }
};
