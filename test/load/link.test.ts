// The in-thread loader (src/load/link.ts) must mean exactly what the module
// hooks mean: the same IR, the same step locations, the same errors. Each
// definition here is loaded both ways through the CLI and compared, and
// linkDefinition says which way the CLI took.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { linkDefinition, type Entries } from '../../src/load/link.js';
import { imgc, repoRoot, tempDir } from '../helpers/cli.js';

const entries: Entries = {
  imgc: pathToFileURL(path.join(repoRoot, 'dist', 'src', 'index.js')).href,
  stdlib: pathToFileURL(path.join(repoRoot, 'dist', 'stdlib', 'index.js')).href,
};

const write = (dir: string, files: Record<string, string>) => {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
};

// A cache a check wrote into holds a type-check snapshot of some 30 MB.
const caches: string[] = [];
afterAll(() => {
  for (const c of caches) rmSync(c, { recursive: true, force: true });
});

/** `imgc <args>` through the in-thread loader and through the hooks, with a cache of its own. */
const bothWays = async (args: string[]) => {
  const cache = tempDir('link-cache');
  caches.push(cache);
  const inThread = await imgc(args, { env: { IMGC_CACHE: cache } });
  const hooks = await imgc(args, { env: { IMGC_CACHE: cache, IMGC_LOADER: 'hooks' } });
  return { inThread, hooks, cache };
};

const linked = (file: string, cache: string) => {
  const saved = process.env['IMGC_CACHE'];
  process.env['IMGC_CACHE'] = cache;
  try {
    return linkDefinition(file, entries);
  } finally {
    if (saved === undefined) delete process.env['IMGC_CACHE'];
    else process.env['IMGC_CACHE'] = saved;
  }
};

const lib = `import { defineModule } from 'imgc';
import { cycleName } from './cycle.js';
export const ops = () =>
  defineModule((p) => p.user(cycleName()).file('/etc/where', { content: import.meta.url + '\\n' + import.meta.dirname + '\\n' }));
export const late = 'from lib';
`;
const cycle = `import { late } from './lib.js';
export const cycleName = (): string => (late === 'from lib' ? 'ops' : 'wrong');
`;
const main = `import { debian12, image } from 'imgc';
import { ops } from './lib.js';
import * as os from 'node:os';
const tag = await Promise.resolve(typeof os.EOL);
export default image('linked')
  .base(debian12())
  .customize((p) => p.use(ops()).file('/etc/tag', { content: tag }));
`;

