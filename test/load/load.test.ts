// Loading a definition (src/load): TypeScript modules linked in a
// worker thread, TypeScript 7's compiler beside it, both bounded in time;
// and no imgc command leaves a process behind.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { imgc, imgcBin, repoRoot, tempDir } from '../helpers/cli.js';
import { tscBinary } from '../../src/load/typecheck.js';

const write = (dir: string, files: Record<string, string>) => {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
};

/** Command lines of the running processes that contain `marker`. */
const processesWith = (marker: string): string[] =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .flatMap((p) => {
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
        return cmd.includes(marker) ? [`${p}: ${cmd}`] : [];
      } catch {
        return []; // gone meanwhile
      }
    });

const waitFor = async (what: string, ready: () => boolean, ms = 60_000) => {
  for (let waited = 0; !ready(); waited += 100) {
    if (waited > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('a definition made of several files', () => {
  it('imports relative modules, JSON, a package from its own node_modules, import.meta, and awaits at the top level', async () => {
    const dir = tempDir('load-features');
    write(dir, {
      'package.json': '{ "type": "module" }\n',
      'node_modules/greeting/package.json': '{ "name": "greeting", "type": "module", "exports": "./index.js", "types": "./index.d.ts" }\n',
      'node_modules/greeting/index.js': "export const greet = (who) => `hello ${who}`;\n",
      'node_modules/greeting/index.d.ts': 'export declare const greet: (who: string) => string;\n',
      'users.json': '{ "admin": "ops" }\n',
      'lib/users.ts': "import users from '../users.json' with { type: 'json' };\nexport const admin: string = users.admin;\n",
      'def.ts': [
        "import { debian12, image } from 'imgc';",
        "import { greet } from 'greeting';",
        "import { admin } from './lib/users.js';",
        'const motd = await Promise.resolve(greet(admin));',
        "export default image('features').base(debian12()).customize((p) =>",
        "  p.user(admin).file('/etc/motd', { content: `${motd}\\n${import.meta.url}\\n${import.meta.dirname}\\n` }),",
        ');',
        '',
      ].join('\n'),
    });
    const r = await imgc(['ir', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-features-cache') } });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stderr).toBe('');
    const steps = (JSON.parse(r.stdout) as { phases: { steps: { kind: string; name?: string; content?: string; loc?: { file: string; line: number } }[] }[] }).phases.flatMap((p) => p.steps);
    expect(steps.find((s) => s.kind === 'user')).toMatchObject({ name: 'ops', loc: { file: 'def.ts', line: 6 } });
    expect(steps.find((s) => s.kind === 'file')?.content).toBe(`hello ops\nfile://${path.join(dir, 'def.ts')}\n${dir}\n`);
  });

  it('awaits at the top level and reads import.meta in a package without "type": "module" too: the type-check runs it as the loader does', async () => {
    const dir = tempDir('load-commonjs-package');
    write(dir, {
      'package.json': '{ "name": "plain", "version": "1.0.0" }\n',
      'def.ts': [
        "import { debian12, image } from 'imgc';",
        'const motd = await Promise.resolve(`hello from ${import.meta.dirname}`);',
        "export default image('plain').base(debian12()).customize((p) => p.file('/etc/motd', { content: `${motd}\\n` }));",
        '',
      ].join('\n'),
    });
    const env = { IMGC_CACHE: tempDir('load-commonjs-cache') };
    for (const args of [[], ['--no-typecheck']]) {
      const r = await imgc(['check', ...args, path.join(dir, 'def.ts')], { env });
      expect(r.exitCode, `imgc check ${args.join(' ')}: ${r.all}`).toBe(0);
    }
    // Still type-checked: the awaited value keeps its type.
    writeFileSync(path.join(dir, 'def.ts'), readFileSync(path.join(dir, 'def.ts'), 'utf8').replace('const motd =', 'const motd: number ='));
    const bad = await imgc(['check', path.join(dir, 'def.ts')], { env });
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toContain("TS2322: Type 'string' is not assignable to type 'number'");
    expect(bad.stdout).not.toMatch(/TS1309|TS1470/);
  });

  it('imports a TypeScript module dynamically as Node would, its errors at its own lines, and import.meta.resolve names it', async () => {
    const dir = tempDir('load-dynamic');
    write(dir, {
      'later.ts': "type At = `/${string}`;\nexport const at: At = '/etc/later';\nexport const fail = (why: string): never => {\n  throw new Error(why);\n};\n",
      'def.ts': [
        "import { debian12, image } from 'imgc';",
        "const later = await import('./later.js');",
        "if (process.env['IMGC_TEST_FAIL']) later.fail('asked to fail');",
        // As Node's: a file that is not there has a URL too.
        "export default image('dynamic').base(debian12()).customize((p) => p.file(later.at, { content: `${import.meta.resolve('./later.ts')} ${import.meta.resolve('./not-yet.json')}` }));",
        '',
      ].join('\n'),
    });
    const cache = tempDir('load-dynamic-cache');
    const r = await imgc(['ir', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: cache } });
    expect(r.exitCode, r.all).toBe(0);
    const file = (JSON.parse(r.stdout) as { phases: { steps: { kind: string; path?: string; content?: string }[] }[] }).phases.flatMap((p) => p.steps).find((s) => s.kind === 'file');
    expect(file).toMatchObject({ path: '/etc/later', content: `${pathToFileURL(path.join(dir, 'later.ts')).href} ${pathToFileURL(path.join(dir, 'not-yet.json')).href}` });
    const failed = await imgc(['check', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: cache, IMGC_TEST_FAIL: '1' } });
    expect(failed.exitCode, failed.all).toBe(2);
    const [d] = (JSON.parse(failed.stdout) as { diagnostics: { code: string; message: string; loc?: { file: string; line: number; column: number } }[] }).diagnostics;
    expect(d).toMatchObject({ code: 'IMGC1002', message: 'asked to fail', loc: { line: 4, column: 9 } });
    expect(d?.loc?.file).toMatch(/\/later\.ts$/);
  });

  it('is evaluated when imgc runs with a V8 flag, which a worker refuses: the evaluation is given its own flags only', async () => {
    const dir = tempDir('load-v8-flag');
    write(dir, { 'def.ts': "import { debian12, image } from 'imgc';\nexport default image('flagged').base(debian12());\n" });
    const r = await execa(process.execPath, ['--max-old-space-size=1024', imgcBin, 'check', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-v8-flag-cache') }, reject: false, all: true });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('reports an error thrown in an imported module at the line in that module (IMGC1002, source-mapped)', async () => {
    const dir = tempDir('load-throws');
    write(dir, {
      'lib.ts': "type Name = string;\nexport const name = (n: Name): Name => {\n  if (!n) throw new Error('no name given');\n  return n;\n};\n",
      'def.ts': "import { debian12, image } from 'imgc';\nimport { name } from './lib.js';\n\nexport default image(name('')).base(debian12());\n",
    });
    const r = await imgc(['check', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-throws-cache') } });
    expect(r.exitCode).toBe(2);
    const [d] = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string; loc?: { file: string; line: number; column: number } }[] }).diagnostics;
    expect(d).toMatchObject({ code: 'IMGC1002', message: 'no name given' });
    expect(d?.loc?.file).toMatch(/lib\.ts$/);
    expect(d?.loc).toMatchObject({ line: 3, column: 17 });
  });

  it('reports an import of a file that is not there, or of a directory, as Node does and naming the file that imports it', async () => {
    const dir = tempDir('load-missing');
    mkdirSync(path.join(dir, 'adir'));
    write(dir, {
      'missing.ts': "import { debian12, image } from 'imgc';\nimport { x } from './nothere.js';\nexport default image(`m${x}`).base(debian12());\n",
      'directory.ts': "import { debian12, image } from 'imgc';\nimport './adir';\nexport default image('d').base(debian12());\n",
    });
    const env = { IMGC_CACHE: tempDir('load-missing-cache') };
    for (const [file, message] of [
      ['missing.ts', `Cannot find module '${path.join(dir, 'nothere.js')}' imported from ${path.join(dir, 'missing.ts')}`],
      ['directory.ts', `Directory import '${path.join(dir, 'adir')}' is not supported resolving ES modules imported from ${path.join(dir, 'directory.ts')}`],
    ]) {
      const r = await imgc(['check', '--no-typecheck', '--format', 'json', path.join(dir, file!)], { env });
      expect(r.exitCode, r.all).toBe(2);
      const ds = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string; loc?: unknown }[] }).diagnostics;
      // No location: Node's own frames (node:internal/modules/…) are not the user's lines.
      expect(ds).toEqual([expect.objectContaining({ code: 'IMGC1002', message })]);
      expect(ds[0]?.loc).toBeUndefined();
    }
    // A failed evaluation is not kept: once the file is there, the definition is checked again.
    write(dir, { 'nothere.ts': 'export const x = 1;\n' });
    const again = await imgc(['check', '--no-typecheck', path.join(dir, 'missing.ts')], { env });
    expect(again.exitCode, again.all).toBe(0);
  });

  it('is never run when a file of it has a syntax error (IMGC1006, at the line TypeScript gives)', async () => {
    const dir = tempDir('load-syntax');
    const marker = path.join(dir, 'ran');
    write(dir, {
      'lib.ts': `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport const x = (;\n`,
      'def.ts': `import { writeFileSync } from 'node:fs';\nimport { debian12, image } from 'imgc';\nimport './lib.js';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport default image('x').base(debian12());\n`,
    });
    for (const args of [[], ['--no-typecheck']]) {
      const r = await imgc(['check', '--format', 'json', ...args, path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-syntax-cache') } });
      expect(r.exitCode, r.all).toBe(2);
      const ds = (JSON.parse(r.stdout) as { diagnostics: { code: string; loc?: { file: string; line: number } }[] }).diagnostics;
      expect(ds.map((d) => [d.code, path.basename(d.loc?.file ?? ''), d.loc?.line])).toEqual([['IMGC1006', 'lib.ts', 3]]);
      expect(existsSync(marker)).toBe(false);
    }
  });
});

describe('a definition that never finishes', () => {
  it('is stopped after --timeout with IMGC1007 naming the file, and every process it started is gone', async () => {
    const dir = tempDir('load-loop');
    const marker = `${process.pid}${Date.now() % 100000}`;
    write(dir, {
      'def.ts': `import { spawn } from 'node:child_process';\nimport { debian12, image } from 'imgc';\nspawn('sleep', ['${marker}'], { stdio: 'ignore' });\nwhile (Date.now() > 0) {}\nexport default image('x').base(debian12());\n`,
    });
    const started = Date.now();
    const r = await imgc(['check', '--timeout', '1', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-loop-cache') } });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.exitCode, r.all).toBe(2);
    const ds = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string; loc?: { file: string } }[] }).diagnostics;
    expect(ds).toEqual([expect.objectContaining({ code: 'IMGC1007', message: expect.stringContaining("'def.ts' did not finish evaluating within 1 s"), loc: expect.objectContaining({ file: expect.stringMatching(/\/def\.ts$/) }) })]);
    expect(processesWith(`sleep ${marker}`)).toEqual([]);
    expect(processesWith(dir)).toEqual([]);
  });

  it.each([
    ['spawn', (marker: string) => `import { spawn } from 'node:child_process';\nspawn('sh', ['-c', 'sleep ${marker}; :'], { stdio: 'ignore' });`],
    ['exec', (marker: string) => `import { exec } from 'node:child_process';\nexec('sleep ${marker}; :');`],
  ])('stops what the definition started and left running (%s), when the command ends', async (_how, started) => {
    const dir = tempDir('load-stray');
    const marker = `${process.pid}${(Date.now() % 100000) + 1}`;
    write(dir, {
      'def.ts': `${started(marker)}\nimport { debian12, image } from 'imgc';\nexport default image('x').base(debian12());\n`,
    });
    const r = await imgc(['check', '--no-typecheck', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-stray-cache') } });
    expect(r.exitCode, r.all).toBe(0);
    // The shell and the sleep it started: the definition's whole tree.
    expect(processesWith(`sleep ${marker}`)).toEqual([]);
  });

  it.each([
    ['process.exit(3);', 'IMGC1002', /ended \(exit code 3\) before it produced an image/, 1],
    ['await new Promise(() => {});', 'IMGC1002', /stopped before it produced an image: it awaits something nothing is left to settle/, 1],
    ["setTimeout(() => { throw new RangeError('later'); });\nawait new Promise((r) => setTimeout(r, 100));", 'IMGC1002', /^RangeError: later$/, 3],
  ])('reports a definition that ends the evaluation itself (%s) with a diagnostic', async (code, expected, message, line) => {
    const dir = tempDir('load-ends');
    write(dir, { 'def.ts': `import { debian12, image } from 'imgc';\n\n${code}\nexport default image('x').base(debian12());\n` });
    const r = await imgc(['check', '--no-typecheck', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-ends-cache') } });
    expect(r.exitCode, r.all).toBe(2);
    const ds = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string; loc?: { line: number } }[] }).diagnostics;
    expect(ds).toEqual([expect.objectContaining({ code: expected, message: expect.stringMatching(message), loc: expect.objectContaining({ line }) })]);
  });

  it.each([
    ["throw new TypeError('made by hand, wrongly');", 'TypeError: made by hand, wrongly'],
    ["throw 'a string';", 'a string'],
  ])('reports what an image made by hand throws from toIR (%s), as it reports any other throw', async (code, message) => {
    const dir = tempDir('load-toir');
    write(dir, { 'def.ts': `export default { toIR() { ${code} } };\n` });
    const r = await imgc(['check', '--no-typecheck', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: tempDir('load-toir-cache') } });
    expect(r.exitCode, r.all).toBe(2);
    expect((JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] }).diagnostics).toEqual([expect.objectContaining({ code: 'IMGC1002', message })]);
  });

  it('takes --timeout only as a number of seconds', async () => {
    const r = await imgc(['check', '--timeout', 'soon', 'examples/node-image.ts']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("--timeout takes a number of seconds greater than 0 (got 'soon')");
  });
});

describe('processes', () => {
  it('leaves none running after `imgc check` outside CI', async () => {
    const cache = tempDir('load-none-cache');
    const def = path.join(tempDir('load-none'), 'type-error.ts');
    writeFileSync(def, readFileSync(path.join(repoRoot, 'examples', 'broken', 'type-error.ts')));
    const r = await imgc(['check', def], { env: { IMGC_CACHE: cache, CI: '' } });
    expect(r.exitCode, r.all).toBe(1);
    // The type-check's project lives in the cache; nothing may name the definition.
    expect(processesWith(cache)).toEqual([]);
    expect(processesWith(def)).toEqual([]);
  });

  it('`imgc check --watch` checks again when a file is saved, and nothing of it runs after Ctrl-C', async () => {
    const dir = tempDir('load-watch');
    const cache = tempDir('load-watch-cache');
    write(dir, {
      'lib.ts': "export const owner = 'ops';\n",
      'def.ts': "import { debian12, image } from 'imgc';\nimport { owner } from './lib.js';\nexport default image('w').base(debian12()).customize((p) => p.user('ops').file('/etc/x', { owner, content: '' }));\n",
    });
    const child = spawn(process.execPath, [imgcBin, 'check', '--watch', path.join(dir, 'def.ts')], { cwd: repoRoot, env: { ...process.env, IMGC_CACHE: cache, NO_COLOR: '1' } });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
    try {
      await waitFor('the first check', () => out.includes('Watching 2 files'));
      expect(out).toContain('contracts hold');
      // A save of an imported file, with an owner no step creates.
      writeFileSync(path.join(dir, 'lib.ts'), "export const owner = 'nobody-here';\n");
      await waitFor('the second check', () => /Change detected[\s\S]*IMGC0003[\s\S]*Watching/.test(out));
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).not.toBe(0);
    expect(processesWith(cache)).toEqual([]);
    expect(processesWith(path.join(dir, 'def.ts'))).toEqual([]);
  });
});

describe('a closed pipe', () => {
  it.each([['schema'], ['docs'], ['ir', 'examples/node-image.ts'], ['check', '--format', 'json', 'examples/node-image.ts']])('`imgc %s … | head -1` ends quietly', async (...args) => {
    const r = await execa('sh', ['-c', `node ${imgcBin} ${args.join(' ')} | head -c 1`], { cwd: repoRoot, reject: false, env: { IMGC_CACHE: tempDir('pipe-cache') } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toHaveLength(1);
    expect(r.stderr).toBe('');
  });
});

describe('the type-check', () => {
  it('runs TypeScript\'s native compiler itself, not the Node script that starts it (a Node process less per check)', () => {
    const tsc = tscBinary();
    expect(tsc.args).toEqual([]);
    expect(tsc.command).not.toBe(process.execPath);
    expect(readFileSync(tsc.command).subarray(0, 4)).toEqual(Buffer.from('\x7fELF', 'latin1'));
  });

  it('is cached by the content of every file it read: checked again when an imported file changes, not when nothing did', async () => {
    const dir = tempDir('load-tc');
    const cache = tempDir('load-tc-cache');
    write(dir, {
      'lib.ts': "export const owner: 'ops' = 'ops';\n",
      'def.ts': "import { debian12, image } from 'imgc';\nimport { owner } from './lib.js';\nexport default image('t').base(debian12()).customize((p) => p.user('ops').file('/etc/x', { owner, content: '' }));\n",
    });
    const check = async () => {
      const r = await imgc(['check', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: cache } });
      return (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] }).diagnostics;
    };
    expect(await check()).toEqual([]);
    // An answer taken from the cache is not written again.
    const entries = () => readdirSync(path.join(cache, 'typecheck')).map((f) => statSync(path.join(cache, 'typecheck', f)).mtimeMs);
    const first = entries();
    expect(first).toHaveLength(1);
    expect(await check()).toEqual([]);
    expect(entries()).toEqual(first);
    writeFileSync(path.join(dir, 'lib.ts'), "export const owner: 'ops' = 'root';\n");
    const ds = await check();
    expect(ds.map((d) => d.code)).toEqual(['IMGC1001']);
    expect(ds[0]?.message).toMatch(/^TS2322: Type '"root"' is not assignable to type '"ops"'/);
  });
});

