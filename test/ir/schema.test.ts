import { describe, expect, it } from 'vitest';
import { compileImageSchema } from '../helpers/ajv.js';
import { goodExamples, imgc, irOf } from '../helpers/cli.js';
import { checkImage } from '../../src/check/checker.js';
import { validateImage } from '../../src/check/validate.js';
import { imageJsonSchema } from '../../src/ir/json-schema.js';
import type { Image } from '../../src/ir/schema.js';
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
