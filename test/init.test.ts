import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { imgcInstall } from '../src/cli/init.js';
import { imgc, repoRoot, tempDir } from './helpers/cli.js';

describe('imgc init', () => {
  it('scaffolds a project that type-checks in an editor and checks clean', async () => {
    const dir = path.join(tempDir('init'), 'my-node');
    const r = await imgc(['init', dir]);
    expect(r.exitCode, r.all).toBe(0);
    for (const f of ['node-image.ts', 'imgc.toml', 'tsconfig.json', 'package.json', '.gitignore', '.github/workflows/imgc.yml']) expect(existsSync(path.join(dir, f)), f).toBe(true);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies['imgc']).toBe(`file:${repoRoot}`);
    expect(readFileSync(path.join(dir, 'imgc.toml'), 'utf8')).not.toMatch(/https?:/);
    expect(readFileSync(path.join(dir, '.github/workflows/imgc.yml'), 'utf8')).toContain('imgc check --format sarif');
    // As `npm install` would: imgc resolvable from the project's node_modules.
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(repoRoot, path.join(dir, 'node_modules', 'imgc'));
    const tsc = await execa('node', [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir], { reject: false, all: true });
    expect(tsc.exitCode, tsc.all).toBe(0);
    const check = await imgc(['check'], { cwd: dir });
    expect(check.exitCode, check.all).toBe(0);
  });

  it('never overwrites an existing definition, and then writes nothing at all', async () => {
    const dir = tempDir('init-existing');
    writeFileSync(path.join(dir, 'node-image.ts'), 'mine\n');
    writeFileSync(path.join(dir, 'package.json'), '{"name":"mine"}\n');
    const r = await imgc(['init', dir]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('refusing to overwrite node-image.ts');
    expect(r.stderr).not.toMatch(/imgc: imgc/);
    expect(readFileSync(path.join(dir, 'node-image.ts'), 'utf8')).toBe('mine\n');
    expect(readFileSync(path.join(dir, 'package.json'), 'utf8')).toBe('{"name":"mine"}\n');
    expect(existsSync(path.join(dir, 'imgc.toml'))).toBe(false);
  });

  it('in an existing npm project, adds the dependency and scripts and keeps everything of the project', async () => {
    const dir = tempDir('init-merge');
    const mine = { name: 'platform', version: '2.0.0', scripts: { check: 'make lint', test: 'vitest' }, devDependencies: { typescript: '5.9.3' } };
    writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(mine, null, 4)}\n`);
    writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n.env');
    writeFileSync(path.join(dir, 'tsconfig.json'), '{"compilerOptions":{"strict":true}}\n');
    const r = await imgc(['init', '.'], { cwd: dir });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('  updated package.json\n');
    expect(r.stdout).toContain('  kept tsconfig.json');
    // The target is the current directory: no `cd .`.
    expect(r.stdout).toMatch(/\nnext: npm install && npx imgc check$/);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as typeof mine & { devDependencies: Record<string, string> };
    expect(pkg.name).toBe('platform');
    expect(pkg.scripts).toEqual({ check: 'make lint', test: 'vitest', compile: 'imgc compile', 'check:sarif': 'imgc check --format sarif > imgc.sarif' });
    expect(pkg.devDependencies['typescript']).toBe('5.9.3');
    expect(pkg.devDependencies['imgc']).toBe(`file:${repoRoot}`);
    expect(readFileSync(path.join(dir, 'package.json'), 'utf8')).toMatch(/^\{\n {4}"name"/);
    expect(readFileSync(path.join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\n.env\nout/\nimgc.sarif\n');
    expect(readFileSync(path.join(dir, 'tsconfig.json'), 'utf8')).toBe('{"compilerOptions":{"strict":true}}\n');
    expect(existsSync(path.join(dir, 'node-image.ts'))).toBe(true);
  });

  it('depends on the imgc that ran it: the registry version, else the tarball or directory npm installed it from', () => {
    const project = tempDir('init-install');
    const root = path.join(project, 'node_modules', 'imgc');
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'imgc', version: '0.3.1', dependencies: { typescript: '7.0.2' } }));
    const lock = (resolved: string) =>
      writeFileSync(path.join(project, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/imgc': { version: '0.3.1', resolved } } }));
    lock('https://registry.npmjs.org/imgc/-/imgc-0.3.1.tgz');
    expect(imgcInstall(root)).toEqual({ spec: '^0.3.1', typescript: '7.0.2' });
    lock('file:../dl/imgc-0.3.1.tgz');
    expect(imgcInstall(root).spec).toBe(`file:${path.resolve(project, '../dl/imgc-0.3.1.tgz')}`);
    // A checkout, or a global install npm keeps no lockfile for.
    expect(imgcInstall(repoRoot).spec).toBe(`file:${repoRoot}`);
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