describe('the type-check\'s cache key', () => {
  it('holds the package a definition imports from node_modules by its package.json: a new version is checked again', async () => {
    const dir = tempDir('load-tc-dep');
    const cache = tempDir('load-tc-dep-cache');
    const dep = (version: string, owner: string) =>
      write(dir, {
        'node_modules/site-contract/package.json': JSON.stringify({ name: 'site-contract', version, type: 'module', exports: { '.': { types: './index.d.ts', default: './index.js' } } }),
        'node_modules/site-contract/index.d.ts': `export declare const owner: '${owner}';\n`,
        'node_modules/site-contract/index.js': "export const owner = 'ops';\n",
      });
    dep('1.0.0', 'ops');
    write(dir, {
      'package.json': '{ "type": "module" }\n',
      'def.ts': "import { debian12, image } from 'imgc';\nimport { owner } from 'site-contract';\nconst o: 'ops' = owner;\nexport default image('t').base(debian12()).customize((p) => p.user('ops').file('/etc/x', { owner: o, content: '' }));\n",
    });
    const check = async () => {
      const r = await imgc(['check', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: cache } });
      return (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] }).diagnostics.map((d) => d.message.slice(0, 7));
    };
    expect(await check()).toEqual([]);
    dep('2.0.0', 'root');
    expect(await check()).toEqual(['TS2322:']);
  });
});

