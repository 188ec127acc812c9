// Webhooks answer like the Cluster API Runtime SDK's hooks: a real HTTP server
// on 127.0.0.1 answers with {status, message, retryAfterSeconds} the shell
// target's hook script (run by sh, with curl) and the Ansible target's hook
// tasks (run by ansible-playbook, on the controller).
import { execa } from 'execa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import { hookTasks } from '../../src/compilers/ansible/hooks.js';
import { taskItem } from '../../src/emit/ansible/tasks.js';
import { bool, word } from '../../src/emit/ansible/quote.js';
import { document, map, seq } from '../../src/emit/ansible/yaml.js';
import type { Image, StepOf } from '../../src/ir/schema.js';
import { run as ansibleRun, workspace, writeFiles } from '../compilers/ansible-support.js';
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
let liveHook = '';
let ir: Image;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  ir = await irOf('test/fixtures/fleet/webhook.ts');
  const dir = writeFiles(tempDir('webhook-sdk'), shellCompiler.compile(ir, {}));
  hook = path.join(dir, 'hooks/01-provision-pre.sh');
  liveHook = path.join(writeFiles(tempDir('webhook-sdk-live'), shellCompiler.compile(ir, { runtime: true })), 'hooks/01-provision-pre.sh');
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const runHook = (answers: { status: number; body: string }[], file = hook, env: Record<string, string> = {}) => {
  script = answers;
  seen.length = 0;
  return execa('sh', [file], { env: { IMGC_VAR_HOOK_URL: url, ...env }, reject: false });
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
    // The image build's hook file: the edge, and no hosts (no node yet).
    expect(JSON.parse(seen[0]!.body)).toEqual({ image: 'webhook-sdk', phase: 'provision', edge: { from: 'customized', to: 'provisioned' }, when: 'pre', timestamp: expect.any(String), result: 'starting' });
  });

  it('a live host\'s hook file (the runtime output) names the host IMGC_HOST gives, and will not guess it', async () => {
    const r = await runHook([{ status: 200, body: '{"status":"Success"}' }], liveHook, { IMGC_HOST: 'node-7.example' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toEqual({
      image: 'webhook-sdk',
      phase: 'provision',
      edge: { from: 'customized', to: 'provisioned' },
      hosts: ['node-7.example'],
      when: 'pre',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      result: 'starting',
    });
    const unnamed = await runHook([{ status: 200, body: '{"status":"Success"}' }], liveHook);
    expect(unnamed.exitCode).toBe(2);
    expect(unnamed.stderr).toContain('imgc: IMGC_HOST is not set: name the host this run is for');
    expect(seen).toHaveLength(0);
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
    expect(r.stderr).toContain('asked to retry after 30 s, longer than the 3 s the hook may take in all: not yet');
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

describe('webhooks in the Runtime SDK shape (ansible)', () => {
  const ws = workspace('webhook-sdk');
  afterAll(() => ws.remove());

  /** The hook's tasks as runtime.yml and the roles have them, in a play of two hosts run on this machine; hook_url points at the server. */
  const runTasks = async (answers: { status: number; body: string }[], onFailure: 'fail' | 'warn' = 'fail') => {
    const h = ir.phases.find((p) => p.name === 'provision')!.pre[0] as StepOf<'hook'>;
    const hooked = { ...h, action: { ...h.action, onFailure } } as StepOf<'hook'>;
    const play = map({ hosts: word('all'), gather_facts: bool(false), vars: map({ imgc_image: word('webhook-sdk') }), tasks: seq([...hookTasks(hooked, 'provision', { onHosts: true }).map(taskItem)]) });
    writeFiles(ws.out, { 'play.yml': document(seq([{ value: play }])) });
    script = answers;
    seen.length = 0;
    return ansibleRun('ansible-playbook', ['-i', 'node-a,node-b,', '-c', 'local', 'play.yml', '-e', `hook_url=${url}`], ws.out, ws.home);
  };

  it('retryAfterSeconds: waits that long and asks again, once for the batch; then Success goes on', async () => {
    const r = await runTasks([
      { status: 200, body: '{"status":"Success","message":"node not drained yet","retryAfterSeconds":2}' },
      { status: 200, body: '{"status": "Success"}' },
    ]);
    expect(r.exitCode, r.all).toBe(0);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(2000);
    // The wait is in Ansible's output: one line per wait, with the delay asked.
    expect(r.all.match(/"msg": "imgc: webhook \S+ asks to retry after 2 s: node not drained yet"/g)).toHaveLength(1);
    // Once for the batch, naming it, with the phase's lifecycle edge.
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ image: 'webhook-sdk', phase: 'provision', edge: { from: 'customized', to: 'provisioned' }, hosts: ['node-a', 'node-b'], when: 'pre', result: 'starting' });
    expect(r.all).toMatch(/node-a\s+: ok=\d+\s+changed=0 +unreachable=0 +failed=0/);
  }, 60_000);

  it('Failure stops every host of the batch with the controller\'s message', async () => {
    const r = await runTasks([{ status: 200, body: '{"status":"Failure","message":"cluster is \\"upgrading\\""}' }]);
    expect(r.exitCode).toBe(2);
    expect(seen).toHaveLength(1);
    expect(r.all).toContain(`imgc: webhook ${url} answered Failure: cluster is \\"upgrading\\"`);
    expect(r.all).toMatch(/node-b\s+: ok=\d+\s+changed=0 +unreachable=0 +failed=1/);
  }, 60_000);

  it('a retry the hook\'s timeout cannot wait for fails at once; with onFailure warn it is said and the play goes on', async () => {
    const r = await runTasks([{ status: 200, body: '{"status":"Success","message":"not yet","retryAfterSeconds":30}' }], 'warn');
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`imgc: warning: imgc: webhook ${url} asked to retry after 30 s, longer than the 3 s the hook may take in all: not yet; going on`);
  }, 60_000);

  it('a 2xx answer that is not JSON keeps its old meaning: success', async () => {
    const r = await runTasks([{ status: 204, body: '' }]);
    expect(r.exitCode, r.all).toBe(0);
    expect(seen).toHaveLength(1);
  }, 60_000);
});
