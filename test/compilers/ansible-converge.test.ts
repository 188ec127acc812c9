// A real converge without root and without a rootfs: an image whose paths all
// live under a temp directory, compiled and run with ansible-playbook
// (-c local -i localhost,) twice. The first run changes things, the second
// reports changed=0, files hold exactly the declared bytes, sysctl/module
// lines are owned per step (updated in place), hooks emit their JSON events.
import { lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ansibleCompiler } from '../../src/compilers/ansible/index.js';
import { imageOf, phase, run, workspace, writeFiles } from './ansible-support.js';

const ws = workspace('converge');
const T = path.join(ws.root, 'root');
const p = (rel: string) => path.join(T, rel) as `/${string}`;

const config = 'key = "{{ not a template }}"\n{% raw %}$HOME `id` ${x} %{y}\n\ttab and trailing  \n\n\nend';
const events = p('log/events.jsonl');

const ir = imageOf(
  [
    phase(
      'customize',
      [
        { kind: 'directory', path: p('etc/app'), mode: '0750' },
        { kind: 'file', path: p('etc/app/config'), content: config, mode: '0640' },
        { kind: 'file', path: p('etc/app/empty'), content: '', mode: '0600' },
        { kind: 'file', path: p('etc/app/unicode'), content: 'שלום 😀 e\u0301 \u2028 \ufeff\r\n', mode: '0644' },
        { kind: 'symlink', path: p('etc/app/current'), target: 'config' },
        { kind: 'command', run: `printf '%s\\n' "ran {{ once }}" >> '${p('ran')}'`, creates: p('ran'), needsMounts: false },
        { kind: 'command', run: `test -d '${p('etc/app')}'`, needsMounts: false, description: 'the app directory exists' },
      ],
      { pre: [{ kind: 'hook', when: 'pre', action: { type: 'event', target: events } }], post: [{ kind: 'hook', when: 'post', action: { type: 'event', target: 'stdout' } }] },
    ),
    phase(
      'provision',
      [
        { kind: 'sysctl', key: 'net.ipv4.ip_forward', value: '1', file: p('etc/sysctl.d/99-k8s.conf') },
        { kind: 'sysctl', key: 'vm.swappiness', value: '10', file: p('etc/sysctl.d/99-k8s.conf') },
        { kind: 'kernelModule', name: 'overlay', file: p('etc/modules-load.d/k8s.conf') },
        { kind: 'kernelModule', name: 'br_netfilter', file: p('etc/modules-load.d/k8s.conf') },
      ],
      { runtime: true, post: [{ kind: 'hook', when: 'post', action: { type: 'event', target: events } }] },
    ),
    phase('verify', [{ kind: 'command', run: `grep -qx 'net.ipv4.ip_forward = 1' '${p('etc/sysctl.d/99-k8s.conf')}'`, needsMounts: false }]),
  ],
  'converge-test',
);

const recap = (out: string): { ok: number; changed: number; failed: number } => {
  const m = /localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)/.exec(out);
  if (!m) throw new Error(`no recap in:\n${out}`);
  return { ok: Number(m[1]), changed: Number(m[2]), failed: Number(m[3]) };
};

const play = () => run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'site.yml'], ws.out, ws.home);

describe('ansible backend converges locally', () => {
  let first: Awaited<ReturnType<typeof play>>;
  let second: Awaited<ReturnType<typeof play>>;

  beforeAll(async () => {
    writeFiles(ws.out, ansibleCompiler.compile(ir, {}));
    // A sysctl file that already holds one of the keys with another value, and other content.
    mkdirSync(p('etc/sysctl.d'), { recursive: true });
    writeFileSync(p('etc/sysctl.d/99-k8s.conf'), '# kept\nnet.ipv4.ip_forward=0\n');
    first = await play();
    second = await play();
  }, 600_000);
  afterAll(() => ws.remove());

  it('the first run changes, the second reports changed=0', () => {
    expect(first.exitCode, first.all).toBe(0);
    expect(second.exitCode, second.all).toBe(0);
    expect(recap(first.all).changed).toBeGreaterThan(0);
    expect(recap(second.all), second.all).toMatchObject({ changed: 0, failed: 0 });
  });

  it('files hold exactly the declared bytes and modes', () => {
    expect(readFileSync(p('etc/app/config'), 'utf8')).toBe(config);
    expect(readFileSync(p('etc/app/empty'))).toHaveLength(0);
    expect(readFileSync(p('etc/app/unicode'))).toEqual(Buffer.from('שלום 😀 e\u0301 \u2028 \ufeff\r\n', 'utf8'));
    expect(lstatSync(p('etc/app')).mode & 0o7777).toBe(0o750);
    expect(lstatSync(p('etc/app/config')).mode & 0o7777).toBe(0o640);
    expect(lstatSync(p('etc/app/empty')).mode & 0o7777).toBe(0o600);
    expect(readlinkSync(p('etc/app/current'))).toBe('config');
    // `creates` kept the command to one run; its `{{ }}` reached the shell verbatim.
    expect(readFileSync(p('ran'), 'utf8')).toBe('ran {{ once }}\n');
  });

  it('each sysctl and module step owns its line; an old value is updated in place', () => {
    expect(readFileSync(p('etc/sysctl.d/99-k8s.conf'), 'utf8')).toBe('# kept\nnet.ipv4.ip_forward = 1\nvm.swappiness = 10\n');
    expect(readFileSync(p('etc/modules-load.d/k8s.conf'), 'utf8')).toBe('overlay\nbr_netfilter\n');
  });

  it('hooks send the JSON body: to a file on the controller, and to stdout', () => {
    const lines = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    expect(lines.map((e) => [e['image'], e['phase'], e['when'], e['result']])).toEqual([
      ['converge-test', 'customize', 'pre', 'starting'],
      ['converge-test', 'provision', 'post', 'ok'],
      ['converge-test', 'customize', 'pre', 'starting'],
      ['converge-test', 'provision', 'post', 'ok'],
    ]);
    for (const e of lines) expect(e['timestamp']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // site.yml builds an image: the lifecycle edge, and no hosts (there is no node yet).
    expect(Object.keys(lines[0]!)).toEqual(['image', 'phase', 'edge', 'when', 'timestamp', 'result']);
    expect(lines.map((e) => e['edge'])).toEqual([...Array(2).fill([{ from: 'base', to: 'customized' }, { from: 'customized', to: 'provisioned' }]).flat()]);
    expect(first.all).toMatch(/"msg": "\{\\"image\\": \\"converge-test\\", \\"phase\\": \\"customize\\", \\"edge\\": \{\\"from\\": \\"base\\", \\"to\\": \\"customized\\"\}, \\"when\\": \\"post\\", \\"timestamp\\": \\"\d{4}-[^"]*Z\\", \\"result\\": \\"ok\\"\}"/);
  });

  it('a check-mode run after converging reports changed=0 too', async () => {
    const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', '--check', 'site.yml'], ws.out, ws.home);
    expect(r.exitCode, r.all).toBe(0);
    expect(recap(r.all), r.all).toMatchObject({ changed: 0, failed: 0 });
  }, 300_000);

  it('runs one phase alone by its tag', async () => {
    const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', '--tags', 'provision', 'site.yml'], ws.out, ws.home);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('PLAY [Phase provision');
    expect(r.all).not.toContain('TASK [customize :');
    expect(recap(r.all).changed).toBe(0);
  }, 300_000);
});
