// Runs emitted scripts for real, without root: phase scripts on paths under a
// temp directory (idempotence, failure reporting), hook scripts against a
// local HTTP server. As root (CI) also build.sh in chroot mode.
import { execa } from 'execa';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Display } from '../../src/build/display.js';
import { StageLog } from '../../src/build/logs.js';
import { RootMounts } from '../../src/build/mounts.js';
import { PhaseFailed, shellRunner, type PhaseContext } from '../../src/build/runner.js';
import { Session } from '../../src/build/session.js';
import { helperCode } from '../../src/compilers/shell/helpers.js';
import { hooksScript } from '../../src/compilers/shell/hooks.js';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import { CompileError } from '../../src/compilers/types.js';
import { word } from '../../src/emit/shell/quote.js';
import type { Image } from '../../src/ir/schema.js';
import { rootTestsOff } from '../helpers/root.js';
import { tempDir } from '../helpers/cli.js';
import { imageOf, outcomes, parseProgress, phase, runSh, step, writeFiles } from './shell-support.js';

const compileTo = (ir: Image, name: string): string => {
  const out = tempDir(name);
  writeFiles(out, shellCompiler.compile(ir, {}));
  return out;
};

const me = userInfo().username;
const myGroup = (await execa('id', ['-gn'])).stdout;

