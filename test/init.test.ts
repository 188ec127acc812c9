import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { imgc, repoRoot, tempDir } from './helpers/cli.js';

describe('imgc init', () => {
  it('scaffolds a project that type-checks in an editor and checks clean', async () => {
    const dir = path.join(tempDir('init'), 'my-node');
    const r = await imgc(['init', dir]);
    expect(r.exitCode, r.all).toBe(0);
    for (const f of ['node-image.ts', 'imgc.toml', 'tsconfig.json', 'package.json', '.gitignore', '.github/workflows/imgc.yml']) expect(existsSync(path.join(dir, f)), f).toBe(true);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies['imgc']).toMatch(/^\^\d+\.\d+\.\d+$/);
    expect(readFileSync(path.join(dir, '.github/workflows/imgc.yml'), 'utf8')).toContain('imgc check --format sarif');
    // As `npm install` would: imgc resolvable from the project's node_modules.
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(repoRoot, path.join(dir, 'node_modules', 'imgc'));
    const tsc = await execa('node', [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir], { reject: false, all: true });
    expect(tsc.exitCode, tsc.all).toBe(0);
    const check = await imgc(['check'], { cwd: dir });
    expect(check.exitCode, check.all).toBe(0);
  });

  it('never overwrites an existing file', async () => {
    const dir = tempDir('init-existing');
    writeFileSync(path.join(dir, 'node-image.ts'), 'mine\n');
    const r = await imgc(['init', dir]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('refusing to overwrite node-image.ts');
    expect(readFileSync(path.join(dir, 'node-image.ts'), 'utf8')).toBe('mine\n');
    expect(existsSync(path.join(dir, 'imgc.toml'))).toBe(false);
  });
});

describe('imgc.toml', () => {
  it('names the definition, and its errors point at the TOML line', async () => {
    const dir = tempDir('toml');
    writeFileSync(path.join(dir, 'imgc.toml'), '# settings\ndefinition = "node-image.ts"\n\n[compile]\ntarget = "pakcer"\n');
    const r = await imgc(['check'], { cwd: dir });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/imgc\.toml:5: compile\.target: /);
    writeFileSync(path.join(dir, 'imgc.toml'), 'definition = \n');
    const s = await imgc(['check'], { cwd: dir });
    expect(s.exitCode).toBe(2);
    expect(s.stderr).toMatch(/imgc\.toml:1:\d+: /);
  });
});
