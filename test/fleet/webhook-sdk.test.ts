// Webhooks answer like the Cluster API Runtime SDK's hooks: a real HTTP server
// on 127.0.0.1 answers the shell target's hook script (run by sh, with curl)
// with {status, message, retryAfterSeconds}.
import { execa } from 'execa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import { writeFiles } from '../compilers/ansible-support.js';
import { irOf, tempDir } from '../helpers/cli.js';

/** Answers, in turn, for each request; the last one repeats. */
let script: { status: number; body: string }[] = [];
const seen: { at: number; body: string }[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({ at: Date.now(), body: Buffer.concat(chunks).toString('utf8') });
    const a = script.length > 1 ? script.shift()! : script[0]!;
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
  });
});
let url = '';
let hook = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const dir = writeFiles(tempDir('webhook-sdk'), shellCompiler.compile(await irOf('test/fixtures/fleet/webhook.ts'), {}));
  hook = path.join(dir, 'hooks/01-provision-pre.sh');
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const runHook = (answers: { status: number; body: string }[]) => {
  script = answers;
  seen.length = 0;
  return execa('sh', [hook], { env: { IMGC_VAR_HOOK_URL: url }, reject: false });
};

describe('webhooks in the Runtime SDK shape (shell)', () => {
  it('retryAfterSeconds: waits that long and asks again; then Success goes on', async () => {
    const r = await runHook([
      { status: 200, body: '{"status":"Success","message":"node not drained yet","retryAfterSeconds":1}' },
      { status: 200, body: '{"status": "Success"}' },
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(r.stderr).toContain('asks to retry after 1 s: node not drained yet');
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ image: 'webhook-sdk', phase: 'provision', when: 'pre', result: 'starting' });
  });

  it('Failure stops with the controller\'s message, asking once', async () => {
    const r = await runHook([{ status: 200, body: '{"status":"Failure","message":"cluster is \\"upgrading\\""}' }]);
    expect(r.exitCode).toBe(1);
    expect(seen).toHaveLength(1);
    expect(r.stderr).toContain(`webhook ${url} answered Failure: cluster is "upgrading"`);
  });

  it('a retry the hook\'s timeout cannot wait for fails at once, with the message', async () => {
    const started = Date.now();
    const r = await runHook([{ status: 200, body: '{"status":"Success","message":"not yet","retryAfterSeconds":30}' }]);
    expect(r.exitCode).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.stderr).toContain('still asked to retry after 3 s: not yet');
  });

  it('a 2xx answer that is not JSON keeps its old meaning: success', async () => {
    const r = await runHook([{ status: 204, body: '' }]);
    expect(r.exitCode, r.stderr).toBe(0);
    const t = await runHook([{ status: 200, body: 'ok\n' }]);
    expect(t.exitCode, t.stderr).toBe(0);
  });

  it('a 500 is tried 1 + retries times, then fails', async () => {
    const r = await runHook([{ status: 500, body: 'no' }]);
    expect(r.exitCode).toBe(1);
    expect(seen).toHaveLength(2);
    expect(r.stderr).toContain('failed 2 times');
  });
});
