// Unit tests of the build's small parts: cache keys, the progress parsers,
// mountinfo reading, the display, and the verify readers on a fake root.
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tempDir } from '../helpers/temp.js';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { artifactInput, diskStamp } from '../../src/build/artifacts.js';
import { resolveBase } from '../../src/build/base.js';
import { baseKey, phaseKey, RootCache, stableJson, withCacheLock, withoutLocations } from '../../src/build/cache.js';
import { Display } from '../../src/build/display.js';
import { mountsUnder } from '../../src/build/mounts.js';
import { phaseKind } from '../../src/ir/phases.js';
import { AnsibleProgress, parseShellLine, type ProgressEvent } from '../../src/build/progress.js';
import type { Base, Image, Phase, StepOf } from '../../src/ir/schema.js';
import { parseDebugfsStat, DirView } from '../../src/verify/rootview.js';
import { activeSwapLines, enablementLinks, findCommand, readDpkgStatus, isInstalled, sysctlSettings } from '../../src/core/root.js';
import { irOf } from '../helpers/cli.js';

const phase = (over: Partial<Phase> = {}): Phase => ({
  name: 'customize',
  runtime: false,
  pre: [],
  post: [],
  steps: [{ id: 'customize.1.group', kind: 'group', name: 'admins', system: false, provides: [], requires: [], removes: [], loc: { file: 'a.ts', line: 3, column: 5 } }],
  ...over,
});

describe('cache keys', () => {
  const base: Parameters<typeof baseKey>[0]['base'] = { distro: 'debian', suite: 'bookworm', variant: 'minbase', include: ['b', 'a'], packageManager: 'apt' };

  it('key the base by suite, variant, package set (any order), mirror and architecture', () => {
    const k = baseKey({ base, mirror: 'http://m.example/debian', arch: 'amd64' });
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(baseKey({ base: { ...base, include: ['a', 'b'] }, mirror: 'http://m.example/debian', arch: 'amd64' })).toBe(k);
    expect(baseKey({ base: { ...base, include: ['a'] }, mirror: 'http://m.example/debian', arch: 'amd64' })).not.toBe(k);
    expect(baseKey({ base: { ...base, suite: 'trixie' }, mirror: 'http://m.example/debian', arch: 'amd64' })).not.toBe(k);
    expect(baseKey({ base: { ...base, variant: 'buildd' }, mirror: 'http://m.example/debian', arch: 'amd64' })).not.toBe(k);
    expect(baseKey({ base, mirror: 'http://other.example/debian', arch: 'amd64' })).not.toBe(k);
    expect(baseKey({ base, mirror: 'http://m.example/debian', arch: 'arm64' })).not.toBe(k);
  });

  it('key a phase by the previous key, its IR without source locations, and the target', () => {
    const p = phase();
    const k = phaseKey('prev', p, 'shell');
    const moved = phase({ loc: { file: 'b.ts', line: 9, column: 1 }, steps: p.steps.map((s) => ({ ...s, loc: { file: 'a.ts', line: 40, column: 2 } })) });
    expect(phaseKey('prev', moved, 'shell')).toBe(k);
    expect(phaseKey('other', p, 'shell')).not.toBe(k);
    expect(phaseKey('prev', p, 'ansible')).not.toBe(k);
    const changed = phase({ steps: [{ ...p.steps[0]!, name: 'wheel' } as Phase['steps'][number]] });
    expect(phaseKey('prev', changed, 'shell')).not.toBe(k);
    // SOURCE_DATE_EPOCH reaches the steps: a root made under another epoch (or none) is another root.
    expect(phaseKey('prev', p, 'shell', [], 1700000000)).not.toBe(k);
    expect(phaseKey('prev', p, 'shell', [], 1700000000)).not.toBe(phaseKey('prev', p, 'shell', [], 1700000001));
  });

  it('chain: editing only the artifact phase leaves every root phase key as it was', async () => {
    const ir = await irOf('examples/node-image-debian.ts');
    const keys = (img: Image) => {
      let prev = 'base';
      return img.phases.filter((p) => phaseKind(p) === 'root').map((p) => (prev = phaseKey(prev, p, 'shell')));
    };
    const edited: Image = JSON.parse(JSON.stringify(ir));
    const art = edited.phases.find((p) => p.name === 'artifact')!;
    art.steps = art.steps.filter((s) => !(s.kind === 'artifact' && s.format === 'qcow2'));
    expect(keys(edited)).toEqual(keys(ir));
    const custom = edited.phases.find((p) => p.name === 'customize')!;
    custom.steps = custom.steps.slice(1);
    const after = keys(edited);
    expect(after[0]).not.toBe(keys(ir)[0]);
    expect(after[1]).not.toBe(keys(ir)[1]); // provision starts from another root now
  });

  it('stableJson sorts keys at every level; withoutLocations drops loc everywhere', () => {
    expect(stableJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: 2 } })).toBe('{"a":{"c":2,"d":[{"y":2,"z":1}]},"b":1}');
    expect(withoutLocations({ loc: 1, a: [{ loc: 2, b: 3 }] })).toEqual({ a: [{ b: 3 }] });
  });
});

