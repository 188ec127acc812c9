// A matrix of images from one definition (docs/variants.md): the combinations
// variants() makes and the mistakes it refuses, in this process; then the
// commands on examples/node-image.ts and a matrix with one broken combination
// (examples/broken/variant-broken.ts), through the CLI's run() in this process.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { variants } from '../src/dsl/variants.js';
import { image } from '../src/dsl/image.js';
import { debian12 } from '../stdlib/bases.js';
import { imgc, tempDir } from './helpers/cli.js';
import { compileImageSchema } from './helpers/ajv.js';
import { variantsJsonSchema } from '../src/cli/variants.js';
import type { BuildPlan } from '../src/build/plan.js';

const base = debian12();
const names = (m: { variants(): readonly { name: string }[] }) => m.variants().map((v) => v.name);

describe('variants()', () => {
  it('makes one image per combination left by the exclusions, the first axis varying slowest, each named by its image', () => {
    const m = variants({ k8s: ['1.30', '1.31'], source: ['upstream', 'debian'] }, (v) => image(`k8s-node-${v.k8s}-${v.source}`).base(base), { exclude: [{ k8s: '1.30', source: 'debian' }] });
    expect(names(m)).toEqual(['k8s-node-1.30-upstream', 'k8s-node-1.31-upstream', 'k8s-node-1.31-debian']);
    expect(m.variants().map((v) => v.values)).toEqual([
      { k8s: '1.30', source: 'upstream' },
      { k8s: '1.31', source: 'upstream' },
      { k8s: '1.31', source: 'debian' },
    ]);
    expect(m.variants()[2]!.image.toIR('x.ts').name).toBe('k8s-node-1.31-debian');
  });

  it('marks the default combination, and only it', () => {
    const m = variants({ k8s: ['1.30', '1.31'], arch: ['amd64', 'arm64'] }, (v) => image(`t-${v.k8s}-${v.arch}`).base(base), { default: { k8s: '1.31', arch: 'amd64' } });
    expect(m.variants().filter((v) => v.default).map((v) => v.name)).toEqual(['t-1.31-amd64']);
    expect(variants({ k8s: ['1.30'] }, (v) => image(`t-${v.k8s}`).base(base)).variants()[0]!.default).toBeUndefined();
  });

  it('an exclusion naming some axes leaves out every combination that matches them', () => {
    const m = variants({ a: ['1', '2'], b: ['x', 'y'], c: ['p', 'q'] }, (v) => image(`i-${v.a}-${v.b}-${v.c}`).base(base), { exclude: [{ b: 'y' }] });
    expect(names(m)).toEqual(['i-1-x-p', 'i-1-x-q', 'i-2-x-p', 'i-2-x-q']);
  });

  // What the types refuse is refused when the definition runs too: its values may come from anywhere.
  const refused: [string, () => unknown, RegExp][] = [
    ['no axis', () => variants({}, () => image('t').base(base)), /at least one axis/],
    ['an axis without values', () => variants({ k8s: [] as unknown as ['1'] }, () => image('t').base(base)), /axis 'k8s' has no values/],
    ['a value twice', () => variants({ k8s: ['1.30', '1.30'] }, (v) => image(`t-${v.k8s}`).base(base)), /lists '1.30' twice/],
    ['an exclusion of an unknown axis', () => variants({ k8s: ['1.30'] }, () => image('t').base(base), { exclude: [{ arch: 'arm64' } as never] }), /names axis 'arch', which is not one of 'k8s'/],
    ['an exclusion of an unknown value', () => variants({ k8s: ['1.30', '1.31'] }, (v) => image(`t-${v.k8s}`).base(base), { exclude: [{ k8s: '1.29' as '1.30' }] }), /gives axis 'k8s' the value '1.29', which is not one of '1.30', '1.31'/],
    ['exclusions that leave nothing', () => variants({ k8s: ['1.30', '1.31'] }, (v) => image(`t-${v.k8s}`).base(base), { exclude: [{ k8s: '1.30' }, { k8s: '1.31' }] }), /leave none of the 2 combinations/],
    ['an empty exclusion', () => variants({ k8s: ['1.30'] }, () => image('t').base(base), { exclude: [{}] }), /exclusion 1 is empty/],
    ['a default naming an unknown axis', () => variants({ k8s: ['1.30'] }, (v) => image(`t-${v.k8s}`).base(base), { default: { k8s: '1.30', arch: 'amd64' } as never }), /default \{ k8s: '1.30', arch: 'amd64' \} names axis 'arch'/],
    ['a default without a value of every axis', () => variants({ k8s: ['1.30'], arch: ['amd64'] }, (v) => image(`t-${v.k8s}`).base(base), { default: { k8s: '1.30' } as never }), /gives no value of axis 'arch'; a default is one whole combination/],
    ['a default of an unknown value', () => variants({ k8s: ['1.30', '1.31'] }, (v) => image(`t-${v.k8s}`).base(base), { default: { k8s: '1.29' as '1.30' } }), /default \{ k8s: '1.29' \} is not a combination of the axes/],
    ['a default the exclusions leave out', () => variants({ k8s: ['1.30', '1.31'] }, (v) => image(`t-${v.k8s}`).base(base), { exclude: [{ k8s: '1.30' }], default: { k8s: '1.30' } }), /one of the combinations the exclusions leave out/],
    ['two combinations of one name', () => variants({ k8s: ['1.30', '1.31'], arch: ['amd64'] }, (v) => image(`t-${v.arch}`).base(base)), /\{ k8s: '1.30', arch: 'amd64' \} and \{ k8s: '1.31', arch: 'amd64' \} both make the image 't-amd64'/],
  ];
  it.each(refused)('refuses %s (a DefinitionError, located at the call by the loader)', (_, f, message) => {
    expect(f).toThrow(message);
    expect(f).toThrow(expect.objectContaining({ name: 'DefinitionError' }));
  });
});

