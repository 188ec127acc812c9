// The reference node built by the Ansible target: the tests every target's
// build must pass (node-image-suite.ts). Its own file, so it builds on a
// second worker while node-image.test.ts builds with the shell target.
import { describe } from 'vitest';
import { cannotBuild } from './helpers.js';
import { referenceNode } from './node-image-suite.js';

describe.skipIf(cannotBuild)('imgc build ansible of examples/node-image-debian.ts', () => {
  referenceNode('ansible');
});
