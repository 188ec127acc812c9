// The shell backend on every good example: golden files, shellcheck on the
// real written files, the structure a runner relies on; and what it refuses.
import { execa } from 'execa';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import { CompileError, type CompiledFiles } from '../../src/compilers/types.js';
import type { Image } from '../../src/ir/schema.js';
import { goodExamples, imgc, irOf, tempDir } from '../helpers/cli.js';
import { expectGolden } from '../helpers/golden.js';
import { imageOf, phase, step, writeFiles } from './shell-support.js';

const emittedKinds = new Set(['user', 'group', 'directory', 'file', 'symlink', 'packages', 'aptRepository', 'service', 'sysctl', 'kernelModule', 'swapOff', 'command']);

describe.each(goodExamples())('shell backend: %s', (file) => {
  const name = path.basename(file, '.ts');
  let ir: Image;
  let files: CompiledFiles;
  let dir: string;
  beforeAll(async () => {
    ir = await irOf(file);
    files = shellCompiler.compile(ir, {});
    dir = tempDir(`shell-${name}`);
    writeFiles(dir, files);
  });

  it('matches the golden files', () => {
    expectGolden(`${name}/shell`, files);
  });

  it('is deterministic', () => {
    expect(shellCompiler.compile(structuredClone(ir), {})).toEqual(files);
  });

  it('emits build.sh, one script per phase and hook scripts where there are hooks', () => {
    const width = Math.max(2, String(ir.phases.length).length);
    const expected = ['build.sh'];
    ir.phases.forEach((p, i) => {
      const stem = `${String(i + 1).padStart(width, '0')}-${p.name}`;
      expected.push(`phases/${stem}.sh`);
      if (p.pre.length) expected.push(`hooks/${stem}-pre.sh`);
      if (p.post.length) expected.push(`hooks/${stem}-post.sh`);
    });
    expect(Object.keys(files).sort()).toEqual(expected.sort());
    for (const [rel, text] of Object.entries(files)) {
      expect(text.startsWith('#!/bin/sh\n'), rel).toBe(true);
      expect(text.endsWith('\n'), rel).toBe(true);
      expect(text, `${rel} never uses echo`).not.toMatch(/^\s*echo\b|[;&|]\s*echo\b/m);
      expect(text, `${rel} has no heredoc`).not.toMatch(/<<-?\s*\S/);
    }
  });

  it('runs every root step, and only those, each with its id and source location', () => {
    ir.phases.forEach((p, i) => {
      const script = files[`phases/${String(i + 1).padStart(2, '0')}-${p.name}.sh`]!;
      expect(script).toContain('\nset -eu\n');
      const runs = [...script.matchAll(/^imgc_run (\S+) step_\d+$/gm)].map((m) => m[1]);
      expect(runs).toEqual(p.steps.filter((s) => emittedKinds.has(s.kind)).map((s) => s.id));
      for (const s of p.steps) {
        const at = s.loc ? ` (${s.loc.file}:${s.loc.line})` : '';
        expect(script, `${s.id} is named with its location`).toContain(`# ${emittedKinds.has(s.kind) ? '' : '  '}${s.id}${at}: `);
      }
      expect(script).toMatch(new RegExp(`^printf 'imgc-phase %s done changed=(%s|0)\\\\n' ${p.name}`, 'm'));
    });
  });

  it('passes shellcheck -s sh at severity style, on the written files', async () => {
    const scripts = Object.keys(files).filter((f) => f.endsWith('.sh'));
    const r = await execa('shellcheck', ['-s', 'sh', '-S', 'style', '-f', 'gcc', ...scripts], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });

  it('parses with sh -n and bash --posix -n', async () => {
    for (const f of Object.keys(files)) {
      for (const [cmd, args] of [['sh', ['-n']], ['bash', ['--posix', '-n']]] as const) {
        const r = await execa(cmd, [...args, path.join(dir, f)], { reject: false });
        expect(r.stderr, `${cmd} ${f}`).toBe('');
        expect(r.exitCode).toBe(0);
      }
    }
  });

  it('build.sh refuses an unknown phase before touching anything', async () => {
    const r = await execa('sh', [path.join(dir, 'build.sh'), '--phase', 'no-such-phase'], { reject: false, env: { IMGC_ROOT: path.join(dir, 'missing') } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('imgc: no phase no-such-phase; phases: ');
  });
});

describe('shell backend: every step kind and hook type', () => {
  const hook = (id: string, when: 'pre' | 'post', action: Record<string, unknown>) => step({ id, kind: 'hook', when, action });
  const ir = imageOf([
    phase(
      'customize',
      [
        step({ id: 'customize.1.group', kind: 'group', name: 'docker', gid: 998, system: true }),
        step({ id: 'customize.2.user', kind: 'user', name: 'svc', uid: 990, primaryGroup: 'docker', groups: [], system: true }),
        step({ id: 'customize.3.user', kind: 'user', name: 'dev', groups: ['docker'], home: '/srv/dev', system: false }),
        step({ id: 'customize.4.symlink', kind: 'symlink', path: '/usr/local/bin/vi', target: "/usr/bin/it's vim" }),
        step({ id: 'customize.5.file', kind: 'file', path: '/etc/motd', content: "it's $HOME `id` ${x} %{y} {{ z }} {% if %}\\\n\tno newline" }),
        step({ id: 'customize.6.aptRepository', kind: 'aptRepository', name: 'example', uri: 'https://example.org/debian/', suites: ['bookworm', 'bookworm-updates'], components: ['main', 'contrib'], key: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF\n-----END PGP PUBLIC KEY BLOCK-----\n', keyPath: '/etc/apt/keyrings/example.asc' }),
        step({ id: 'customize.7.packages', kind: 'packages', action: 'remove', names: ['nano'] }),
        step({ id: 'customize.8.service', kind: 'service', name: 'apt-daily.timer', enabled: false }),
        step({ id: 'customize.9.command', kind: 'command', description: 'build the locale', run: "sed -i 's/^# *en_US.UTF-8/en_US.UTF-8/' /etc/locale.gen\nlocale-gen", creates: '/usr/lib/locale/locale-archive', needsMounts: true }),
      ],
      {
        pre: [hook('customize.pre1.hook', 'pre', { type: 'webhook', url: 'https://hooks.example.org/build?x=1&y=2', timeoutSeconds: 2.5, retries: 3, onFailure: 'warn' })],
        post: [
          hook('customize.post1.hook', 'post', { type: 'script', run: "test -s /etc/motd\necho 'done' >/dev/null" }),
          hook('customize.post2.hook', 'post', { type: 'event', target: '/var/log/imgc events.jsonl' }),
        ],
      },
    ),
    phase('verify', [step({ id: 'verify.1.command', kind: 'command', run: 'getent passwd dev', needsMounts: false })]),
  ]);
  const files = shellCompiler.compile(ir, {});

  it('matches the golden files', () => {
    expectGolden('shell-every-kind/shell', files);
  });

  it('passes shellcheck -s sh at severity style', async () => {
    const dir = tempDir('shell-every-kind');
    writeFiles(dir, files);
    const scripts = Object.keys(files).filter((f) => f.endsWith('.sh'));
    const r = await execa('shellcheck', ['-s', 'sh', '-S', 'style', '-f', 'gcc', ...scripts], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });
});

describe('shell backend refuses what it cannot carry', () => {
  const refused = (ir: Image): string[] => {
    try {
      shellCompiler.compile(ir, {});
    } catch (e) {
      expect(e).toBeInstanceOf(CompileError);
      return (e as CompileError).diagnostics.map((d) => `${d.code} ${d.message}`);
    }
    return expect.fail('compile did not refuse');
  };
  const one = (s: Record<string, unknown>) => imageOf([phase('customize', [step({ id: 'customize.1.x', ...s })])]);

  it('NUL in a file body (IMGC2001)', () => {
    expect(refused(one({ kind: 'file', path: '/etc/x', content: 'a\u0000b' }))[0]).toMatch(/^IMGC2001 .*U\+0000/);
  });

  it('a lone surrogate, which has no UTF-8 bytes', () => {
    expect(refused(one({ kind: 'file', path: '/etc/x', content: 'a\ud800b' }))[0]).toMatch(/^IMGC2001 .*lone UTF-16 surrogate/);
  });

  it('values that must stay on one line of a file, and keys that could not be found again', () => {
    expect(refused(one({ kind: 'sysctl', key: 'a b', value: '1', file: '/etc/sysctl.d/x.conf' }))[0]).toContain('sysctl key');
    expect(refused(one({ kind: 'sysctl', key: 'a.b', value: '1\n2', file: '/etc/sysctl.d/x.conf' }))[0]).toContain('line break');
    expect(refused(one({ kind: 'kernelModule', name: 'a\nb', file: '/etc/modules-load.d/x.conf' }))[0]).toContain('kernel module name');
    expect(refused(one({ kind: 'aptRepository', name: 'a/../b', uri: 'https://example.org/', suites: ['x'], components: [] }))[0]).toContain('apt source name');
  });

  it('step ids the progress lines cannot carry', () => {
    expect(refused(one({ id: 'a b', kind: 'swapOff' }))[0]).toContain("step id 'a b'");
  });

  it('packages on a base whose package manager it does not drive yet', () => {
    const ir = one({ kind: 'packages', action: 'install', names: ['vim'] });
    expect(refused({ ...ir, base: { ...ir.base, packageManager: 'dnf' } })[0]).toContain("package manager 'dnf'");
    // Without package steps the same base compiles.
    const plain = one({ kind: 'swapOff' });
    expect(Object.keys(shellCompiler.compile({ ...plain, base: { ...plain.base, packageManager: 'dnf' } }, {}))).toContain('phases/01-customize.sh');
  });
});

describe('imgc compile --target shell with a NUL in a file body', () => {
  it('exits 1 with IMGC2001 and writes no output directory', async () => {
    const dir = tempDir('shell-nul');
    const def = path.join(dir, 'nul.ts');
    writeFileSync(
      def,
      [
        "import { debian12, image } from 'imgc';",
        '',
        "export default image('nul-body')",
        '  .base(debian12())',
        "  .customize((p) => p.file('/etc/binary', { content: 'a\\u0000b' }));",
        '',
      ].join('\n'),
    );
    const out = path.join(dir, 'out');
    const r = await imgc(['compile', def, '--target', 'shell', '--out', out]);
    expect(r.all).toContain('IMGC2001');
    expect(r.all).not.toContain('IMGC1001');
    expect(r.all).toContain('nul.ts:5');
    expect(r.exitCode).toBe(1);
    expect(existsSync(out)).toBe(false);
  });
});
