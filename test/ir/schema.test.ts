import { describe, expect, it } from 'vitest';
import { compileImageSchema } from '../helpers/ajv.js';
import { goodExamples, imgc, irOf } from '../helpers/cli.js';
import { checkImage } from '../../src/check/checker.js';
import { validateImage } from '../../src/check/validate.js';
import { imageJsonSchema } from '../../src/ir/json-schema.js';
import { Base, type Fact, type Image } from '../../src/ir/schema.js';
import { ubuntu2204, ubuntu2404 } from '../../stdlib/bases.js';
import { debian12, image, variable, webhook, z } from '../../src/index.js';

describe('Image IR', () => {
  it('imgc schema is a JSON Schema that every example IR satisfies (ajv)', async () => {
    const r = await imgc(['schema']);
    expect(r.exitCode).toBe(0);
    const validate = compileImageSchema(JSON.parse(r.stdout) as object);
    for (const file of goodExamples()) {
      const ir = await irOf(file);
      expect(validate(ir), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    expect(validate({ irVersion: 1, name: 'x' })).toBe(false);
  });

  it('is deterministic: the same definition gives byte-identical IR, from any cwd', async () => {
    const a = await imgc(['ir', 'examples/node-image.ts']);
    const b = await imgc(['ir', 'examples/node-image.ts']);
    const c = await imgc(['ir', 'node-image.ts'], { cwd: new URL('../../examples/', import.meta.url).pathname });
    expect(a.exitCode).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    expect(c.stdout).toBe(a.stdout);
  });

  it('records where each step was written', async () => {
    const ir = await irOf('examples/node-image.ts');
    const user = ir.phases.flatMap((p) => p.steps).find((s) => s.kind === 'user');
    expect(user?.loc).toEqual({ file: 'node-image.ts', line: 24, column: expect.any(Number) });
  });
});

describe("a stdlib base's own facts", () => {
  const bases = {
    'debian12 (amd64)': debian12(),
    'debian12 (arm64)': debian12({ arch: 'arm64' }),
    'debian12, packages included': debian12({ include: ['curl', 'jq'] }),
    ubuntu2204: ubuntu2204(),
    ubuntu2404: ubuntu2404(),
  };

  it('pass the IR schema: the validation of an image takes them as they are', () => {
    for (const [name, b] of Object.entries(bases)) expect(Base.safeParse(b.ir).error, name).toBeUndefined();
  });

  it('give the IR, to the byte, that a copy of them parsed whole gives', () => {
    for (const b of Object.values(bases)) {
      // (A base's type is only what the builder needs to know: any of them builds the same way.)
      const raw = image('t').base(b as ReturnType<typeof debian12>).customize((p) => p.user('ops')).toIR();
      const own = validateImage(raw);
      expect(own.diagnostics).toEqual([]);
      expect(JSON.stringify(own.ir)).toBe(JSON.stringify(validateImage(JSON.parse(JSON.stringify(raw))).ir));
    }
  });

  it("are read-only: a definition that changes them makes a list of its own, which is validated", () => {
    const b = debian12();
    expect(() => (b.ir.provides as Fact[]).push({ kind: 'user', key: 'x' })).toThrow(TypeError);
    const changed = { ...b, ir: { ...b.ir, provides: [...b.ir.provides, { kind: 'user' as const, key: '' }] } };
    const r = validateImage(image('t').base(changed).toIR());
    expect(r.ir).toBeUndefined();
    expect(r.diagnostics.map((d) => d.code)).toEqual(['IMGC1004']);
  });
});

describe('variable references in URLs', () => {
  const mirror = variable('mirror', z.string(), { default: 'http://deb.example/debian' });
  const hooks = variable('hooks', z.string(), { default: 'http://hooks.example' });
  const withUrls = (uri: string, url: string): Image => ({
    ...image('t')
      .base(debian12({ include: ['curl'] }))
      .customize((p) => p.post(webhook(url)).aptRepository('extra', { uri, suites: ['bookworm'], components: ['main'], keyUrl: `${uri}/key.asc` }))
      .toIR(),
    variables: [mirror, hooks].map((v) => ({ name: v.name, type: 'string', sensitive: false, value: String(v.options.default) })),
  });
  const validate = compileImageSchema(imageJsonSchema());

  it('a URL that starts with a variable is valid IR, for zod, the checker and ajv with formats', () => {
    const ir = withUrls(`${mirror}/debian`, `${hooks}/start`);
    expect(validateImage(ir).diagnostics).toEqual([]);
    expect(checkImage(ir)).toEqual([]);
    expect(validate(ir), JSON.stringify(validate.errors)).toBe(true);
  });

  it('a string that is no URL and references nothing is still refused by both', () => {
    const ir = withUrls('not a url', 'nope');
    expect(validateImage(ir).diagnostics.map((d) => d.code)).toContain('IMGC1004');
    expect(validate(ir)).toBe(false);
    expect(validate(withUrls('deb.example/debian', `${hooks}/start`))).toBe(false);
  });
});
