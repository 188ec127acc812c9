// `imgc build --format json`: a real small build (shell target, its phases
// run again with --no-cache) streams JSON lines on stdout, nothing else, and
// every event validates with ajv against the schema `imgc schema
// --build-events` publishes; a failing build's stream ends with its error.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildEventsJsonSchema } from '../../src/build/events.js';
import { compileImageSchema } from '../helpers/ajv.js';
import { cannotBuild, imgcRun, outDir } from './helpers.js';

const validate = compileImageSchema(buildEventsJsonSchema());

describe('the build events schema', () => {
  it('is what imgc schema --build-events prints, and refuses what is not an event', async () => {
    const r = await imgcRun(['schema', '--build-events']);
    expect(r.exitCode, r.all).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(buildEventsJsonSchema());
    for (const bad of [{ event: 'step-end', t: 1, phase: 'p', step: 's', status: 'maybe', ms: 1 }, { event: 'phase-start', t: 1, phase: 'p' }, { event: 'nope', t: 1 }]) {
      expect(validate(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

type Event = { event: string; t: number; [k: string]: unknown };

describe.skipIf(cannotBuild)('imgc build --format json', () => {
  const out = outDir('events');
  let events: Event[];
  let run: Awaited<ReturnType<typeof imgcRun>>;

  beforeAll(async () => {
    run = await imgcRun(['build', 'test/build/fixtures/small-tar.ts', '--no-typecheck', '--out', out, '--no-cache', '--format', 'json']);
    events = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
  }, 1_200_000);

  it('prints only JSON lines, each a valid event, from build-start to the summary', () => {
    expect(run.exitCode, run.all).toBe(0);
    // Every non-empty line of stdout parsed above; none is a human line.
    expect(run.stdout.trimEnd().split('\n').length).toBe(events.length);
    for (const e of events) expect(validate(e), `${JSON.stringify(e)}\n${JSON.stringify(validate.errors)}`).toBe(true);
    expect(events[0]).toMatchObject({ event: 'build-start', image: 'imgc-test-small-tar', target: 'shell', out });
    expect(events.at(-1)).toMatchObject({ event: 'summary', ok: true, exitCode: 0 });
    const times = events.map((e) => e.t);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('has each phase start and end, and each step start and end with changed or unchanged', () => {
    const of = (type: string) => events.filter((e) => e.event === type);
    expect(of('phase-start').map((e) => e['phase'])).toEqual(['customize', 'provision', 'artifact', 'verify']);
    expect(of('phase-end').map((e) => [e['phase'], e['ok']])).toEqual(['customize', 'provision', 'artifact', 'verify'].map((p) => [p, true]));
    const ends = of('step-end');
    expect(ends.filter((e) => e['phase'] === 'customize').map((e) => [e['step'], e['status']])).toEqual(
      ['customize.1.group', 'customize.2.user', 'customize.3.directory', 'customize.4.file', 'customize.5.symlink', 'customize.6.file'].map((s) => [s, 'changed']),
    );
    expect(ends.find((e) => e['step'] === 'provision.3.swapOff')?.['status']).toBe('unchanged');
    expect(of('step-start').map((e) => e['step'])).toEqual(ends.map((e) => e['step']));
  });

  it('reports the artifact with its path and checksum, the verify results, and the summary build.json holds', () => {
    const artifact = events.find((e) => e.event === 'artifact')!;
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')) as { artifacts: { output: string; sha256: string }[] };
    expect(artifact).toMatchObject({ step: 'artifact.1.artifact', format: 'tar', output: 'other.tar.zst', path: path.join(out, 'other.tar.zst'), sha256: manifest.artifacts[0]!.sha256, reused: false });
    const verify = events.find((e) => e.event === 'verify')!;
    expect(verify['facts']).toMatchObject({ failed: 0 });
    const summary = events.at(-1)!;
    const written = JSON.parse(readFileSync(path.join(out, 'logs', 'build.json'), 'utf8')) as Record<string, unknown>;
    expect(summary['phases']).toEqual(written['phases']);
    expect(summary['artifacts']).toEqual(written['artifacts']);
  });

  it('a failing build ends with the failed step, its phase not ok, the error and a summary that is not ok', async () => {
    const r = await imgcRun(['build', 'test/build/fixtures/failing.ts', '--no-typecheck', '--out', outDir('events-failing'), '--no-cache', '--format', 'json']);
    expect(r.exitCode, r.all).toBe(1);
    const failed = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
    for (const e of failed) expect(validate(e), JSON.stringify(e)).toBe(true);
    expect(failed.find((e) => e.event === 'step-end' && e['status'] === 'failed')).toMatchObject({ phase: 'customize', step: 'customize.2.command' });
    expect(failed.find((e) => e.event === 'phase-end')).toMatchObject({ phase: 'customize', ok: false });
    expect(failed.some((e) => e.event === 'message' && String(e['text']).includes('step customize.2.command failed (exit 3)'))).toBe(true);
    expect(failed.at(-1)).toMatchObject({ event: 'summary', ok: false, exitCode: 1, error: expect.stringContaining('customize.2.command failed') });
  }, 600_000);
});
