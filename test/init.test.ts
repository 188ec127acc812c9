import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
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

    // Every target after init, for every image (--all, as the workflow compiles): four folders below imgc.toml's root,
    // each as the target writes it alone.
    for (const target of ['packer', 'ansible', 'shell', 'cloud-init']) {
      const r = await imgc(['compile', '--all', '--target', target, '--format', 'json', '--no-typecheck'], { cwd: dir });
      expect(r.exitCode, r.all).toBe(0);
      const [out, ...more] = JSON.parse(r.stdout) as { target: string; out: string; files: { path: string; bytes: number; sha256: string }[]; refusals: unknown[] }[];
      expect(more).toEqual([]);
      expect(out!.out).toBe(`out/k8s-node/${target}`);
      expect(out!.refusals).toEqual([]);
      expect(out!.files.length, target).toBeGreaterThan(0);
    }
    expect(readdirSync(path.join(dir, 'out', 'k8s-node')).sort()).toEqual(['ansible', 'cloud-init', 'packer', 'shell']);
    // The scaffold's CI compiles every target, then lints them: its lint steps, run here on these folders.
    const workflow = parse(readFileSync(path.join(dir, '.github/workflows/imgc.yml'), 'utf8')) as { jobs: { compile: { steps: { name?: string; run?: string }[] } } };
    const steps = workflow.jobs.compile.steps;
    expect(steps.some((s) => s.run?.includes('for target in packer ansible shell cloud-init; do npx imgc compile --all --target "$target"'))).toBe(true);
    const lints = steps.filter((s) => s.name?.startsWith('lint '));
    expect(lints.map((s) => s.name)).toEqual(['lint shell', 'lint ansible', 'lint cloud-init']);
    for (const s of lints) {
      const lint = await execa('bash', ['-eo', 'pipefail', '-c', s.run!], { cwd: dir, reject: false, all: true });
      expect(lint.exitCode, `${s.name}: ${lint.all}`).toBe(0);
    }
    for (const target of ['packer', 'ansible', 'shell', 'cloud-init']) {
      // Complete: the same files, byte for byte, as that target compiled into a folder of its own.
      const alone = path.join(tempDir(`init-alone-${target}`), 'out');
      const r = await imgc(['compile', 'node-image.ts', '--target', target, '--no-typecheck', '--out', alone, '--format', 'json'], { cwd: dir });
      expect(r.exitCode, r.all).toBe(0);
      for (const f of (JSON.parse(r.stdout) as { files: { path: string; bytes: number; sha256: string }[] }).files) {
        const written = readFileSync(path.join(dir, 'out', 'k8s-node', target, f.path));
        expect(written.length, `${target}/${f.path}`).toBe(f.bytes);
        expect(createHash('sha256').update(written).digest('hex'), `${target}/${f.path}`).toBe(f.sha256);
      }
    }

    // The same workflow on a matrix: every combination, every target, each in its own folder, and the lints pass.
    writeFileSync(
      path.join(dir, 'node-image.ts'),
      "import { debian12, image, variants } from 'imgc';\nexport default variants({ arch: ['amd64', 'arm64'] }, (v) => image(`node-${v.arch}`).base(debian12({ arch: v.arch })).customize((p) => p.user('ops')));\n",
    );
    for (const target of ['packer', 'ansible', 'shell', 'cloud-init']) {
      const r = await imgc(['compile', '--all', '--target', target, '--no-typecheck'], { cwd: dir });
      expect(r.exitCode, r.all).toBe(0);
    }
    for (const name of ['node-amd64', 'node-arm64']) expect(readdirSync(path.join(dir, 'out', name)).sort(), name).toEqual(['ansible', 'cloud-init', 'packer', 'shell']);
    for (const s of lints) {
      const lint = await execa('bash', ['-eo', 'pipefail', '-c', s.run!], { cwd: dir, reject: false, all: true });
      expect(lint.exitCode, `${s.name}: ${lint.all}`).toBe(0);
    }
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

  it('depends on the imgc that ran it: the registry version, else a copy in vendor/ of the tarball or directory npm installed it from', () => {
    const project = tempDir('init-install');
    const root = path.join(project, 'node_modules', 'imgc');
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'imgc', version: '0.3.1', dependencies: { typescript: '7.0.2' } }));
    const lock = (resolved: string) =>
      writeFileSync(path.join(project, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/imgc': { version: '0.3.1', resolved } } }));
    lock('https://registry.npmjs.org/imgc/-/imgc-0.3.1.tgz');
    expect(imgcInstall(root)).toEqual({ spec: '^0.3.1', typescript: '7.0.2' });
    lock('file:../dl/imgc-0.3.1.tgz');
    expect(imgcInstall(root)).toEqual({ spec: 'file:vendor/imgc-0.3.1.tgz', typescript: '7.0.2', vendorFrom: path.resolve(project, '../dl/imgc-0.3.1.tgz') });
    lock('../src/imgc');
    expect(imgcInstall(root)).toEqual({ spec: 'file:vendor/imgc-0.3.1.tgz', typescript: '7.0.2', vendorFrom: path.resolve(project, '../src/imgc') });
    // A checkout, or a global install npm keeps no lockfile for.
    expect(imgcInstall(repoRoot).spec).toBe(`file:${repoRoot}`);
  });
});

