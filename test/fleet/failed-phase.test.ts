// A phase that fails fires its post hooks with `result: failed` and the
// message (runtime.yml, and site.yml's roles when the phase has post hooks:
// the steps in a block, the post hooks in its rescue), then fails the host. Rendered in-process, and run for real by
// ansible-playbook on this machine: the phase's one step is a command that
// fails, so nothing here is changed; the event hook appends to a temp file.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ansibleCompiler } from '../../src/compilers/ansible/index.js';
import { imageOf, parseYaml, phase, run as ansibleRun, workspace, writeFiles } from '../compilers/ansible-support.js';
import { ANSIBLE_JSON_CALLBACK, AnsibleProgress } from '../../src/build/progress.js';

describe('a failing runtime phase fires its post hooks with result failed (ansible)', () => {
  const ws = workspace('failed-phase');
  afterAll(() => ws.remove());
  const events = path.join(ws.root, 'events.jsonl');
  const ir = imageOf(
    [
      phase('provision', [{ kind: 'command', run: 'echo "boom" >&2; exit 3', needsMounts: false, description: 'fail on purpose' }], {
        runtime: true,
        post: [{ kind: 'hook', when: 'post', action: { type: 'event', target: events } }],
      }),
    ],
    'failing-phase',
  );

  it('renders the steps in a block whose rescue sends the post hooks with result failed and the message, then fails', () => {
    const plays = parseYaml(ansibleCompiler.compile(ir, { runtime: true })['runtime.yml']!) as { name: string; tasks: Record<string, unknown>[] }[];
    const tasks = plays.find((p) => p.name === 'Phase provision (runtime)')!.tasks;
    const block = tasks.find((t) => 'block' in t) as { block: { name: string }[]; rescue: Record<string, unknown>[] };
    expect(block.block.map((t) => t.name)).toContain('Command: fail on purpose (provision.1.command, test.ts:10)');
    const [hook, fail] = block.rescue;
    expect((hook!['vars'] as { imgc_event: Record<string, string> }).imgc_event).toMatchObject({ result: 'failed', message: "{{ ansible_failed_task.name ~ ': ' ~ (ansible_failed_result.msg | default('failed')) }}" });
    expect(fail).toHaveProperty('ansible.builtin.fail');
    // The post hook outside the block reports ok, as before.
    const after = tasks.slice(tasks.indexOf(block as never) + 1)[0]!;
    expect((after['vars'] as { imgc_event: Record<string, string> }).imgc_event).toMatchObject({ result: 'ok' });
  });

  it('ansible-playbook: the hook gets result failed with the failed task and its message; and the host fails with it', async () => {
    writeFiles(ws.out, ansibleCompiler.compile(ir, { runtime: true }));
    // Two hosts (both this machine) in one batch: both fail, and the one request names both.
    const r = await ansibleRun('ansible-playbook', ['-i', 'node-a,node-b,', '-c', 'local', 'runtime.yml'], ws.out, ws.home);
    expect(r.exitCode, r.all).toBe(2);
    const sent = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ image: 'failing-phase', phase: 'provision', edge: { from: 'customized', to: 'provisioned' }, hosts: ['node-a', 'node-b'], when: 'post', result: 'failed' });
    expect(sent[0]!['message']).toMatch(/^Command: fail on purpose \(provision\.1\.command, test\.ts:10\): non-zero return code/);
    expect(r.all).toContain('imgc: phase provision failed at Command: fail on purpose');
  }, 120_000);
});

