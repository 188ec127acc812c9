// An image whose definition has a bootstrap phase builds without the join
// token and without the phase: the root has what provision made and nothing
// of bootstrap, and verify holds it to the image's phases only.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { cannotBuild, imgcRun, outDir, summaryOf } from './helpers.js';

const fixture = path.join(repoRoot, 'test/fixtures/runtime/join.ts');

describe.skipIf(cannotBuild)('imgc build of a definition with a bootstrap phase', () => {
  it('builds the image without the token, and without the phase', async () => {
    const out = outDir('bootstrap-build');
    expect(process.env['IMGC_VAR_JOIN_TOKEN']).toBeUndefined();
    const b = await imgcRun(['build', fixture, '--no-typecheck', '--out', out]);
    expect(b.exitCode, b.all).toBe(0);
    expect(summaryOf(out).phases.map((p) => p.name)).toEqual(['customize', 'provision', 'artifact']);
    const root = path.join(out, 'rootfs');
    expect(existsSync(path.join(root, 'etc/kubernetes/node.conf'))).toBe(true);
    expect(existsSync(path.join(root, 'etc/kubernetes/bootstrap-kubelet.conf'))).toBe(false);
    const verify = await imgcRun(['verify', fixture, '--no-typecheck', '--root', root]);
    expect(verify.exitCode, verify.all).toBe(0);
  }, 900_000);
});