describe('shell progress lines', () => {
  it('parse starts, results and the phase line', () => {
    expect(parseShellLine('imgc-step customize.2.user start')).toEqual({ type: 'start', step: 'customize.2.user' });
    expect(parseShellLine('imgc-step customize.2.user changed')).toEqual({ type: 'end', step: 'customize.2.user', status: 'changed' });
    expect(parseShellLine('imgc-step my-phase.12.aptRepository unchanged')).toEqual({ type: 'end', step: 'my-phase.12.aptRepository', status: 'unchanged' });
    expect(parseShellLine('imgc-step verify.pre1.hook failed')).toEqual({ type: 'end', step: 'verify.pre1.hook', status: 'failed' });
    expect(parseShellLine('imgc-phase provision done changed=7')).toEqual({ type: 'phase-done', phase: 'provision', changed: 7 });
  });

  it('ignore everything else, including near misses', () => {
    for (const l of ['', 'Setting up openssh-server', 'imgc-step customize.2.user', 'imgc-step customize.2.user done', 'imgc-step  customize.2.user start', 'xx imgc-step customize.2.user start', 'imgc-phase provision done', 'imgc: step customize.2.user failed (exit status 3)']) {
      expect(parseShellLine(l)).toBeUndefined();
    }
  });
});

describe('ansible progress', () => {
  // Lines as ansible.posix.jsonl writes them (fields it adds and the parser does not read left out).
  const play = (name: string) => ({ _event: 'v2_playbook_on_play_start', play: { name } });
  const task = (name: string) => ({ _event: 'v2_playbook_on_task_start', task: { name }, hosts: {} });
  const handler = (name: string) => ({ _event: 'v2_playbook_on_handler_task_start', task: { name }, hosts: {} });
  const result = (on: 'ok' | 'failed' | 'skipped' | 'unreachable', r: Record<string, unknown> = {}) => ({ _event: `v2_runner_on_${on}`, task: { name: 'x' }, hosts: { '/tmp/root': r } });
  const stats = (s: Record<string, number>) => ({
    _event: 'v2_playbook_on_stats',
    stats: { '/tmp/root': { ok: 0, changed: 0, failures: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0, ...s } },
  });
  const run = (events: object[]) => {
    const p = new AnsibleProgress();
    const parsed = events.map((e) => p.feed(JSON.stringify(e))!);
    return { events: [...parsed.flatMap((l) => l.events), ...p.flush()], text: parsed.flatMap((l) => l.text) };
  };
  const feed = (events: object[]): ProgressEvent[] => run(events).events;

  it('turns tasks into steps: several tasks of one step make one, changed if any changed, skipped if none ran', () => {
    const out = feed([
      play('customize'),
      task('customize.1.group: group admins'),
      result('ok', { changed: true }),
      task('customize.2.user: user ops (create)'),
      result('ok', { changed: false }),
      task('customize.2.user: user ops (groups)'),
      result('ok', { changed: true, results: [{ item: 'admins', changed: true }] }),
      task('customize.3.command | run once'),
      result('skipped', { skipped: true }),
      task('customize | Directory /etc/cni (provision.12.directory, node-image.ts:44)'),
      result('ok', { changed: false }),
      task('Not a step'),
      result('ok', { changed: true }),
      stats({ ok: 4, changed: 2, skipped: 1 }),
    ]);
    expect(out).toEqual([
      { type: 'start', step: 'customize.1.group' },
      { type: 'end', step: 'customize.1.group', status: 'changed' },
      { type: 'start', step: 'customize.2.user' },
      { type: 'end', step: 'customize.2.user', status: 'changed' },
      { type: 'start', step: 'customize.3.command' },
      // Its only task was skipped (a false `when:`): the step did not run.
      { type: 'end', step: 'customize.3.command', status: 'skipped' },
      { type: 'start', step: 'provision.12.directory' },
      { type: 'end', step: 'provision.12.directory', status: 'unchanged' },
      { type: 'recap', ok: 4, changed: 2, unreachable: 0, failed: 0 },
    ]);
  });

  it('reports a failed task as a failed step, unless the host went on or the recap counts no failure (ignore_errors)', () => {
    const ignoredThenFatal = feed([
      task('customize.1.command: probe'),
      result('failed', { failed: true, rc: 1 }),
      task('customize.2.command: exit 3'),
      result('failed', { failed: true, changed: true, rc: 3 }),
      stats({ ok: 1, failures: 1, ignored: 1 }),
    ]);
    expect(ignoredThenFatal.filter((e) => e.type === 'end')).toEqual([
      { type: 'end', step: 'customize.1.command', status: 'unchanged' },
      { type: 'end', step: 'customize.2.command', status: 'failed' },
    ]);
    expect(ignoredThenFatal.at(-1)).toEqual({ type: 'recap', ok: 1, changed: 0, unreachable: 0, failed: 1 });
    // The last task's failure, ignored: only the recap tells.
    expect(feed([task('verify.post1.hook: warn'), result('failed', { failed: true }), stats({ ignored: 1 })])[1]).toEqual({ type: 'end', step: 'verify.post1.hook', status: 'unchanged' });
    // No recap (ansible-playbook died): the failure counts.
    expect(feed([task('customize.1.command: x'), result('unreachable', { unreachable: true, msg: 'gone' })])[1]).toEqual({ type: 'end', step: 'customize.1.command', status: 'failed' });
  });

  it("keeps a step failed when the phase's rescue runs after it (its post hooks, then the host fails)", () => {
    const out = feed([
      task('Command: boom (provision.1.command, test.ts:10)'),
      result('failed', { failed: true, rc: 3 }),
      task('Post hook (phase failed): event to stdout (provision.post1.hook, test.ts:12)'),
      result('ok', { changed: false }),
      task('Phase provision: failed on this host'),
      result('failed', { failed: true, msg: 'imgc: phase provision failed at …' }),
      stats({ ok: 1, failures: 1, rescued: 1 }),
    ]);
    expect(out).toEqual([
      { type: 'start', step: 'provision.1.command' },
      { type: 'end', step: 'provision.1.command', status: 'failed' },
      { type: 'recap', ok: 1, changed: 0, failed: 1, unreachable: 0 },
    ]);
    // The same post hook after a phase that went through is a step of its own, as before.
    expect(feed([task('Command: ok (provision.1.command, test.ts:10)'), result('failed', { failed: true }), task('Post hook: event to stdout (provision.post1.hook, test.ts:12)'), result('ok')])).toEqual([
      { type: 'start', step: 'provision.1.command' },
      { type: 'end', step: 'provision.1.command', status: 'unchanged' },
      { type: 'start', step: 'provision.post1.hook' },
      { type: 'end', step: 'provision.post1.hook', status: 'unchanged' },
    ]);
  });

  it('ignores tasks that belong to no step (handlers, fact gathering) and lines that are not the callback\'s', () => {
    expect(feed([task('Gathering Facts'), result('ok'), handler('restart ssh (customize.1.service)'), result('ok', { changed: true })])).toEqual([]);
    const p = new AnsibleProgress();
    for (const l of ['[WARNING]: something', '', '{not json', '{"no_event": 1}', 'PLAY RECAP ****']) expect(p.feed(l), l).toBeUndefined();
  });

  it('writes readable log lines: tasks, results with their message and output, a censored result hidden, the recap', () => {
    const { text } = run([
      task('customize.1.command: x'),
      result('ok', { changed: true, stdout_lines: ['out'], stderr_lines: [] }),
      task('customize.2.command: secret'),
      result('ok', { changed: true, censored: "the output has been hidden due to the fact that 'no_log: true' was specified for this result" }),
      task('customize.3.command: fails'),
      result('failed', { failed: true, rc: 3, msg: 'non-zero return code', stdout_lines: ['a'], stderr_lines: ['b'] }),
      stats({ ok: 2, changed: 2, failures: 1 }),
    ]);
    expect(text).toEqual([
      '',
      'TASK [customize.1.command: x]',
      'changed: [/tmp/root]',
      '  stdout: out',
      '',
      'TASK [customize.2.command: secret]',
      'changed: [/tmp/root]',
      "  (the output has been hidden due to the fact that 'no_log: true' was specified for this result)",
      '',
      'TASK [customize.3.command: fails]',
      'fatal: [/tmp/root]: FAILED! (rc 3)',
      '  msg: non-zero return code',
      '  stdout: a',
      '  stderr: b',
      '',
      'PLAY RECAP',
      '/tmp/root : ok=2  changed=2  unreachable=0  failed=1  skipped=0  rescued=0  ignored=0',
    ]);
  });
});