describe('a runtime phase that fails on one host of a batch (ansible)', () => {
  const ws = workspace('failed-one');
  afterAll(() => ws.remove());
  const events = path.join(ws.root, 'events.jsonl');
  // Both hosts are this machine, running the step at once: exactly one mkdir succeeds.
  const ir = imageOf(
    [
      phase('provision', [{ kind: 'command', run: `mkdir '${path.join(ws.root, 'lock')}'`, needsMounts: false, description: 'take the lock' }], {
        runtime: true,
        post: [{ kind: 'hook', when: 'post', action: { type: 'event', target: events } }],
      }),
    ],
    'failing-one',
  );

  it("the rescue's request names the host that failed; the post hook after the phase, the one that went on", async () => {
    writeFiles(ws.out, ansibleCompiler.compile(ir, { runtime: true }));
    const r = await ansibleRun('ansible-playbook', ['-i', 'node-a,node-b,', '-c', 'local', 'runtime.yml'], ws.out, ws.home);
    expect(r.exitCode, r.all).toBe(2);
    const failed = /(node-[ab])\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=1/.exec(r.all)?.[1];
    expect(['node-a', 'node-b'], r.all).toContain(failed);
    const sent = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(sent.map((e) => [e['result'], e['hosts']])).toEqual([
      ['failed', [failed]],
      ['ok', [failed === 'node-a' ? 'node-b' : 'node-a']],
    ]);
  }, 120_000);
});

describe("a failing image phase with post hooks fires them with result failed (site.yml's role)", () => {
  const ws = workspace('failed-image-phase');
  afterAll(() => ws.remove());
  const events = path.join(ws.root, 'events.jsonl');
  const steps = [{ kind: 'command', run: 'echo "boom" >&2; exit 3', needsMounts: false, description: 'fail on purpose' }] as const;
  const hooked = imageOf([phase('provision', [...steps], { post: [{ kind: 'hook', when: 'post', action: { type: 'event', target: events } }] })], 'failing-image');

  it('guards the steps only where there are post hooks to fire', () => {
    const role = (ir: typeof hooked) => parseYaml(ansibleCompiler.compile(ir, {})['roles/provision/tasks/main.yml']!) as Record<string, unknown>[];
    const [block, after] = role(hooked) as [{ block: { name: string }[]; rescue: { name: string }[] }, { name: string }];
    expect(block.block.map((t) => t.name)).toEqual(['Command: fail on purpose (provision.1.command, test.ts:10)']);
    expect(block.rescue.map((t) => t.name)).toEqual([expect.stringMatching(/^Post hook \(phase failed\): event to .* \(provision\.post1\.hook, test\.ts:10\)$/), 'Phase provision: failed on this host']);
    expect(after.name).toMatch(/^Post hook: /);
    expect(role(imageOf([phase('provision', [...steps])], 'no-hooks')).some((t) => 'block' in t)).toBe(false);
  });

  it("ansible-playbook: the post hook gets result failed and the message, the host fails, and the build's progress names the failed step", async () => {
    rmSync(ws.out, { recursive: true, force: true });
    writeFiles(ws.out, ansibleCompiler.compile(hooked, {}));
    const r = await ansibleRun('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'site.yml'], ws.out, ws.home, { ANSIBLE_STDOUT_CALLBACK: ANSIBLE_JSON_CALLBACK });
    expect(r.exitCode, r.all).toBe(2);
    const sent = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    expect(sent).toHaveLength(1);
    // An image build: the edge, and no hosts.
    expect(Object.keys(sent[0]!)).toEqual(['image', 'phase', 'edge', 'when', 'timestamp', 'result', 'message']);
    expect(sent[0]).toMatchObject({ image: 'failing-image', phase: 'provision', when: 'post', result: 'failed' });
    expect(sent[0]!['message']).toMatch(/^Command: fail on purpose \(provision\.1\.command, test\.ts:10\): non-zero return code/);
    // What `imgc build --target ansible` reads from this output: the step failed, not the hooks after it.
    const progress = new AnsibleProgress();
    const ends = [...r.stdout.split('\n').flatMap((l) => progress.feed(l)?.events ?? []), ...progress.flush()].filter((e) => e.type === 'end');
    expect(ends).toEqual([{ type: 'end', step: 'provision.1.command', status: 'failed' }]);
  }, 120_000);
});
