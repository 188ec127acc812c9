// The exit codes as a shell sees them: bin/imgc.js run as a process (the smoke tests of its plumbing).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { imgcProcess as imgc, tempDir } from './helpers/cli.js';

describe('imgc exit codes', () => {
  it('0 for a clean definition', async () => {
    const r = await imgc(['check', 'examples/node-image.ts']);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('contracts hold');
  });

  it('2 for usage errors, with the usage text', async () => {
    for (const args of [[], ['frobnicate'], ['check'], ['check', 'examples/node-image.ts', '--format', 'xml'], ['check', '--bogus', 'x.ts'], ['compile', 'examples/node-image.ts', '--target', 'nope']]) {
      const r = await imgc(args);
      expect(r.exitCode, `${args.join(' ')}: ${r.all}`).toBe(2);
      expect(r.stderr).toMatch(/imgc|Usage/);
    }
  });

  it('2 with IMGC1005 for a missing file, and no stack trace', async () => {
    const r = await imgc(['check', 'does/not/exist.ts']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('IMGC1005');
    expect(r.all).not.toMatch(/\n\s+at /);
  });

  it('a definition outside the repo, importing imgc, loads', async () => {
    const dir = tempDir('outside');
    const file = path.join(dir, 'node-image.ts');
    writeFileSync(file, "import { image, debian } from 'imgc';\nexport default image('outside').base(debian()).customize((p) => p.user('ops'));\n");
    const r = await imgc(['check', file]);
    expect(r.exitCode, r.all).toBe(0);
  });

  it('--help and --version exit 0', async () => {
    expect((await imgc(['--help'])).exitCode).toBe(0);
    expect((await imgc(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