describe('mountsUnder', () => {
  it('decodes mountinfo escapes and matches only the directory and below', () => {
    const dir = tempDir('mi');
    const fake = path.join(dir, 'mountinfo');
    writeFileSync(
      fake,
      [
        `22 1 0:21 / /proc rw - proc proc rw`,
        `30 22 0:5 / /w/ro\\040ot/proc rw - proc proc rw`,
        `31 22 0:5 / /w/ro\\040ot/dev/pts rw - devpts devpts rw`,
        `32 22 0:5 / /w/ro\\040ot2/proc rw - proc proc rw`,
        '',
      ].join('\n'),
    );
    expect(mountsUnder('/w/ro ot', fake)).toEqual(['/w/ro ot/proc', '/w/ro ot/dev/pts']);
  });
});

describe('display', () => {
  const capture = (isTTY: boolean, env: NodeJS.ProcessEnv) => {
    let out = '';
    const d = new Display({ out: (s) => (out += s), err: () => {}, isTTY }, env);
    d.phaseStart('customize', 2);
    d.stepStart('customize.1.group');
    d.stepEnd('customize.1.group', 'changed');
    d.stepStart('customize.2.user');
    d.stepEnd('customize.2.user', 'unchanged');
    d.phaseDone('2 steps, 1 changed');
    return out;
  };

  it('rewrites one line with ANSI on a terminal', () => {
    const out = capture(true, {});
    expect(out).toContain('\r\u001b[2K');
    expect(out).toContain('1/2');
    expect(out).toContain('customize.2.user');
  });

  it('prints plain lines when not a terminal, or when CI=true', () => {
    for (const out of [capture(false, {}), capture(true, { CI: 'true' })]) {
      expect(out).not.toContain('\u001b[');
      expect(out).toContain('[1/2] customize.1.group changed\n');
      expect(out).toContain('[2/2] customize.2.user ok\n');
    }
  });
});

