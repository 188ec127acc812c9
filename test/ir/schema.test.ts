import { describe, expect, it } from 'vitest';
import { compileImageSchema } from '../helpers/ajv.js';
import { goodExamples, imgc, irOf } from '../helpers/cli.js';

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
