// The test files that build and boot the reference node take most of the
// suite's time (15-25 minutes each on 2 cores). Vitest orders files by the
// durations of its last run, which a clean clone (CI) has not got, and then by
// size, which puts these short files last: the suite then ended with one
// worker building alone (the node-image build started 29 minutes in, 58 in
// all). Started first, they run side by side and the rest fills in around them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Longest first. A renamed file is an error here rather than a silently slower suite. */
const longest = ['test/build/node-image.test.ts', 'test/build/node-image-ansible.test.ts', 'test/fleet/fleet.test.ts'];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const missing = longest.filter((f) => !existsSync(path.join(root, f)));
    if (missing.length) throw new Error(`test/helpers/longest-first.ts names test files that do not exist: ${missing.join(', ')}`);
    const rank = (f: TestSpecification): number => {
      const i = longest.indexOf(path.relative(root, f.moduleId));
      return i < 0 ? longest.length : i;
    };
    // Array.prototype.sort is stable: the other files keep vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