describe('imgc compile --format json', () => {
  it("names each step the target refuses, writes nothing, and keeps stdout one JSON object", async () => {
    const out = path.join(tempDir('compile-refused'), 'out');
    const r = await imgc(['compile', 'test/fixtures/reboot/reboot-node.ts', '--target', 'cloud-init', '--no-typecheck', '--format', 'json', '--out', out]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('');
    const json = JSON.parse(r.stdout) as { out: string | null; files: unknown[]; refusals: { step: string; code: string; message: string; loc: { file: string; line: number } }[] };
    expect(json.out).toBeNull();
    expect(json.files).toEqual([]);
    expect(json.refusals.map((x) => [x.step, x.code])).toEqual([
      ['customize.2.reboot', 'IMGC2002'],
      ['provision.2.reboot', 'IMGC2002'],
    ]);
    expect(json.refusals[0]!.loc.file).toBe('test/fixtures/reboot/reboot-node.ts');
    expect(existsSync(out)).toBe(false);
  });
});

describe('imgc.toml', () => {
  it('[compile] out is the root of every target\'s folder; [compile.packer] version chooses the template\'s Packer', async () => {
    const dir = tempDir('toml-out');
    writeFileSync(path.join(dir, 'def.ts'), readFileSync(path.join(repoRoot, 'templates/init/node-image.ts'), 'utf8'));
    writeFileSync(path.join(dir, 'imgc.toml'), 'definition = "def.ts"\n[compile]\ntarget = "packer"\nout = "gen"\n[compile.packer]\nversion = "1.6"\n');
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(repoRoot, path.join(dir, 'node_modules', 'imgc'));
    const r = await imgc(['compile', '--no-typecheck'], { cwd: dir });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('written to gen/k8s-node/packer');
    const hcl = readdirSync(path.join(dir, 'gen/k8s-node/packer')).filter((f) => f.endsWith('.pkr.hcl')).map((f) => readFileSync(path.join(dir, 'gen/k8s-node/packer', f), 'utf8')).join('');
    // 1.6 has its builders built in: no required_plugins block.
    expect(hcl).not.toContain('required_plugins');
    writeFileSync(path.join(dir, 'imgc.toml'), 'definition = "def.ts"\n[compile.packer]\nversion = "1.7"\n');
    const bad = await imgc(['compile', '--no-typecheck', '-t', 'packer'], { cwd: dir });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/imgc\.toml:3: compile\.packer\.version: /);
  });

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
