// `imgc build --format json`: a real small build with each target (its
// phases run again with --no-cache) streams JSON lines on stdout, nothing
// else, and every event validates with ajv against the schema `imgc schema
// --build-events` publishes; a failing build's stream ends with its error.
// The ansible target's steps come from Ansible's JSON callback.
import { execa } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
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

describe.skipIf(cannotBuild).each(['shell', 'ansible'] as const)('imgc build --target %s --format json', (target) => {
  const out = outDir(`events-${target}`);
  let events: Event[];
  let run: Awaited<ReturnType<typeof imgcRun>>;

  beforeAll(async () => {
    run = await imgcRun(['build', 'test/build/fixtures/small-tar.ts', '--no-typecheck', '--target', target, '--out', out, '--no-cache', '--format', 'json']);
    events = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
  }, 1_200_000);

  it('prints only JSON lines, each a valid event, from build-start to the summary', () => {
    expect(run.exitCode, run.all).toBe(0);
    // Every non-empty line of stdout parsed above; none is a human line.
    expect(run.stdout.trimEnd().split('\n').length).toBe(events.length);
    for (const e of events) expect(validate(e), `${JSON.stringify(e)}\n${JSON.stringify(validate.errors)}`).toBe(true);
    expect(events[0]).toMatchObject({ event: 'build-start', image: 'imgc-test-small-tar', target, out });
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
    expect(ends.filter((e) => e['phase'] === 'provision').map((e) => e['step'])).toEqual([
      // The ansible target runs hooks inside its play: a step like the others.
      ...(target === 'ansible' ? ['provision.pre1.hook'] : []),
      'provision.1.sysctl',
      'provision.2.kernelModule',
      'provision.3.swapOff',
      'provision.4.command',
    ]);
    expect(ends.find((e) => e['step'] === 'provision.4.command')?.['status']).toBe('changed');
    // Live: a step's events come while ansible-playbook runs, not all at its end (its six tasks take
    // seconds; the shell target's six steps can all end within a few hundred milliseconds).
    if (target === 'ansible') {
      const phaseEnd = of('phase-end').find((e) => e['phase'] === 'customize')!;
      expect(ends[0]!.t).toBeLessThan(phaseEnd.t - 1000);
    }
  });

  it.runIf(target === 'ansible')("logs the callback's events as readable lines and leaves no ansible temp directory behind", async () => {
    const log = readFileSync(path.join(out, 'logs', '01-customize.log'), 'utf8');
    expect(log).toMatch(/^TASK \[.*customize\.2\.user.*\]$/m);
    expect(log).toMatch(/^changed: \[/m);
    expect(log).toMatch(/^\S+ : ok=\d+ {2}changed=7 {2}unreachable=0 {2}failed=0/m);
    expect(log).not.toMatch(/"_event"/);
    // Each phase's temp directories are named in its log; none is left, in the root (here its tarball) or on this machine.
    const temps = ['01-customize', '02-provision'].flatMap((stem) =>
      [...readFileSync(path.join(out, 'logs', `${stem}.log`), 'utf8').matchAll(/^imgc: ansible temp: (\S+) \(in the root and on this machine\), (\S+)$/gm)].flatMap((m) => [m[1]!, m[2]!]),
    );
    expect(temps).toHaveLength(4);
    for (const t of temps) expect(existsSync(t), t).toBe(false);
    const listing = (await execa('tar', ['--zstd', '-tf', path.join(out, 'other.tar.zst')])).stdout;
    expect(listing).toMatch(/^\.\/tmp\/$/m);
    expect(listing).not.toMatch(/imgc-ansible/);
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
    const r = await imgcRun(['build', 'test/build/fixtures/failing.ts', '--no-typecheck', '--target', target, '--out', outDir(`events-failing-${target}`), '--no-cache', '--format', 'json']);
    expect(r.exitCode, r.all).toBe(1);
    const failed = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
    for (const e of failed) expect(validate(e), JSON.stringify(e)).toBe(true);
    expect(failed.find((e) => e.event === 'step-end' && e['status'] === 'failed')).toMatchObject({ phase: 'customize', step: 'customize.2.command' });
    expect(failed.find((e) => e.event === 'phase-end')).toMatchObject({ phase: 'customize', ok: false });
    // The shell script exits with the command's status, ansible-playbook with 2; its message shows the task's.
    const message = failed.find((e) => e.event === 'message' && String(e['text']).includes(`step customize.2.command failed (exit ${target === 'shell' ? 3 : 2})`));
    expect(message, JSON.stringify(failed)).toBeDefined();
    if (target === 'ansible') expect(message!['text']).toMatch(/fatal: \[\S+\]: FAILED! \(rc 3\)/);
    expect(failed.at(-1)).toMatchObject({ event: 'summary', ok: false, exitCode: 1, error: expect.stringContaining('customize.2.command failed') });
    // Where its logs stayed: its own runs/ID folder, not logs/.
    expect(String(failed.at(-1)!['logs'])).toMatch(/\/runs\/\d{8}T\d{6}Z-\d+$/);
  }, 600_000);
});