describe('verify readers', () => {
  const root = () => {
    const r = tempDir('root');
    for (const d of ['etc/systemd/system/multi-user.target.wants', 'lib/systemd/system', 'usr/bin', 'var/lib/dpkg', 'etc/sysctl.d']) mkdirSync(path.join(r, d), { recursive: true });
    return r;
  };

  it('reads dpkg status, multi-arch included', () => {
    const r = root();
    writeFileSync(
      path.join(r, 'var/lib/dpkg/status'),
      'Package: a\nStatus: install ok installed\n\nPackage: b\nStatus: deinstall ok config-files\n\nPackage: c\nArchitecture: i386\nStatus: install ok installed\n\nPackage: c\nArchitecture: amd64\nStatus: deinstall ok config-files\n',
    );
    const s = readDpkgStatus(new DirView(r));
    expect(isInstalled(s.get('a'))).toBe(true);
    expect(isInstalled(s.get('b'))).toBe(false);
    expect(isInstalled(s.get('c'))).toBe(true);
    expect(isInstalled(s.get('zz'))).toBe(false);
  });

  it('finds enablement links, through an alias, and commands through symlinks inside the root', () => {
    const r = root();
    writeFileSync(path.join(r, 'lib/systemd/system/ssh.service'), '[Unit]\n');
    symlinkSync('/lib/systemd/system/ssh.service', path.join(r, 'etc/systemd/system/multi-user.target.wants/ssh.service'));
    symlinkSync('/lib/systemd/system/ssh.service', path.join(r, 'etc/systemd/system/sshd.service'));
    const v = new DirView(r);
    expect(enablementLinks(v, 'ssh')).toEqual(['/etc/systemd/system/multi-user.target.wants/ssh.service']);
    expect(enablementLinks(v, 'sshd')).toHaveLength(1);
    expect(enablementLinks(v, 'containerd')).toEqual([]);
    writeFileSync(path.join(r, 'usr/bin/real'), '#!/bin/sh\n', { mode: 0o755 });
    symlinkSync('/usr/bin/real', path.join(r, 'usr/bin/alias')); // absolute: must resolve inside the root
    symlinkSync('usr/bin', path.join(r, 'bin'));
    expect(findCommand(v, 'alias')).toBe('/usr/bin/alias');
    expect(findCommand(v, 'sh')).toBeUndefined(); // the host has /bin/sh; the root does not
  });

  it('reads sysctl settings and active swap lines', () => {
    const r = root();
    writeFileSync(path.join(r, 'etc/sysctl.d/99-x.conf'), '# c\nnet.ipv4.ip_forward=1\n  vm.swappiness = 10 \n; other\n');
    writeFileSync(path.join(r, 'etc/fstab'), '/dev/sda1 / ext4 defaults 0 1\n#/swapfile none swap sw 0 0\nUUID=x none swap sw 0 0\n');
    const v = new DirView(r);
    expect([...sysctlSettings(v, '/etc/sysctl.d/99-x.conf')]).toEqual([
      ['net.ipv4.ip_forward', '1'],
      ['vm.swappiness', '10'],
    ]);
    expect(activeSwapLines(v)).toEqual(['UUID=x none swap sw 0 0']);
  });

  it('parses debugfs stat output, setuid bits included', () => {
    const text = 'Inode: 498   Type: regular    Mode:  04755   Flags: 0x80000\nGeneration: 0    Version: 0x00000000:00000000\nUser:     0   Group:    42   Project:     0   Size: 68248\n';
    expect(parseDebugfsStat(text)).toEqual({ type: 'file', mode: 0o4755, uid: 0, gid: 42 });
    expect(parseDebugfsStat('stat: File not found by ext2_lookup')).toBeUndefined();
  });
});