describe('a phase script run twice', () => {
  const t = tempDir('shell-idem');
  const config = 'listen = "0.0.0.0"\n# it\'s $HOME, `id`, ${x}, %{y}, {{ z }}\n\ttabbed\r\nno newline at the end';
  const steps = [
    step({ id: 'p.1.directory', kind: 'directory', path: `${t}/etc`, mode: '0711' }),
    step({ id: 'p.2.directory', kind: 'directory', path: `${t}/etc/app`, mode: '0750', owner: me, group: myGroup }),
    step({ id: 'p.3.file', kind: 'file', path: `${t}/etc/app/config`, content: config, mode: '0640', owner: me, group: myGroup }),
    step({ id: 'p.4.file', kind: 'file', path: `${t}/etc/app/empty`, content: '' }),
    step({ id: 'p.5.symlink', kind: 'symlink', path: `${t}/etc/app/current`, target: 'config' }),
    step({ id: 'p.6.symlink', kind: 'symlink', path: `${t}/etc/app/odd`, target: "../it's a\ntarget\n" }),
    step({ id: 'p.7.sysctl', kind: 'sysctl', key: 'net.ipv4.ip_forward', value: '1', file: `${t}/etc/sysctl.d/99-test.conf` }),
    step({ id: 'p.8.sysctl', kind: 'sysctl', key: 'vm.swappiness', value: '10', file: `${t}/etc/sysctl.d/99-test.conf` }),
    step({ id: 'p.9.sysctl', kind: 'sysctl', key: 'kernel.core_pattern', value: '|/bin/x %p $y', file: `${t}/etc/sysctl.d/99-test.conf` }),
    step({ id: 'p.10.sysctl', kind: 'sysctl', key: 'net.core.somaxconn', value: '1024', file: `${t}/etc/sysctl.d/50-existing.conf` }),
    step({ id: 'p.11.kernelModule', kind: 'kernelModule', name: 'overlay', file: `${t}/etc/modules-load.d/test.conf` }),
    step({ id: 'p.12.kernelModule', kind: 'kernelModule', name: 'br_netfilter', file: `${t}/etc/modules-load.d/test.conf` }),
    step({ id: 'p.13.directory', kind: 'directory', path: `${t}/setgid`, mode: '0755' }),
    step({ id: 'p.14.command', kind: 'command', run: `printf 'ran\\n' >>'${t}/ran'\nprintf 'made' >'${t}/marker'`, creates: `${t}/marker`, needsMounts: false }),
  ];
  const ids = steps.map((s) => s.id);
  let script: string;
  const run = async () => {
    const r = await runSh(script);
    expect(r.exitCode, r.stderr).toBe(0);
    const p = parseProgress(r.stdout);
    return { p, o: outcomes(p), stderr: r.stderr };
  };

  beforeAll(() => {
    // Already there: a file with other lines, a stale value and a duplicate of
    // the key (which must go: sysctl's last line would win); a setgid directory.
    mkdirSync(`${t}/etc/sysctl.d`, { recursive: true });
    writeFileSync(`${t}/etc/sysctl.d/50-existing.conf`, '# kept\nnet.core.somaxconn = 128\nfs.file-max=100\n  net.core.somaxconn=5\n');
    mkdirSync(`${t}/setgid`);
    chmodSync(`${t}/setgid`, 0o2755);
    script = path.join(compileTo(imageOf([phase('p', steps)]), 'shell-idem-out'), 'phases/01-p.sh');
  });

  it('first changes every step, then changes nothing, and the files are exact', async () => {
    const first = await run();
    expect([...first.o.keys()]).toEqual(ids);
    expect([...first.o.values()].every((v) => v === 'changed'), JSON.stringify([...first.o])).toBe(true);
    expect(first.p.done).toEqual({ phase: 'p', changed: ids.length });

    const second = await run();
    expect([...second.o.entries()]).toEqual(ids.map((id) => [id, 'unchanged']));
    expect(second.p.done).toEqual({ phase: 'p', changed: 0 });

    expect(readFileSync(`${t}/etc/app/config`).equals(Buffer.from(config))).toBe(true);
    expect(statSync(`${t}/etc/app/config`).mode & 0o7777).toBe(0o640);
    expect(statSync(`${t}/etc`).mode & 0o7777).toBe(0o711);
    expect(statSync(`${t}/etc/app`).mode & 0o7777).toBe(0o750);
    expect(statSync(`${t}/setgid`).mode & 0o7777).toBe(0o755);
    expect(readFileSync(`${t}/etc/app/empty`).length).toBe(0);
    expect(statSync(`${t}/etc/app/empty`).mode & 0o777).toBe(0o644);
    expect(lstatSync(`${t}/etc/app/current`).isSymbolicLink()).toBe(true);
    expect(readlinkSync(`${t}/etc/app/current`)).toBe('config');
    expect(readlinkSync(`${t}/etc/app/odd`)).toBe("../it's a\ntarget\n");
    expect(readFileSync(`${t}/etc/sysctl.d/99-test.conf`, 'utf8')).toBe('net.ipv4.ip_forward = 1\nvm.swappiness = 10\nkernel.core_pattern = |/bin/x %p $y\n');
    expect(readFileSync(`${t}/etc/sysctl.d/50-existing.conf`, 'utf8')).toBe('# kept\nnet.core.somaxconn = 1024\nfs.file-max=100\n');
    expect(readFileSync(`${t}/etc/modules-load.d/test.conf`, 'utf8')).toBe('overlay\nbr_netfilter\n');
    expect(readFileSync(`${t}/ran`, 'utf8')).toBe('ran\n');
  });

  it('puts back only what was changed behind its back', async () => {
    writeFileSync(`${t}/etc/app/config`, 'edited\n');
    chmodSync(`${t}/etc/app/empty`, 0o600);
    writeFileSync(`${t}/etc/sysctl.d/99-test.conf`, 'vm.swappiness=60\nnet.ipv4.ip_forward = 1\nkernel.core_pattern = |/bin/x %p $y\n');
    const third = await run();
    const changed = [...third.o].filter(([, v]) => v === 'changed').map(([id]) => id);
    // p.4 has no mode of its own, so a chmod behind its back is not its business.
    expect(changed).toEqual(['p.3.file', 'p.8.sysctl']);
    expect(readFileSync(`${t}/etc/app/config`).equals(Buffer.from(config))).toBe(true);
    expect(readFileSync(`${t}/etc/sysctl.d/99-test.conf`, 'utf8')).toBe('vm.swappiness = 10\nnet.ipv4.ip_forward = 1\nkernel.core_pattern = |/bin/x %p $y\n');
    expect((await run()).p.done).toEqual({ phase: 'p', changed: 0 });
  });
});

