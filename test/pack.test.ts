// The library API from a consumer's side: pack imgc as npm would publish
// it, install the tarball into a fresh project, type-check and run a
// definition there. And a consumer's install never builds imgc: no tarball
// has a build script to run, and one from a directory runs none.
import { cpSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from './helpers/cli.js';

describe('npm pack consumer', () => {
  it('installs, type-checks and runs a definition importing imgc', async () => {
    const packDir = tempDir('pack');
    // The build already ran (npm test builds first); skip prepare's rebuild.
    const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], { cwd: repoRoot });
    const [{ filename, files }] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
    const shipped = files.map((f) => f.path);
    expect(shipped).toContain('dist/src/index.d.ts');
    expect(shipped).toContain('bin/imgc.js');
    expect(shipped).toContain('templates/init/node-image.ts'); // imgc init's scaffold
    expect(shipped).toContain('dist/src/load/evaluate.js'); // the evaluation's script
    // No sources ship, only what was built from them; templates/ holds the scaffold's files, data that imgc init copies.
    expect(shipped.filter((f) => f.startsWith('test/') || f.startsWith('src/') || (f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('templates/')))).toEqual([]);

    const project = tempDir('consumer');
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // The consumer's own TypeScript, both majors: the published declarations must work with each.
    const install = await execa('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(packDir, filename), 'typescript@7', 'typescript-5.9@npm:typescript@5.9', '@types/node@20'], { cwd: project, reject: false, all: true });
    expect(install.exitCode, install.all).toBe(0);

    writeFileSync(
      path.join(project, 'node-image.ts'),
      [
        "import { image, debian, containerd, defineModule } from 'imgc';",
        "export const motd = defineModule<{ path: '/etc/motd' }>((p) => p.file('/etc/motd', { content: 'hi\\n' }));",
        "export default image('consumer').base(debian({ include: ['systemd'] }))",
        // Node's globals come from the consumer's own @types/node (imgc ships none).
        "  .customize((p) => p.user('kube').file('/etc/kube.conf', { owner: 'kube', content: `${process.env['KUBE_CONF'] ?? 'x'}\\n` }))",
        "  .provision((p) => p.use(containerd()).use(motd).enableService('containerd'));",
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, types: ['node'] }, include: ['*.ts'] }),
    );
    for (const [pkg, major] of [['typescript', '7.'], ['typescript-5.9', '5.9.']] as const) {
      const tsc = path.join(project, 'node_modules', pkg, 'bin', 'tsc');
      expect((await execa('node', [tsc, '--version'])).stdout).toContain(`Version ${major}`);
      const checked = await execa('node', [tsc, '-p', project], { reject: false, all: true });
      expect(checked.exitCode, `${pkg}: ${checked.all}`).toBe(0);
    }

    const env = { IMGC_CACHE: path.join(packDir, 'cache') };
    const check = await execa(path.join(project, 'node_modules/.bin/imgc'), ['check', 'node-image.ts'], { cwd: project, env, reject: false, all: true });
    expect(check.exitCode, check.all).toBe(0);
    expect(check.stdout).toContain('contracts hold');
    // The archive's table ships and is found from the installed package: a misspelt package is named.
    writeFileSync(path.join(project, 'typo.ts'), "import { debian12, image } from 'imgc';\nexport default image('typo').base(debian12()).provision((p) => p.packages(['ngnix']));\n");
    const typo = await execa(path.join(project, 'node_modules/.bin/imgc'), ['check', 'typo.ts'], { cwd: project, env, reject: false, all: true });
    expect(typo.exitCode, typo.all).toBe(1);
    expect(typo.all).toContain("IMGC0017: package 'ngnix' is not in Debian 12");
    expect(typo.all).toContain("did you mean 'nginx'?");
    const version = JSON.parse(readFileSync(path.join(project, 'node_modules/imgc/package.json'), 'utf8')) as { version: string };
    expect(version.version).toBe((JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
    // No source maps (they were half the package), zod once (build:zod's bundle, which the evaluation's chunks import as #zod),
    // an esbuild outside GHSA-67mh-4wv8-2f99 (<= 0.24.2), and the tarball under 1 MB besides Debian's package
    // table (stdlib/archive/debian-12.txt, what every archive package brings: docs/packages.md), counted as gzip packs it.
    expect(shipped.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(shipped).toContain('LICENSE');
    expect(shipped).toContain('stdlib/archive/debian-12.txt');
    // arm64's archive, a delta against that table, ships too (and counts toward the 1 MB).
    expect(shipped).toContain('stdlib/archive/debian-12-arm64.txt');
    const table = gzipSync(readFileSync(path.join(repoRoot, 'stdlib/archive/debian-12.txt')), { level: 9 }).length;
    expect(statSync(path.join(packDir, filename)).size - table).toBeLessThan(1 << 20);
    const bundles = shipped.filter((f) => f.endsWith('.js') && /Colin McDonnell/.test(readFileSync(path.join(project, 'node_modules/imgc', f), 'utf8')));
    expect(bundles).toEqual(['dist/src/util/zod.js']);
    const esbuild = (JSON.parse(readFileSync(path.join(project, 'node_modules/esbuild/package.json'), 'utf8')) as { version: string }).version.split('.').map(Number);
    expect(esbuild[0]! > 0 || esbuild[1]! >= 25, esbuild.join('.')).toBe(true);

    // A new user's path, as the README's quick start: a new project, npm install of the tarball,
    // imgc init, commit; then a clean clone elsewhere (CI) installs with npm ci and checks clean,
    // with the tarball it was installed from gone: the project carries its copy in vendor/.
    const npm = (args: string[], cwd: string) => execa('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], { cwd, reject: false, all: true });
    const git = (args: string[], cwd: string) => execa('git', ['-c', 'user.name=imgc test', '-c', 'user.email=test@imgc.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd, all: true });
    const mine = path.join(tempDir('scaffold'), 'my-node');
    mkdirSync(mine);
    writeFileSync(path.join(mine, 'package.json'), JSON.stringify({ name: 'my-node', version: '1.0.0' }, null, 2));
    const installMine = await npm(['install', path.join(packDir, filename)], mine);
    expect(installMine.exitCode, installMine.all).toBe(0);
    const init = await execa(path.join(mine, 'node_modules/.bin/imgc'), ['init', '.'], { cwd: mine, env, reject: false, all: true });
    expect(init.exitCode, init.all).toBe(0);
    expect(init.stdout).toContain(`  created vendor/${filename}\n`);
    const manifest = JSON.parse(readFileSync(path.join(mine, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies['imgc']).toBe(`file:vendor/${filename}`);
    expect(readFileSync(path.join(mine, 'vendor', filename)).equals(readFileSync(path.join(packDir, filename)))).toBe(true);
    const relock = await npm(['install'], mine);
    expect(relock.exitCode, relock.all).toBe(0);
    await git(['init', '-q'], mine);
    await git(['add', '-A'], mine);
    await git(['commit', '-qm', 'imgc init'], mine);
    const tracked = (await git(['ls-files'], mine)).stdout.split('\n');
    expect(tracked).toEqual(expect.arrayContaining(['package-lock.json', `vendor/${filename}`, 'node-image.ts', 'imgc.toml', '.github/workflows/imgc.yml']));
    expect(tracked.filter((f) => f.startsWith('node_modules/'))).toEqual([]);
    const clone = path.join(tempDir('clone'), 'my-node');
    await git(['clone', '-q', mine, clone], path.dirname(clone));
    renameSync(path.join(packDir, filename), path.join(packDir, `${filename}.away`));
    try {
      const ci = await npm(['ci'], clone);
      expect(ci.exitCode, ci.all).toBe(0);
    } finally {
      renameSync(path.join(packDir, `${filename}.away`), path.join(packDir, filename));
    }
    const cloneTsc = await execa('node', [path.join(clone, 'node_modules/typescript/bin/tsc'), '-p', clone], { reject: false, all: true });
    expect(cloneTsc.exitCode, cloneTsc.all).toBe(0);
    const cloneCheck = await execa('npx', ['imgc', 'check'], { cwd: clone, env: { ...env, npm_config_offline: 'true' }, reject: false, all: true });
    expect(cloneCheck.exitCode, cloneCheck.all).toBe(0);
    expect(cloneCheck.stdout).toContain('contracts hold');
    // Four npm installs and four type-checks: minutes on a busy 2-core machine.
  }, 600_000);

  it("a consumer's install from a directory runs no build script, linked or packed (as npm packs a git dependency)", async () => {
    // A built checkout without node_modules: a build script (prepare) would fail here, as tsc is not installed.
    const checkout = tempDir('checkout');
    const shipped = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { files: string[] }).files;
    for (const f of ['package.json', 'LICENSE', 'README.md', ...shipped.filter((g) => !g.startsWith('!'))]) cpSync(path.join(repoRoot, f), path.join(checkout, f), { recursive: true });
    const built = statSync(path.join(checkout, 'dist/src/index.js')).mtimeMs;
    const scripts = (JSON.parse(readFileSync(path.join(checkout, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    // What npm runs when it installs a directory (a link: prepare) or packs one for a git dependency (prepare, after preinstall/install/postinstall).
    expect(Object.keys(scripts).filter((k) => ['prepare', 'preinstall', 'install', 'postinstall'].includes(k))).toEqual([]);
    expect(scripts['prepack']).toBe('npm run build');

    for (const how of [[], ['--install-links']]) {
      const project = tempDir('consumer-dir');
      writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
      const install = await execa('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--foreground-scripts', ...how, checkout], { cwd: project, reject: false, all: true });
      expect(install.exitCode, install.all).toBe(0);
      expect(install.all, how.join(' ')).not.toMatch(/imgc@[\d.]+ (prepare|prepack|build)\b/);
      const installed = path.join(project, 'node_modules/imgc');
      expect(realpathSync(installed) === realpathSync(checkout), how.join(' ')).toBe(how.length === 0);
      // Packed, it is a whole install (its dependencies too): it runs. (A link uses the checkout's node_modules, none here.)
      if (how.length) {
        const version = await execa(path.join(project, 'node_modules/.bin/imgc'), ['--version'], { reject: false, all: true });
        expect(version.stdout, version.all).toContain((JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
      }
    }
    expect(statSync(path.join(checkout, 'dist/src/index.js')).mtimeMs).toBe(built);
  }, 300_000);
});