describe('base resolution', () => {
  const debian: Base = { name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm', variant: 'minbase', packageManager: 'apt', include: [], provides: [] };
  const env = { IMGC_MIRROR: 'http://mirror.example/debian' };

  it('refuses Ubuntu bases clearly, pointing at --from-tar/--from-dir', async () => {
    const ubuntu: Base = { ...debian, name: 'ubuntu-22.04', distro: 'ubuntu', release: '22.04', suite: 'jammy' };
    await expect(resolveBase(ubuntu, { env })).rejects.toThrow(/ubuntu jammy: it cannot be debootstrapped from this machine's Debian mirror.*--from-tar FILE or --from-dir DIR/);
  });

  it('keys debootstrap by the mirror, a tarball by its content, and a directory not at all', async () => {
    const a = await resolveBase(debian, { env });
    const b = await resolveBase(debian, { env: { IMGC_MIRROR: 'http://other.example/debian' } });
    expect(a.kind).toBe('debootstrap');
    expect(a.key).not.toBe(b.key);
    const dir = tempDir('base');
    writeFileSync(path.join(dir, 'one.tar'), 'one');
    writeFileSync(path.join(dir, 'two.tar'), 'two');
    const t1 = await resolveBase(debian, { fromTar: path.join(dir, 'one.tar') });
    expect(t1.kind).toBe('tar');
    expect((await resolveBase(debian, { fromTar: path.join(dir, 'one.tar') })).key).toBe(t1.key);
    expect((await resolveBase(debian, { fromTar: path.join(dir, 'two.tar') })).key).not.toBe(t1.key);
    mkdirSync(path.join(dir, 'root/etc'), { recursive: true });
    mkdirSync(path.join(dir, 'root/usr'));
    expect(await resolveBase(debian, { fromDir: path.join(dir, 'root') })).toMatchObject({ kind: 'dir', key: undefined });
    await expect(resolveBase(debian, { fromDir: dir })).rejects.toThrow(/not a root filesystem/);
    await expect(resolveBase(debian, { fromTar: path.join(dir, 'missing.tar') })).rejects.toThrow(/no such file/);
  });
});

describe('cache lock', () => {
  it('serialises holders and takes over a lock whose process is gone', async () => {
    const dir = tempDir('lock');
    const order: string[] = [];
    const hold = (name: string, ms: number) =>
      withCacheLock(dir, 'base-x', async () => {
        order.push(`${name}+`);
        await new Promise((r) => setTimeout(r, ms));
        order.push(`${name}-`);
      });
    await Promise.all([hold('a', 300), new Promise((r) => setTimeout(r, 50)).then(() => hold('b', 10))]);
    expect(order).toEqual(['a+', 'a-', 'b+', 'b-']);
    mkdirSync(path.join(dir, 'base-y.lock'));
    writeFileSync(path.join(dir, 'base-y.lock', 'pid'), '999999999');
    await expect(withCacheLock(dir, 'base-y', async () => 'taken over')).resolves.toBe('taken over');
  });
});

describe('cache pruning', () => {
  it('drops phase roots unused for two weeks and keeps bases and recent roots', () => {
    const dir = tempDir('prune');
    const old = new Date(Date.now() - 15 * 86_400_000);
    for (const f of ['phase-aa.tar.zst', 'phase-aa.json', 'phase-bb.tar.zst', 'base-cc.tar.zst']) writeFileSync(path.join(dir, f), '');
    for (const f of ['phase-aa.tar.zst', 'base-cc.tar.zst']) utimesSync(path.join(dir, f), old, old);
    new RootCache(dir).prune();
    expect(readdirSync(dir).sort()).toEqual(['base-cc.tar.zst', 'phase-bb.tar.zst']);
  });
});

describe('unpacked roots in the cache', () => {
  const rootWith = (dir: string, name: string, text: string) => {
    const root = path.join(dir, name);
    mkdirSync(path.join(root, 'etc'), { recursive: true });
    writeFileSync(path.join(root, 'etc', 'hostname'), text);
    return root;
  };

  it('are taken by a rename only for the making of the key they are, and the newest two are kept', async () => {
    const dir = tempDir('unpacked');
    const cache = new RootCache(path.join(dir, 'cache'));
    const key = 'a'.repeat(64);
    const id = await cache.store('phase', key, rootWith(dir, 'made', 'one\n'), {});
    expect(cache.id('phase', key)).toBe(id);
    expect(cache.keep(key, id, path.join(dir, 'made'))).toBe(true);
    expect(existsSync(path.join(dir, 'made'))).toBe(false);

    mkdirSync(path.join(dir, 'work'));
    expect(cache.take(key, path.join(dir, 'work'))).toBe(id);
    expect(readFileSync(path.join(dir, 'work', 'etc', 'hostname'), 'utf8')).toBe('one\n');
    mkdirSync(path.join(dir, 'again'));
    expect(cache.take(key, path.join(dir, 'again'))).toBeUndefined(); // taken: one build at a time

    // The key made again (a --no-cache build): the old unpacked root is not that making.
    expect(cache.keep(key, id, path.join(dir, 'work'))).toBe(true);
    const id2 = await cache.store('phase', key, rootWith(dir, 'remade', 'two\n'), {});
    expect(id2).not.toBe(id);
    expect(cache.take(key, path.join(dir, 'again'))).toBeUndefined();
    const restored = path.join(dir, 'restored');
    mkdirSync(restored);
    expect(await cache.restore('phase', key, restored)).toBe(id2);
    expect(readFileSync(path.join(restored, 'etc', 'hostname'), 'utf8')).toBe('two\n');

    // Kept in the order a (the first making), b, c, a (the second): the two kept last stay.
    const unpacked = (k: string, kid: string) => path.join(cache.dir, `root-${k.slice(0, 32)}-${kid}`);
    const age = (file: string, seconds: number) => utimesSync(file, new Date(Date.now() - seconds * 1000), new Date(Date.now() - seconds * 1000));
    age(unpacked(key, id), 10);
    const kept = { b: '', c: '' };
    for (const [i, k] of (['b', 'c'] as const).entries()) {
      kept[k] = await cache.store('phase', k.repeat(64), rootWith(dir, `r${k}`, k), {});
      expect(cache.keep(k.repeat(64), kept[k], path.join(dir, `r${k}`))).toBe(true);
      age(unpacked(k.repeat(64), kept[k]), 3 - i);
    }
    expect(cache.keep(key, id2, path.join(dir, 'remade'))).toBe(true);
    expect(readdirSync(cache.dir).filter((f) => f.startsWith('root-')).sort()).toEqual([unpacked(key, id2), unpacked('c'.repeat(64), kept.c)].map((f) => path.basename(f)).sort());
  });

  it('an entry stored by an older imgc has no id, so nothing is taken or reused for it', () => {
    const dir = tempDir('unpacked');
    const cache = new RootCache(dir);
    writeFileSync(path.join(dir, `phase-${'d'.repeat(32)}.json`), JSON.stringify({ kind: 'phase', key: 'd'.repeat(64), created: 'then' }));
    expect(cache.id('phase', 'd'.repeat(64))).toBeUndefined();
    mkdirSync(path.join(dir, 'w'));
    expect(cache.take('d'.repeat(64), path.join(dir, 'w'))).toBeUndefined();
  });
});

describe('artifact reuse', () => {
  const step = (over: Partial<StepOf<'artifact'>> = {}): StepOf<'artifact'> =>
    ({ kind: 'artifact', id: 'artifact.1.artifact', format: 'raw', output: 'disk.raw', size: '1G', provides: [], requires: [], removes: [], ...over }) as StepOf<'artifact'>;

  it('an input names the root it was made from and the settings, not the step id or location', () => {
    const a = artifactInput('r1', step());
    expect(artifactInput('r1', step({ id: 'artifact.7.artifact', loc: { file: 'x.ts', line: 3, column: 1 } }))).toBe(a);
    expect(artifactInput('r2', step())).not.toBe(a);
    expect(artifactInput('r1', step({ size: '2G' }))).not.toBe(a);
    expect(artifactInput('r1', step({ output: 'other.raw' }))).not.toBe(a);
  });

  it('a disk stamp changes on any write, mode or new entry, and not when the tree is renamed', () => {
    const dir = tempDir('stamp');
    const tree = path.join(dir, 'staging', 'rootfs');
    mkdirSync(path.join(tree, 'etc'), { recursive: true });
    writeFileSync(path.join(tree, 'etc', 'motd'), 'hi\n');
    const before = diskStamp(tree);
    renameSync(tree, path.join(dir, 'rootfs'));
    const moved = path.join(dir, 'rootfs');
    expect(diskStamp(moved)).toBe(before);
    appendFileSync(path.join(moved, 'etc', 'motd'), 'x');
    const written = diskStamp(moved);
    expect(written).not.toBe(before);
    chmodSync(path.join(moved, 'etc', 'motd'), 0o600);
    expect(diskStamp(moved)).not.toBe(written);
    const chmodded = diskStamp(moved);
    writeFileSync(path.join(moved, 'new'), '');
    expect(diskStamp(moved)).not.toBe(chmodded);
  });
});