describe('a failing step', () => {
  it('prints "failed" for it, runs nothing after it and exits non-zero', async () => {
    const t = tempDir('shell-fail');
    const ir = imageOf([
      phase('p', [
        step({ id: 'p.1.file', kind: 'file', path: `${t}/before`, content: 'x' }),
        step({ id: 'p.2.command', kind: 'command', run: 'echo to-stdout; false\necho not reached', needsMounts: false }),
        step({ id: 'p.3.file', kind: 'file', path: `${t}/after`, content: 'x' }),
      ]),
    ]);
    const r = await runSh(path.join(compileTo(ir, 'shell-fail-out'), 'phases/01-p.sh'));
    expect(r.exitCode).not.toBe(0);
    const p = parseProgress(r.stdout);
    expect(p.steps).toEqual([
      ['p.1.file', 'start'],
      ['p.1.file', 'changed'],
      ['p.2.command', 'start'],
      ['p.2.command', 'failed'],
    ]);
    expect(p.done).toBeUndefined();
    expect(r.stderr).toContain('to-stdout');
    expect(r.stderr).not.toContain('not reached');
    expect(r.stderr).toContain('imgc: step p.2.command failed');
    expect(existsSync(`${t}/after`)).toBe(false);
  });

  it('a writer refuses to replace a directory with a file', async () => {
    const t = tempDir('shell-dir');
    mkdirSync(`${t}/d`);
    const r = await runSh(path.join(compileTo(imageOf([phase('p', [step({ id: 'p.1.file', kind: 'file', path: `${t}/d`, content: 'x' })])]), 'shell-dir-out'), 'phases/01-p.sh'));
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).toContain('imgc-step p.1.file failed\n');
    expect(statSync(`${t}/d`).isDirectory()).toBe(true);
  });
});

describe('the swapOff helper', () => {
  it('comments out swap entries, once, and leaves everything else', async () => {
    const t = tempDir('shell-swap');
    const fstab = `${t}/fstab`;
    writeFileSync(fstab, 'UUID=1 / ext4 errors=remount-ro 0 1\n/swapfile none swap sw 0 0\n# /old none swap sw 0 0\nUUID=2\tnone\tswap\tsw\t0\t0\n');
    const script = `${t}/swap.sh`;
    writeFileSync(
      script,
      ['set -eu', 'imgc_tmp=', ...helperCode(['swapoff']), 'imgc_dirty=0', `imgc_swapoff ${word(fstab)}`, 'printf %s "$imgc_dirty"', ''].join('\n'),
    );
    expect((await runSh(script)).stdout).toBe('1');
    expect(readFileSync(fstab, 'utf8')).toBe('UUID=1 / ext4 errors=remount-ro 0 1\n#/swapfile none swap sw 0 0\n# /old none swap sw 0 0\n#UUID=2\tnone\tswap\tsw\t0\t0\n');
    expect((await runSh(script)).stdout).toBe('0');
  });
});

describe('the apt installed check', () => {
  it('matches a name, an exact pin and a wildcard pin against what dpkg has installed', async () => {
    // The host's own dpkg: dash is Essential on Debian, so it is installed with some version.
    const version = (await execa('dpkg-query', ['-W', '-f=${Version}', 'dash'])).stdout;
    const t = tempDir('shell-apt-installed');
    const script = `${t}/installed.sh`;
    writeFileSync(script, ['set -eu', ...helperCode(['aptInstalled']), 'for p in "$@"; do if imgc_apt_installed "$p"; then echo "$p yes"; else echo "$p no"; fi; done', ''].join('\n'));
    const pins = ['dash', `dash=${version}`, `dash=${version.split('.')[0]}.*`, 'dash=*', 'dash=0.0.1-1', 'dash=0.0.*', 'imgc-no-such-package', 'imgc-no-such-package=1.*'];
    const r = await execa('sh', [script, ...pins]);
    expect(r.stdout.split('\n')).toEqual(pins.map((p, i) => `${p} ${i < 4 ? 'yes' : 'no'}`));
  });
});

describe('verify-phase commands', () => {
  it('run as checks: unchanged when they pass', async () => {
    const ir = imageOf([phase('verify', [step({ id: 'verify.1.verify', kind: 'verify', check: 'facts' }), step({ id: 'verify.2.command', kind: 'command', run: 'test -d /', needsMounts: false })])]);
    const out = compileTo(ir, 'shell-verify-out');
    const script = readFileSync(path.join(out, 'phases/01-verify.sh'), 'utf8');
    expect(script).toContain('#   verify.1.verify: verify facts');
    const r = await runSh(path.join(out, 'phases/01-verify.sh'));
    expect(r.exitCode, r.stderr).toBe(0);
    const p = parseProgress(r.stdout);
    expect([...outcomes(p)]).toEqual([['verify.2.command', 'unchanged']]);
    expect(p.done).toEqual({ phase: 'verify', changed: 0 });
  });
});