describe('imgc on a matrix', () => {
  const matrix = 'examples/node-image.ts';
  const fallback = 'k8s-node-1.31-upstream-amd64';
  const all = [
    'k8s-node-1.30-upstream-amd64',
    'k8s-node-1.30-upstream-arm64',
    'k8s-node-1.31-upstream-amd64',
    'k8s-node-1.31-upstream-arm64',
    'k8s-node-1.31-debian-amd64',
    'k8s-node-1.31-debian-arm64',
  ];

  it('variants --format json lists the combinations as a CI matrix takes them, valid against imgc schema --variants', async () => {
    const r = await imgc(['variants', matrix, '--format', 'json']);
    expect(r.exitCode, r.all).toBe(0);
    const list = JSON.parse(r.stdout) as unknown;
    expect(list).toEqual(
      all.map((name) => {
        const [k8s, source, arch] = name.replace('k8s-node-', '').split('-');
        return { name, values: { k8s, source, arch }, ...(name === fallback ? { default: true } : {}) };
      }),
    );
    expect((list as { values: unknown }[])[1]).toEqual({ name: 'k8s-node-1.30-upstream-arm64', values: { k8s: '1.30', source: 'upstream', arch: 'arm64' } });
    const validate = compileImageSchema(variantsJsonSchema());
    expect(validate(list), JSON.stringify(validate.errors)).toBe(true);
    expect(validate([{ name: 'x' }])).toBe(false);
    expect(JSON.parse((await imgc(['schema', '--variants'])).stdout)).toEqual(variantsJsonSchema());
    // A definition of one image lists itself, so one CI workflow serves both.
    expect(JSON.parse((await imgc(['variants', '--no-typecheck', 'examples/node-image-debian.ts', '--format', 'json'])).stdout)).toEqual([{ name: 'k8s-node-debian', values: {} }]);
    expect((await imgc(['variants', matrix, '--no-typecheck'])).stdout.split('\n').slice(0, 3)).toEqual([
      'k8s-node-1.30-upstream-amd64  k8s=1.30 source=upstream arch=amd64',
      'k8s-node-1.30-upstream-arm64  k8s=1.30 source=upstream arch=arm64',
      'k8s-node-1.31-upstream-amd64  k8s=1.31 source=upstream arch=amd64  (default)',
    ]);
  });

  it('check checks every combination', async () => {
    const r = await imgc(['check', matrix]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout.split('\n').map((l) => l.split(':')[0])).toEqual(all);
  });

  it('check names the broken combination in text, JSON and SARIF, exits 1, and does not report the others', async () => {
    const file = 'examples/broken/variant-broken.ts';
    const text = await imgc(['check', file]);
    expect(text.exitCode, text.all).toBe(1);
    expect(text.stdout).toMatch(/^app-web-large: examples\/broken\/variant-broken\.ts:15:\d+ - error IMGC0003: file '\/srv\/index.html' is owned by user 'www'/);
    for (const fine of ['app-db-small', 'app-web-small']) expect(text.stdout).not.toContain(fine);
    const json = await imgc(['check', file, '--format', 'json']);
    expect(json.exitCode).toBe(1);
    const ds = (JSON.parse(json.stdout) as { diagnostics: { code: string; variant?: string }[] }).diagnostics;
    expect(ds.map((d) => [d.code, d.variant])).toEqual([['IMGC0003', 'app-web-large']]);
    const sarif = JSON.parse((await imgc(['check', file, '--format', 'sarif'])).stdout) as { runs: { results: { message: { text: string }; properties?: { variant?: string } }[] }[] };
    const results = sarif.runs[0]!.results;
    expect(results.map((x) => x.properties?.variant)).toEqual(['app-web-large']);
    expect(results[0]!.message.text).toMatch(/^app-web-large: /);
    // One combination alone: the fine one checks clean.
    expect((await imgc(['check', file, '--variant', 'app-web-small'])).exitCode).toBe(0);
  });

  it('a command on one image takes the default combination, or needs --variant when there is none; an unknown name says which was meant', async () => {
    const taken = await imgc(['ir', '--no-typecheck', matrix]);
    expect(taken.exitCode, taken.all).toBe(0);
    expect((JSON.parse(taken.stdout) as { name: string }).name).toBe(fallback);
    const out = tempDir('variants-default');
    const compile = await imgc(['compile', '--no-typecheck', matrix, '-t', 'shell', '-o', out, '--format', 'json']);
    expect(compile.exitCode, compile.all).toBe(0);
    expect(path.resolve((JSON.parse(compile.stdout) as { out: string }).out)).toBe(out);
    const noDefault = 'examples/broken/variant-broken.ts';
    const none = await imgc(['ir', '--no-typecheck', noDefault]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toBe(`imgc: '${noDefault}' is a matrix of 3 images: pass --variant NAME (its variants: app-db-small, app-web-small, app-web-large)`);
    expect((await imgc(['compile', '--no-typecheck', noDefault, '-t', 'shell'])).stderr).toContain('pass --variant NAME or --all');
    const typo = await imgc(['explain', '--no-typecheck', matrix, '--variant', 'k8s-node-1.31-upstrem-arm64']);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain("has no variant 'k8s-node-1.31-upstrem-arm64'; did you mean 'k8s-node-1.31-upstream-arm64'?");
    const build = await imgc(['build', '--no-typecheck', matrix, '--variant', 'k8s-node-1.30-debian-amd64']);
    expect(build.exitCode).toBe(2);
    expect(build.stderr).toContain("has no variant 'k8s-node-1.30-debian-amd64'; did you mean");
    // A build takes minutes: the default combination is named as such, with how to build another.
    const defaulted = await imgc(['build', '--no-typecheck', matrix, '--plan', '--var', 'join_token=abcdef.0123456789abcdef'], { env: { IMGC_CACHE: tempDir('variants-default-plan-cache') } });
    expect(defaulted.stderr).toContain(`imgc: k8s-node-1.31-upstream-amd64, the default of the 6 combinations in ${matrix} (--variant NAME for another, --all for every one; imgc variants lists them)`);
    const one = await imgc(['ir', '--no-typecheck', matrix, '--variant', 'k8s-node-1.31-debian-arm64']);
    expect(one.exitCode, one.all).toBe(0);
    expect(JSON.parse(one.stdout) as { name: string; base: { arch?: string } }).toMatchObject({ name: 'k8s-node-1.31-debian-arm64', base: { arch: 'arm64' } });
    const plain = await imgc(['ir', '--no-typecheck', 'examples/node-image-debian.ts', '--variant', 'x']);
    expect(plain.exitCode).toBe(2);
    expect(plain.stderr).toBe("imgc: 'examples/node-image-debian.ts' is one image, 'k8s-node-debian', not a matrix (export default variants(...)): it has no variant 'x'");
    // One image is the matrix of itself, as imgc variants lists it: its name and --all take it, so one CI workflow serves both.
    expect((await imgc(['ir', '--no-typecheck', 'examples/node-image-debian.ts', '--variant', 'k8s-node-debian'])).exitCode).toBe(0);
    const oneOut = tempDir('variants-one-all');
    const every = await imgc(['compile', '--no-typecheck', 'examples/node-image-debian.ts', '--all', '-t', 'shell', '-o', oneOut]);
    expect(every.exitCode, every.all).toBe(0);
    expect(readdirSync(oneOut)).toEqual(['k8s-node-debian']);
    const plan = await imgc(['build', '--no-typecheck', 'examples/node-image-debian.ts', '--all', '--plan', '--format', 'json', '-o', oneOut], { env: { IMGC_CACHE: tempDir('variants-one-plan-cache') } });
    expect(plan.exitCode, plan.all).toBe(0);
    expect((JSON.parse(plan.stdout) as BuildPlan[]).map((p) => p.out)).toEqual([path.join(oneOut, 'k8s-node-debian')]);
  });

  it('compile --all writes each combination into a folder of its own, named after it; nothing when one is broken', async () => {
    const out = tempDir('variants-compile');
    const r = await imgc(['compile', '--no-typecheck', matrix, '--all', '-t', 'shell', '-o', out, '--format', 'json']);
    expect(r.exitCode, r.all).toBe(0);
    expect(readdirSync(out).sort()).toEqual([...all].sort());
    const results = JSON.parse(r.stdout) as { variant: string; out: string; files: { path: string }[] }[];
    expect(results.map((x) => x.variant)).toEqual(all);
    for (const x of results) {
      expect(path.resolve(x.out)).toBe(path.join(out, x.variant));
      for (const f of x.files) expect(existsSync(path.join(out, x.variant, f.path))).toBe(true);
    }
    const broken = tempDir('variants-broken');
    const b = await imgc(['compile', '--no-typecheck', 'examples/broken/variant-broken.ts', '--all', '-t', 'shell', '-o', broken]);
    expect(b.exitCode).toBe(1);
    expect(readdirSync(broken)).toEqual([]);
  });

  it('build --all --plan --format json: one array of plans, each into OUT/<name>; equal bases share their cache key', async () => {
    const out = tempDir('variants-plan');
    const r = await imgc(['build', '--no-typecheck', matrix, '--all', '--plan', '--format', 'json', '-o', out, '--var', 'join_token=abcdef.0123456789abcdef'], { env: { IMGC_CACHE: tempDir('variants-plan-cache') } });
    expect(r.exitCode, r.all).toBe(0);
    const plans = JSON.parse(r.stdout) as BuildPlan[];
    expect(plans.map((p) => p.image)).toEqual(all);
    expect(plans.map((p) => p.out)).toEqual(all.map((n) => path.join(out, n)));
    // One base per architecture: the combinations of one share its key.
    const keyOf = (arch: string) => new Set(plans.filter((p) => p.image.endsWith(`-${arch}`)).map((p) => p.base.key));
    expect([keyOf('amd64').size, keyOf('arm64').size]).toEqual([1, 1]);
    expect(new Set(plans.map((p) => p.base.key)).size).toBe(2);
    // A plan builds nothing.
    expect(readdirSync(out)).toEqual([]);
  });
});