describe('the result of a definition', () => {
  const ir = async (dir: string, cache: string, env: Record<string, string> = {}) => {
    const r = await imgc(['ir', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: cache, ...env } });
    expect(r.exitCode, r.all).toBe(0);
    return (JSON.parse(r.stdout) as { phases: { steps: { kind: string; content?: string }[] }[] }).phases.flatMap((p) => p.steps).find((s) => s.kind === 'file')?.content;
  };
  const entries = (cache: string) => (existsSync(path.join(cache, 'loaded')) ? readdirSync(path.join(cache, 'loaded')).map((f) => statSync(path.join(cache, 'loaded', f)).mtimeMs) : []);

  it('is reused while its files and the environment variables it read are unchanged, and made again when one changes', async () => {
    const dir = tempDir('result');
    const cache = tempDir('result-cache');
    write(dir, {
      'package.json': '{ "type": "module" }\n',
      'motd.json': '{ "text": "one" }\n',
      'def.ts': "import { debian12, image } from 'imgc';\nimport motd from './motd.json' with { type: 'json' };\nexport default image('r').base(debian12()).customize((p) => p.file('/etc/motd', { content: `${motd.text} ${process.env['IMGC_TEST_SUFFIX'] ?? '-'}` }));\n",
    });
    expect(await ir(dir, cache)).toBe('one -');
    const made = entries(cache);
    expect(made).toHaveLength(1);
    expect(await ir(dir, cache)).toBe('one -');
    expect(entries(cache)).toEqual(made); // given again, not made again
    expect(await ir(dir, cache, { IMGC_TEST_SUFFIX: 'x' })).toBe('one x');
    writeFileSync(path.join(dir, 'motd.json'), '{ "text": "two" }\n');
    expect(await ir(dir, cache, { IMGC_TEST_SUFFIX: 'x' })).toBe('two x');
  });

  it("keeps the contract checker's findings with it: an unchanged definition is checked without the checker", async () => {
    const dir = tempDir('result-findings');
    const cache = tempDir('result-findings-cache');
    write(dir, { 'def.ts': "import { debian12, image } from 'imgc';\nexport default image('r').base(debian12()).customize((p) => p.file('/etc/k', { content: 'x', owner: 'kube' }));\n" });
    const check = () => imgc(['check', '--no-typecheck', '--format', 'json', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: cache } });
    const first = await check();
    expect(first.exitCode, first.all).toBe(1);
    expect(first.stdout).toContain('IMGC0003');
    // The entry holds the findings: a reused check reports them from there, word for word. (Its first
    // line says what the result was made from, its second is the result.)
    const [entryFile] = readdirSync(path.join(cache, 'loaded'));
    const entryPath = path.join(cache, 'loaded', entryFile!);
    const [head, body] = readFileSync(entryPath, 'utf8').split('\n');
    // The evaluation's answer is kept as the worker sent it, beside the type-check's.
    const loaded = JSON.parse(body!) as { evaluated: { findings?: { code: string; message: string }[] } };
    expect(loaded.evaluated.findings?.map((d) => d.code)).toEqual(['IMGC0003']);
    loaded.evaluated.findings![0]!.message = 'as the entry says';
    writeFileSync(entryPath, `${head}\n${JSON.stringify(loaded)}`);
    const again = await check();
    expect(again.exitCode, again.all).toBe(1);
    expect(again.stdout).toBe(first.stdout.replace(/"message": "[^"]*"/, '"message": "as the entry says"'));
    // A corrupt entry (cut short), and one of another form (the loaded definition itself, as an older imgc wrote it), are made again.
    for (const other of [JSON.stringify(loaded).slice(0, 100), JSON.stringify({ ...loaded.evaluated, diagnostics: [], files: [] })]) {
      writeFileSync(entryPath, `${head}\n${other}`);
      const remade = await check();
      expect(remade.stdout).toBe(first.stdout);
      expect(readFileSync(entryPath, 'utf8').split('\n')[1]).toContain('IMGC0003');
      expect(readFileSync(entryPath, 'utf8').split('\n')[1]).not.toBe(other);
    }
  });

  it('is not kept when the definition reads the clock, or imports Node\'s modules, packages or JavaScript of its own', async () => {
    const cases: [string, string, Record<string, string>?][] = [
      ['clock', 'const at = String(Date.now() > 0);'],
      ['node', "import { hostname } from 'node:os';\nconst at = String(hostname().length > 0);"],
      // Node loads it, and what it imports in turn is not seen.
      ['javascript', "import { at } from './at.mjs';", { 'at.mjs': 'export const at = String(true);\n', 'at.d.mts': 'export declare const at: string;\n' }],
    ];
    for (const [name, line, more] of cases) {
      const dir = tempDir(`result-${name}`);
      const cache = tempDir(`result-${name}-cache`);
      write(dir, { ...more, 'def.ts': `import { debian12, image } from 'imgc';\n${line}\nexport default image('r').base(debian12()).customize((p) => p.file('/etc/at', { content: at }));\n` });
      expect(await ir(dir, cache)).toBe('true');
      expect(entries(cache), name).toEqual([]);
    }
  });

  it('is not kept when variable values are given (a key made from a secret could be tried against guesses)', async () => {
    const dir = tempDir('result-vars');
    const cache = tempDir('result-vars-cache');
    write(dir, { 'def.ts': "import { debian12, image, variable, z } from 'imgc';\nconst token = variable('token', z.string(), { sensitive: true });\nexport default image('r').base(debian12()).customize((p) => p.file('/etc/t', { content: `${token}` }));\n" });
    const r = await imgc(['check', '--var', 'token=hunter2', path.join(dir, 'def.ts')], { env: { IMGC_CACHE: cache } });
    expect(r.exitCode, r.all).toBe(0);
    expect(entries(cache)).toEqual([]);
  });
});