describe('hook scripts', () => {
  interface Hit {
    url: string;
    body: string;
    type: string | undefined;
  }
  const hits: Hit[] = [];
  let server: Server;
  let base: string;
  let flaky = 0;
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        hits.push({ url: req.url ?? '', body, type: req.headers['content-type'] });
        const fail = req.url === '/down' || (req.url === '/flaky' && flaky++ === 0);
        res.statusCode = fail ? 503 : 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const hook = (id: string, when: 'pre' | 'post', action: Record<string, unknown>) => step({ id, kind: 'hook', when, action });
  const timestamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

  it('send webhooks (retrying), print and append events, run scripts in the root', async () => {
    const t = tempDir('shell-hooks');
    const ir = imageOf([
      phase('customize', [], {
        pre: [
          hook('customize.pre1.hook', 'pre', { type: 'event', target: 'stdout' }),
          hook('customize.pre2.hook', 'pre', { type: 'event', target: `${t}/events.log` }),
          hook('customize.pre3.hook', 'pre', { type: 'webhook', url: `${base}/flaky`, timeoutSeconds: 5, retries: 1, onFailure: 'fail' }),
          hook('customize.pre4.hook', 'pre', { type: 'script', run: `printf '%s' "$0" >'${t}/script-ran'` }),
        ],
        post: [
          hook('customize.post1.hook', 'post', { type: 'webhook', url: `${base}/down`, timeoutSeconds: 5, retries: 0, onFailure: 'warn' }),
          hook('customize.post2.hook', 'post', { type: 'event', target: `${t}/events.log` }),
        ],
      }),
    ]);
    const out = compileTo(ir, 'shell-hooks-out');
    const pre = await execa('sh', [path.join(out, 'hooks/01-customize-pre.sh')], { reject: false, env: { IMGC_ROOT: '/' } });
    expect(pre.exitCode, pre.stderr).toBe(0);
    const line = JSON.parse(pre.stdout) as Record<string, string>;
    // An image build: the lifecycle edge, and no hosts (there is no node yet).
    expect(Object.keys(line)).toEqual(['image', 'phase', 'edge', 'when', 'timestamp', 'result']);
    expect(line).toMatchObject({ image: 'test-image', phase: 'customize', edge: { from: 'base', to: 'customized' }, when: 'pre', result: 'starting' });
    expect(line['timestamp']).toMatch(timestamp);
    expect(hits.filter((h) => h.url === '/flaky')).toHaveLength(2);
    const posted = hits.find((h) => h.url === '/flaky')!;
    expect(posted.type).toBe('application/json');
    expect(JSON.parse(posted.body)).toEqual({ ...line, timestamp: expect.stringMatching(timestamp) });
    expect(readFileSync(`${t}/script-ran`, 'utf8')).toBe('/bin/sh');

    const post = await execa('sh', [path.join(out, 'hooks/01-customize-post.sh')], { reject: false });
    expect(post.exitCode, post.stderr).toBe(0);
    expect(post.stdout).toBe('');
    expect(post.stderr).toContain(`imgc: warning: webhook ${base}/down failed 1 times; going on`);
    const events = readFileSync(`${t}/events.log`, 'utf8').split('\n');
    expect(events.pop()).toBe('');
    expect(events.map((e) => (JSON.parse(e) as { when: string; result: string }).result)).toEqual(['starting', 'ok']);
  });

  it('fail the build when a webhook set to fail keeps failing', async () => {
    const before = hits.length;
    const ir = imageOf([phase('provision', [], { post: [hook('provision.post1.hook', 'post', { type: 'webhook', url: `${base}/down`, timeoutSeconds: 2, retries: 2, onFailure: 'fail' })] })]);
    const r = await execa('sh', [path.join(compileTo(ir, 'shell-hooks-fail'), 'hooks/01-provision-post.sh')], { reject: false });
    expect(r.exitCode).not.toBe(0);
    expect(hits.length - before).toBe(3);
    expect(r.stderr).toContain('imgc: hook provision.post1.hook failed');
  });

  describe('of a failed phase (IMGC_RESULT=failed, IMGC_MESSAGE)', () => {
    const t = tempDir('shell-hooks-failed');
    const events = `${t}/events.log`;
    let script: string;
    let eventScript: string;
    beforeAll(() => {
      const ir = imageOf([
        phase('provision', [], {
          post: [
            hook('provision.post1.hook', 'post', { type: 'event', target: events }),
            hook('provision.post2.hook', 'post', { type: 'webhook', url: `${base}/failed`, timeoutSeconds: 5, retries: 0, onFailure: 'fail' }),
          ],
        }),
      ]);
      // The event alone, for the property: no curl per run.
      const eventOnly = imageOf([phase('provision', [], { post: [hook('provision.post1.hook', 'post', { type: 'event', target: events })] })]);
      script = path.join(compileTo(ir, 'shell-hooks-failed-out'), 'hooks/01-provision-post.sh');
      eventScript = path.join(compileTo(eventOnly, 'shell-hooks-failed-event'), 'hooks/01-provision-post.sh');
    });
    const lastEvent = () => JSON.parse(readFileSync(events, 'utf8').split('\n').filter(Boolean).at(-1)!) as Record<string, unknown>;
    const runPost = (file: string, env: Record<string, string>) => execa('/bin/sh', [file], { reject: false, env, stdin: 'ignore' });

    it('send result ok and no message without the variables, result failed and the message with them, to events and webhooks', async () => {
      const ok = await runPost(script, {});
      expect(ok.exitCode, ok.stderr).toBe(0);
      expect(Object.keys(lastEvent())).toEqual(['image', 'phase', 'edge', 'when', 'timestamp', 'result']);
      expect(lastEvent()).toMatchObject({ phase: 'provision', when: 'post', result: 'ok' });

      const message = 'phase provision: step provision.1.command failed (exit 3)\n\t"quoted" \\ back';
      const before = hits.length;
      const failed = await runPost(script, { IMGC_RESULT: 'failed', IMGC_MESSAGE: message });
      expect(failed.exitCode, failed.stderr).toBe(0);
      expect(Object.keys(lastEvent())).toEqual(['image', 'phase', 'edge', 'when', 'timestamp', 'result', 'message']);
      expect(lastEvent()).toMatchObject({ image: 'test-image', phase: 'provision', edge: { from: 'customized', to: 'provisioned' }, when: 'post', result: 'failed', message });
      expect(lastEvent()['timestamp']).toMatch(timestamp);
      const posted = hits.slice(before).filter((h) => h.url === '/failed');
      expect(posted).toHaveLength(1);
      expect(JSON.parse(posted[0]!.body)).toEqual({ ...lastEvent(), timestamp: expect.stringMatching(timestamp) });

      const odd = await runPost(script, { IMGC_RESULT: 'fail' });
      expect(odd.exitCode).not.toBe(0);
      expect(odd.stderr).toContain('imgc: IMGC_RESULT is fail, not ok or failed');
    });

    it('give valid JSON with the exact message, whatever it holds (control characters, quotes, backslashes, unicode)', async () => {
      const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1));
      const nasty = ['', '"', '\\', '\\"', '"\\', '\\\\"', '\n', '\r\n', '\t', '\\n', '\\u0000', '%s%d%%', '$(id)`id`${x}', "'", '\u007f', '\u2028\u2029', 'é😀👩‍👩‍👧', '"}, "result": "ok', ...controls];
      const message = fc.array(fc.oneof(fc.constantFrom(...nasty), fc.string({ unit: 'grapheme', maxLength: 4 })), { maxLength: 8 }).map((parts) => parts.join(''));
      await fc.assert(
        fc.asyncProperty(message, async (m) => {
          const r = await runPost(eventScript, { IMGC_RESULT: 'failed', IMGC_MESSAGE: m });
          expect(r.exitCode, r.stderr).toBe(0);
          const line = lastEvent();
          expect(line['result']).toBe('failed');
          expect(line['message']).toBe(m);
        }),
        { numRuns: 60, examples: [...nasty.map((n) => [n] as [string]), [controls.join('')], [nasty.join('')]] },
      );
    }, 60_000);
  });

  it('build valid JSON whatever the image and phase are called', async () => {
    // Not schema-valid names, on purpose: the body must not depend on the regexes.
    // compile() refuses such IR (IMGC1004), so the hook script is made directly.
    const ir = imageOf([phase('customize', [], { pre: [hook('customize.pre1.hook', 'pre', { type: 'event', target: 'stdout' })] })]);
    const name = 'a"b\\c\'d$e`f\n%s{{g}}\u2028😀';
    const odd = { ...ir, name, phases: [{ ...ir.phases[0]!, name: 'ph"a\\se %s' }] };
    expect(() => shellCompiler.compile(odd, {})).toThrow(CompileError);
    expect(() => shellCompiler.compile(odd, {})).toThrow(/^invalid name: .*\ninvalid phases\.0\.name: /);
    const out = tempDir('shell-hooks-json');
    const stem = '01-ph"a\\se %s';
    writeFiles(out, { [`hooks/${stem}-pre.sh`]: hooksScript(odd, { phase: odd.phases[0]!, index: 1, stem }, 'pre', odd.phases[0]!.pre) });
    const r = await execa('sh', [path.join(out, 'hooks/01-ph"a\\se %s-pre.sh')], { reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ image: name, phase: 'ph"a\\se %s', when: 'pre' });
  });
});

