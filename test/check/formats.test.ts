import { beforeAll, describe, expect, it } from 'vitest';
import { sarifValidator } from '../helpers/ajv.js';
import { imgc } from '../helpers/cli.js';

describe('imgc check --format sarif', () => {
  let validate: ReturnType<typeof sarifValidator>;
  beforeAll(() => {
    validate = sarifValidator();
  });

  it.each(['examples/broken/provided-later.ts', 'examples/broken/warnings.ts', 'examples/node-image.ts'])('%s gives a valid SARIF 2.1.0 log', async (file) => {
    const r = await imgc(['check', '--format', 'sarif', file]);
    const log = JSON.parse(r.stdout) as { version: string; runs: { results: { ruleId: string; locations?: unknown[] }[]; tool: { driver: { rules: { id: string }[] } } }[] };
    const ok = validate(log);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
    expect(log.version).toBe('2.1.0');
    const run = log.runs[0]!;
    for (const res of run.results) expect(run.tool.driver.rules.map((x) => x.id)).toContain(res.ruleId);
  });

  it('a SARIF result points at the file and line', async () => {
    const r = await imgc(['check', '--format', 'sarif', 'examples/broken/owner-missing.ts']);
    expect(r.exitCode).toBe(1);
    const result = (JSON.parse(r.stdout) as { runs: { results: { ruleId: string; level: string; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[] }).runs[0]!.results[0]!;
    expect(result.ruleId).toBe('IMGC0003');
    expect(result.level).toBe('error');
    expect(result.locations[0]!.physicalLocation.artifactLocation.uri).toBe('examples/broken/owner-missing.ts');
    expect(result.locations[0]!.physicalLocation.region.startLine).toBe(15);
  });
});

describe('imgc check --format json', () => {
  it('has counts and relative locations', async () => {
    const r = await imgc(['check', '--format', 'json', 'examples/broken/warnings.ts']);
    expect(r.exitCode).toBe(0);
    const out = JSON.parse(r.stdout) as { errors: number; warnings: number; diagnostics: { severity: string }[] };
    expect(out.errors).toBe(0);
    expect(out.warnings).toBe(4);
    expect(out.diagnostics.every((d) => d.severity === 'warning')).toBe(true);
  });
});
