// Real builds with webhooks on customize, provision and artifact (pre and
// post), for the shell and the ansible target: a local HTTP server records
// every POST, checks the bodies and their order; then a webhook at a server
// that answers 500 fails the build (onFailure 'fail') or only warns ('warn').
// `imgc build` takes no --var, so each test writes a one-line definition with
// its server's port baked in, calling fixtures/webhooks.ts.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { cannotBuild, imgcRun, outDir, read, summaryOf } from './helpers.js';

interface Received {
  order: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | undefined;
  raw: string;
  at: number;
}

/** An HTTP server on 127.0.0.1 (a free port) that records every request and answers `status`. */
const recorder = async (status: number) => {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | undefined;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
      received.push({ order: received.length, method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, raw, at: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok\n' : 'no\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    url: `http://127.0.0.1:${port}/imgc-hook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

type Recorder = Awaited<ReturnType<typeof recorder>>;

const fixture = path.join(repoRoot, 'test/build/fixtures/webhooks.ts');

/** A definition file (in a temp directory removed after this file) calling hookedImage with these options. */
const definition = (name: string, opts: { url: string; extra?: { url: string; onFailure: 'fail' | 'warn' } }): string => {
  const file = path.join(outDir(`${name}-def`), `${name}.ts`);
  writeFileSync(file, `import { hookedImage } from ${JSON.stringify(fixture)};\nexport default hookedImage(${JSON.stringify(name)}, ${JSON.stringify(opts)});\n`);
  return file;
};

/** Whole seconds: the hooks' timestamps have second precision. */
const floorSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

const expected = ['customize', 'provision', 'artifact'].flatMap((phase) => (['pre', 'post'] as const).map((when) => ({ phase, when })));

let ok: Recorder;
let failing: Recorder;

beforeAll(async () => {
  ok = await recorder(200);
  failing = await recorder(500);
});

afterAll(async () => {
  await Promise.all([ok?.close(), failing?.close()]);
});

describe('imgc build: phase webhooks', () => {
  it.skipIf(cannotBuild).each(['shell', 'ansible'] as const)(
    '%s target: POSTs one JSON body per pre/post hook of customize, provision and artifact, in order',
    async (target) => {
      const name = `imgc-test-hooks-${target}`;
      const out = outDir(`hooks-${target}`);
      const def = definition(name, { url: ok.url });
      const from = ok.received.length;
      const start = floorSecond(Date.now());
      // --no-cache: every phase (and so every hook) runs even when an earlier run cached it.
      const r = await imgcRun(['build', def, '--no-typecheck', '--target', target, '--out', out, '--no-cache']);
      const end = Date.now();
      expect(r.exitCode, r.all).toBe(0);
      expect(summaryOf(out).ok).toBe(true);
      expect(existsSync(path.join(out, 'rootfs.tar.gz'))).toBe(true);

      const got = ok.received.slice(from);
      expect(got.map((g) => g.body && { phase: g.body['phase'], when: g.body['when'] }), JSON.stringify(got.map((g) => g.raw))).toEqual(expected);
      for (const g of got) {
        expect(g.method).toBe('POST');
        expect(g.path).toBe('/imgc-hook');
        expect(g.headers['content-type']).toMatch(/^application\/json\b/);
        // An image build: the phase's lifecycle edge (artifact is on none), and no hosts (there is no node yet).
        const edge = { customize: { from: 'base', to: 'customized' }, provision: { from: 'customized', to: 'provisioned' } }[g.body!['phase'] as string];
        expect(Object.keys(g.body!)).toEqual(['image', 'phase', ...(edge ? ['edge'] : []), 'when', 'timestamp', 'result']);
        expect(g.body!['edge']).toEqual(edge);
        expect(g.body!['image']).toBe(name);
        expect(g.body!['result']).toBe(g.body!['when'] === 'pre' ? 'starting' : 'ok');
        const ts = g.body!['timestamp'] as string;
        expect(ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
        const t = Date.parse(ts);
        expect(t).toBeGreaterThanOrEqual(start);
        expect(t).toBeLessThanOrEqual(end);
        // Sent when it says: never after it arrived, and not minutes before (a wrong clock
        // or zone is hours off; a loaded machine can take seconds to start curl).
        expect(t).toBeLessThanOrEqual(g.at);
        expect(g.at - t).toBeLessThan(60_000);
      }
      // Timestamps never go backwards in arrival order.
      const times = got.map((g) => Date.parse(g.body!['timestamp'] as string));
      expect([...times].sort((a, b) => a - b)).toEqual(times);

      const artifact = summaryOf(out).phases.find((p) => p.name === 'artifact')!;
      const arrivals = got.filter((g) => g.body!['phase'] === 'artifact').map((g) => g.at);
      const gap = arrivals[1]! - arrivals[0]!;
      if (target === 'shell') {
        // The shell target runs hooks/NN-artifact-post.sh after the artifacts are made:
        // the two artifact hooks are apart by most of the phase (the tarball).
        expect(gap).toBeGreaterThan(artifact.ms / 2);
      } else {
        // The ansible target's artifact play holds only the phase's hooks, and
        // imgc makes the artifacts after it (src/build/index.ts): both artifact
        // hooks fire before the tarball is written, close together.
        expect(gap).toBeLessThan(artifact.ms / 2);
        // The webhooks ran on this machine (delegate_to: localhost) with Ansible's remote temp: gone after each phase.
        const temps = ['01-customize', '02-provision', '03-artifact'].flatMap((stem) => /^imgc: ansible temp: (\S+) /m.exec(read(path.join(out, 'logs', `${stem}.log`)))?.[1] ?? []);
        expect(temps).toHaveLength(3);
        for (const t of temps) expect(existsSync(t), t).toBe(false);
      }
    },
    1_200_000,
  );

  it.skipIf(cannotBuild)(
    "a webhook that gets 500 fails the build with onFailure 'fail' (no artifact published), and only warns with 'warn'",
    async () => {
      const before = failing.received.length;
      const failOut = outDir('hooks-fail');
      const failDef = definition('imgc-test-hooks-fail', { url: ok.url, extra: { url: failing.url, onFailure: 'fail' } });
      const fail = await imgcRun(['build', failDef, '--no-typecheck', '--target', 'shell', '--out', failOut, '--no-cache']);
      expect(fail.exitCode, fail.all).toBe(1);
      expect(fail.all).toMatch(/webhook .*imgc-hook failed 2 times/);
      // 1 + retries (1) attempts, each a proper POST.
      const tries = failing.received.slice(before);
      expect(tries.map((t) => [t.method, t.body?.['phase'], t.body?.['when']])).toEqual([
        ['POST', 'artifact', 'post'],
        ['POST', 'artifact', 'post'],
      ]);
      // The artifacts were made in staging, but none is published.
      expect(summaryOf(failOut).ok).toBe(false);
      expect(readdirSync(failOut).sort()).toEqual(['runs']);

      const warnBefore = failing.received.length;
      const warnOut = outDir('hooks-warn');
      const warnDef = definition('imgc-test-hooks-warn', { url: ok.url, extra: { url: failing.url, onFailure: 'warn' } });
      const warn = await imgcRun(['build', warnDef, '--no-typecheck', '--target', 'shell', '--out', warnOut, '--no-cache']);
      expect(warn.exitCode, warn.all).toBe(0);
      expect(failing.received.length - warnBefore).toBe(2);
      // The warning is in the phase log and on imgc build's own output.
      const logs = readdirSync(path.join(warnOut, 'logs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.log'));
      const logged = logs.filter((f) => /warning: webhook .*imgc-hook failed 2 times; going on/.test(read(path.join(warnOut, 'logs', f))));
      expect(logged, logs.join(', ')).toEqual(['03-artifact.log']);
      expect(warn.all).toMatch(/imgc: warning: webhook .*imgc-hook failed 2 times; going on/);
      expect(summaryOf(warnOut).ok).toBe(true);
      expect(existsSync(path.join(warnOut, 'rootfs.tar.gz'))).toBe(true);
    },
    1_200_000,
  );
});