const isRoot = process.getuid?.() === 0 && !rootTestsOff;

describe.skipIf(!isRoot)('build.sh in chroot mode (root only)', () => {
  /** A root with just enough to run sh: dash and the libraries it links. */
  const miniRoot = async (): Promise<string> => {
    const root = tempDir('shell-root');
    const libs = (await execa('ldd', ['/bin/dash'])).stdout.match(/\/\S+/g) ?? [];
    for (const f of ['/bin/dash', ...libs]) {
      mkdirSync(path.join(root, path.dirname(f)), { recursive: true });
      copyFileSync(f, path.join(root, f));
      chmodSync(path.join(root, f), 0o755);
    }
    copyFileSync(path.join(root, 'bin/dash'), path.join(root, 'bin/sh'));
    chmodSync(path.join(root, 'bin/sh'), 0o755);
    mkdirSync(path.join(root, 'usr/sbin'), { recursive: true });
    mkdirSync(path.join(root, 'run'));
    // What a debootstrap root has without /dev mounted.
    mkdirSync(path.join(root, 'dev'));
    await execa('mknod', ['-m', '0666', path.join(root, 'dev/null'), 'c', '1', '3']);
    return root;
  };
  const ir = imageOf([
    phase(
      'customize',
      [
        step({ id: 'customize.1.command', kind: 'command', run: '[ -x /usr/sbin/policy-rc.d ]\nprintf in-root >/marker', creates: '/marker', needsMounts: false }),
      ],
      { pre: [step({ id: 'customize.pre1.hook', kind: 'hook', when: 'pre', action: { type: 'script', run: 'printf hook >/hook-ran' } })] },
    ),
    phase('verify', [step({ id: 'verify.1.command', kind: 'command', run: '[ -f /marker ]', needsMounts: false })]),
  ]);

  it('runs hooks and phases in the root, and leaves no policy-rc.d or staged script behind', async () => {
    const root = await miniRoot();
    const out = compileTo(ir, 'shell-build-out');
    const r = await execa('sh', [path.join(out, 'build.sh')], { reject: false, env: { IMGC_ROOT: root } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        'imgc-step customize.1.command start',
        'imgc-step customize.1.command changed',
        'imgc-phase customize done changed=1',
        'imgc-step verify.1.command start',
        'imgc-step verify.1.command unchanged',
        'imgc-phase verify done changed=0',
      ].join('\n'),
    );
    expect(readFileSync(path.join(root, 'marker'), 'utf8')).toBe('in-root');
    expect(readFileSync(path.join(root, 'hook-ran'), 'utf8')).toBe('hook');
    expect(existsSync(path.join(root, 'usr/sbin/policy-rc.d'))).toBe(false);
    expect(existsSync(path.join(root, 'run/imgc'))).toBe(false);

    const again = await execa('sh', [path.join(out, 'build.sh'), '--phase', 'customize'], { reject: false, env: { IMGC_ROOT: root } });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain('imgc-phase customize done changed=0');
    expect(again.stdout).not.toContain('verify');
  });

  it('leaves a policy-rc.d the root already has, and fails when a phase fails', async () => {
    const root = await miniRoot();
    writeFileSync(path.join(root, 'usr/sbin/policy-rc.d'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(root, 'usr/sbin/policy-rc.d'), 0o755);
    const failing = imageOf([phase('customize', [step({ id: 'customize.1.command', kind: 'command', run: 'exit 7', needsMounts: false })])]);
    const r = await execa('sh', [path.join(compileTo(failing, 'shell-build-fail'), 'build.sh')], { reject: false, env: { IMGC_ROOT: root } });
    expect(r.exitCode).toBe(7);
    expect(r.stdout).toContain('imgc-step customize.1.command failed');
    expect(readFileSync(path.join(root, 'usr/sbin/policy-rc.d'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(existsSync(path.join(root, 'run/imgc'))).toBe(false);
  });
  describe('a failed phase with post hooks', () => {
    const events = () => path.join(tempDir('shell-failed-events'), 'events.log');
    const failingWith = (log: string) =>
      imageOf([
        phase('provision', [step({ id: 'provision.1.command', kind: 'command', run: 'exit 3', needsMounts: false })], {
          post: [
            step({ id: 'provision.post1.hook', kind: 'hook', when: 'post', action: { type: 'event', target: log } }),
            // A post hook that fails too: the phase's failure still stands.
            step({ id: 'provision.post2.hook', kind: 'hook', when: 'post', action: { type: 'script', run: 'exit 5' } }),
          ],
        }),
      ]);
    const readEvents = (log: string) =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);

    it("build.sh: its post hooks run with result failed and the message, and build.sh exits with the phase's status", async () => {
      const root = await miniRoot();
      const log = events();
      const r = await execa('sh', [path.join(compileTo(failingWith(log), 'shell-build-failed-hooks'), 'build.sh')], {
        reject: false,
        // Not taken from outside: build.sh says the outcome itself.
        env: { IMGC_ROOT: root, IMGC_RESULT: 'ok', IMGC_MESSAGE: 'stale' },
      });
      expect(r.exitCode, r.stderr).toBe(3);
      expect(readEvents(log)).toEqual([
        { image: 'test-image', phase: 'provision', edge: { from: 'customized', to: 'provisioned' }, when: 'post', timestamp: expect.stringMatching(/Z$/), result: 'failed', message: 'phase provision failed (exit status 3)' },
      ]);
      expect(r.stderr).toContain('imgc: phase provision failed (exit status 3)');
      expect(r.stderr).toContain('imgc: hook provision.post2.hook failed (exit status 5)');
      expect(r.stderr).toContain('imgc: the post hooks of failed phase provision failed too; exiting with its exit status 3');
      expect(existsSync(path.join(root, 'run/imgc'))).toBe(false);
    });

    it("imgc's runner: the post hooks run with result failed and the PhaseFailed message, then the failure is thrown", async () => {
      const root = await miniRoot();
      const log = events();
      const ir = failingWith(log);
      const files = shellCompiler.compile(ir, {});
      const compiledDir = compileTo(ir, 'shell-runner-failed-hooks');
      const shown: string[] = [];
      const ctx: PhaseContext = {
        ir,
        phase: ir.phases[0]!,
        stem: '01-provision',
        root,
        compiledDir,
        files,
        log: new StageLog(tempDir('shell-runner-logs'), '01-provision'),
        display: new Display({ out: (s) => shown.push(s), err: (s) => shown.push(s), isTTY: false }, {}),
        session: new Session(),
        mounts: new RootMounts(root),
        passthrough: () => {},
        sensitive: new Map(),
      };
      const thrown = await shellRunner.runSteps(ctx).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(thrown).toBeInstanceOf(PhaseFailed);
      const failed = thrown as PhaseFailed;
      expect(failed).toMatchObject({ stepId: 'provision.1.command', exitCode: 3 });
      expect(failed.message).toBe('phase provision: step provision.1.command failed (exit 3)');
      expect(readEvents(log)).toEqual([
        { image: 'test-image', phase: 'provision', edge: { from: 'customized', to: 'provisioned' }, when: 'post', timestamp: expect.stringMatching(/Z$/), result: 'failed', message: failed.message },
      ]);
      expect(shown.join('')).toContain('warning: the post hooks of failed phase provision failed too: phase provision: step provision.post2.hook failed');
      expect(existsSync(path.join(root, 'run/imgc'))).toBe(false);
    });
  });
});