describe('the in-thread loader', () => {
  it('loads a definition of several files (a cycle, ./x.js naming x.ts, import.meta, top-level await) as the hooks do', async () => {
    const dir = tempDir('link');
    // An ES module package, as tsc needs to allow import.meta and top-level await.
    write(dir, { 'main.ts': main, 'lib.ts': lib, 'cycle.ts': cycle, 'package.json': '{ "type": "module" }\n' });
    const file = path.join(dir, 'main.ts');
    const { inThread, hooks, cache } = await bothWays(['ir', file]);
    expect(inThread.exitCode, inThread.all).toBe(0);
    expect(inThread.stdout).toBe(hooks.stdout);
    expect(linked(file, cache)).toHaveProperty('url');
    const ir = JSON.parse(inThread.stdout) as { phases: { steps: { kind: string; path?: string; content?: string; loc?: { file: string; line: number } }[] }[] };
    const steps = ir.phases.flatMap((p) => p.steps);
    // import.meta names the user's file, not the cache copy.
    expect(steps.find((s) => s.path === '/etc/where')?.content).toBe(`${pathToFileURL(path.join(dir, 'lib.ts')).href}\n${dir}\n`);
    // Steps point at the user's own lines, through the cache copy's source map.
    expect(steps.find((s) => s.kind === 'user')?.loc).toMatchObject({ file: 'lib.ts', line: 4, column: 25 });
    expect(steps.find((s) => s.path === '/etc/tag')?.loc).toMatchObject({ file: 'main.ts', line: 7 });
  });

  it('sees an edited imported file on the next run', async () => {
    const dir = tempDir('link-edit');
    write(dir, { 'main.ts': main, 'lib.ts': lib, 'cycle.ts': cycle });
    const file = path.join(dir, 'main.ts');
    const cache = tempDir('link-edit-cache');
    const first = await imgc(['ir', '--no-typecheck', file], { env: { IMGC_CACHE: cache } });
    write(dir, { 'cycle.ts': cycle.replace("'ops'", "'kube'") });
    const second = await imgc(['ir', '--no-typecheck', file], { env: { IMGC_CACHE: cache } });
    expect(first.stdout).toContain('"ops"');
    expect(second.stdout).toContain('"kube"');
    expect(second.stdout).not.toContain('"ops"');
  });

  it('reports an error thrown in an imported file at its line, as the hooks do', async () => {
    const dir = tempDir('link-throw');
    write(dir, {
      'main.ts': "import { debian12, image } from 'imgc';\nimport { pick } from './pick.js';\nexport default image('t').base(debian12()).customize((p) => p.user(pick()));\n",
      'pick.ts': "export const pick = (): string => {\n  throw new Error('no user today');\n};\n",
    });
    const { inThread, hooks } = await bothWays(['check', '--no-typecheck', path.join(dir, 'main.ts')]);
    expect(inThread.exitCode).toBe(2);
    expect(inThread.stdout).toContain('pick.ts:2:9 - error IMGC1002: no user today');
    expect(inThread.stdout).toBe(hooks.stdout);
  });

  it('leaves to the hooks what only they can load, with the reason', async () => {
    const cases: Record<string, { files: Record<string, string>; reason: RegExp }> = {
      package: { files: { 'main.ts': "import YAML from 'yaml';\nimport { debian12, image } from 'imgc';\nexport default image(YAML.parse('n: p').n).base(debian12());\n" }, reason: /'yaml' is a package/ },
      javascript: {
        files: { 'main.ts': "import { name } from './name.js';\nimport { debian12, image } from 'imgc';\nexport default image(name).base(debian12());\n", 'name.js': "export const name = 'js';\n" },
        reason: /'\.\/name\.js' is not a TypeScript file/,
      },
      resolve: { files: { 'main.ts': "import { debian12, image } from 'imgc';\nexport default image(import.meta.resolve('./x').length > 0 ? 'r' : 'q').base(debian12());\n" }, reason: /uses import\.meta\.resolve/ },
      computed: { files: { 'main.ts': "const m = './imgc-entry.js';\nconst { debian12, image } = (await import('imgc')) as typeof import('imgc');\nvoid m;\nexport default image((await import(m).catch(() => null)) ? 'x' : 'c').base(debian12());\n" }, reason: /computed specifier/ },
    };
    for (const [name, c] of Object.entries(cases)) {
      // Inside the repository, so that 'yaml' resolves from its node_modules.
      const dir = path.join(tempDirIn(repoRoot), name);
      write(dir, c.files);
      const file = path.join(dir, 'main.ts');
      const { inThread, hooks, cache } = await bothWays(['ir', '--no-typecheck', file]);
      expect(linked(file, cache), name).toMatchObject({ needsHooks: expect.stringMatching(c.reason) });
      expect(inThread.exitCode, `${name}: ${inThread.all}`).toBe(0);
      expect(inThread.stdout, name).toBe(hooks.stdout);
    }
  });

  it('falls back to the hooks when the cache cannot be written', async () => {
    const dir = tempDir('link-ro');
    write(dir, { 'main.ts': main, 'lib.ts': lib, 'cycle.ts': cycle, 'not-a-dir': 'a file where the cache should be' });
    const cache = path.join(dir, 'not-a-dir');
    const file = path.join(dir, 'main.ts');
    expect(linked(file, cache)).toMatchObject({ needsHooks: "imgc's cache cannot be written" });
    const r = await imgc(['ir', '--no-typecheck', file], { env: { IMGC_CACHE: cache } });
    expect(r.exitCode, r.all).toBe(0);
  });
});

/** A directory under `parent`/out (ignored by git), removed with the caches at the end. */
const tempDirIn = (parent: string): string => {
  const dir = path.join(parent, 'out', `link-test-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir, { recursive: true });
  caches.push(dir);
  return dir;
};
