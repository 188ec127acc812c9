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

describe('one mistake, one diagnostic', () => {
  // An owner no step created: TypeScript rejects the literal and the contract checker reports the
  // missing user, at the same step. One error, the contract's (with its hint), saying both layers saw it.
  const file = 'examples/broken/type-error.ts';

  it('text', async () => {
    const r = await imgc(['check', file]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('Found 1 error and 0 warnings.');
    expect(r.stdout.match(/ - error /g)).toHaveLength(1);
    expect(r.stdout).toMatch(/error IMGC0003: .*'kueb'/);
    expect(r.stdout).toMatch(/seen by: the contract checker \(IMGC0003\), TypeScript \(TS2\d{3} at examples\/broken\/type-error\.ts:12:\d+\)/);
  });

  it('JSON', async () => {
    const r = await imgc(['check', '--format', 'json', file]);
    const out = JSON.parse(r.stdout) as { errors: number; diagnostics: { code: string; hint?: string; seenBy?: { layer: string; code: string; loc?: { file: string; line: number } }[] }[] };
    expect(out.errors).toBe(1);
    expect(out.diagnostics).toHaveLength(1);
    const [d] = out.diagnostics;
    expect(d!.code).toBe('IMGC0003');
    expect(d!.hint).toBeDefined();
    expect(d!.seenBy?.map((s) => s.layer)).toEqual(['contract', 'typescript']);
    expect(d!.seenBy?.[1]?.loc).toMatchObject({ file, line: 12 });
  });

  it('SARIF', async () => {
    const r = await imgc(['check', '--format', 'sarif', file]);
    const log = JSON.parse(r.stdout) as { runs: { results: { ruleId: string; properties?: { seenBy: { layer: string; code: string }[] } }[] }[] };
    const validate = sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    const results = log.runs[0]!.results;
    expect(results).toHaveLength(1);
    expect(results[0]!.ruleId).toBe('IMGC0003');
    expect(results[0]!.properties?.seenBy.map((s) => s.layer)).toEqual(['contract', 'typescript']);
  });
});
