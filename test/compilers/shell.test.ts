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
import { kinds } from '../../src/steps/index.js';
import { expectGolden } from '../helpers/golden.js';
import { imageOf, phase, step, uncheckedImageOf, writeFiles } from './shell-support.js';

const emittedKinds = new Set(['user', 'group', 'directory', 'file', 'symlink', 'packages', 'aptRepository', 'service', 'sysctl', 'kernelModule', 'swapOff', 'command', ...Object.entries(kinds).filter(([, k]) => k.inRoot).map(([n]) => n)]);

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
    expected.push('phases/helpers.sh');
    expect(Object.keys(files).sort()).toEqual(expected.sort());
    for (const [rel, text] of Object.entries(files)) {
      expect(text.startsWith(rel === 'phases/helpers.sh' ? '# shellcheck shell=sh\n' : '#!/bin/sh\n'), rel).toBe(true);
      expect(text.endsWith('\n'), rel).toBe(true);
      expect(text, `${rel} never uses echo`).not.toMatch(/^\s*echo\b|[;&|]\s*echo\b/m);
      expect(text, `${rel} has no heredoc`).not.toMatch(/<<-?\s*\S/);
    }
  });

  it('runs every root step, and only those, each with its id and source location', () => {
    ir.phases.forEach((p, i) => {
      const script = files[`phases/${String(i + 1).padStart(2, '0')}-${p.name}.sh`]!;
      expect(script).toContain('\nset -eu\n');
      const runs = [...script.matchAll(/^(?:  )?imgc_run (\S+) step_\d+$/gm)].map((m) => m[1]);
      expect(runs).toEqual(p.steps.filter((s) => emittedKinds.has(s.kind)).map((s) => s.id));
      for (const s of p.steps) {
        const at = s.loc ? ` (${s.loc.file}:${s.loc.line})` : '';
        expect(script, `${s.id} is named with its location`).toContain(`# ${emittedKinds.has(s.kind) ? '' : '  '}${s.id}${at}: `);
      }
      expect(script).toMatch(new RegExp(`^printf 'imgc-phase %s done changed=(%s|0)\\\\n' ${p.name}`, 'm'));
    });
  });

  it('writes the runtime and each helper function once, in phases/helpers.sh, which every phase script with steps sources', () => {
    const defs = Object.entries(files).flatMap(([rel, text]) => [...text.matchAll(/^(imgc_[a-z_]+)\(\) \{$/gm)].map((m) => `${rel}: ${m[1]}`));
    const inPhases = defs.filter((d) => d.startsWith('phases/') && !d.startsWith('phases/helpers.sh'));
    expect(inPhases).toEqual([]);
    const helpers = defs.filter((d) => d.startsWith('phases/helpers.sh'));
    expect(helpers).toContain('phases/helpers.sh: imgc_run');
    expect(new Set(helpers).size).toBe(helpers.length);
    for (const [rel, text] of Object.entries(files))
      if (/^phases\/\d+-/.test(rel) && /^imgc_run /m.test(text)) expect(text, rel).toContain('\n. "$imgc_here/helpers.sh"\n');
  });

  it('passes shellcheck -s sh at severity style, on the written files', async () => {
    const scripts = Object.keys(files).filter((f) => f.endsWith('.sh'));
    const r = await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', '-S', 'style', '-f', 'gcc', ...scripts], { cwd: dir, reject: false });
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
    const r = await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', '-S', 'style', '-f', 'gcc', ...scripts], { cwd: dir, reject: false });
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
  // Not checked against the schema: compile() itself must refuse what it does not accept.
  const one = (s: Record<string, unknown>) => uncheckedImageOf([phase('customize', [step({ id: 'customize.1.x', ...s })])]);
  const only = (re: RegExp) => [expect.stringMatching(re)];
  const sysctl = (key: string, value: string) => one({ kind: 'sysctl', key, value, file: '/etc/sysctl.d/x.conf' });
  const repo = (fields: Record<string, unknown>) => one({ kind: 'aptRepository', name: 'x', uri: 'https://example.org/', suites: ['x'], components: [], ...fields });

  it('NUL in a file body (IMGC2001, the central pass)', () => {
    expect(refused(one({ kind: 'file', path: '/etc/x', content: 'a\u0000b' }))[0]).toMatch(/^IMGC2001 .*U\+0000/);
  });

  it('a lone surrogate, which has no UTF-8 bytes (IMGC2001, the central pass, naming the field)', () => {
    expect(refused(one({ kind: 'file', path: '/etc/x', content: 'a\ud800b' }))).toEqual(only(/^IMGC2001 phases\[0\]\.steps\[0\]\.content contains a lone UTF-16 surrogate \(U\+D800\)/));
    expect(refused(one({ kind: 'symlink', path: '/etc/x', target: '\udc00' }))).toEqual(only(/^IMGC2001 phases\[0\]\.steps\[0\]\.target contains a lone UTF-16 surrogate \(U\+DC00\)/));
    const ir = one({ kind: 'swapOff' });
    expect(refused({ ...ir, base: { ...ir.base, release: '12\ud83d' } })).toEqual(only(/^IMGC2001 base\.release contains a lone UTF-16 surrogate/));
    // A surrogate pair is one astral character, and compiles.
    expect(Object.keys(shellCompiler.compile(one({ kind: 'file', path: '/etc/x', content: '\ud83d\ude00' }), {}))).toContain('phases/01-customize.sh');
  });

  it('values that must stay on one line of a file, and keys that could not be found again (IMGC1004, the schema)', () => {
    expect(refused(sysctl('a b', '1'))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.key: sysctl keys look like net\.ipv4\.ip_forward/));
    expect(refused(sysctl('a=b', '1'))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.key: sysctl keys/));
    expect(refused(sysctl('a.b', '1\n2'))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.value: .*no line breaks/));
    expect(refused(sysctl('a.b', '1\r'))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.value: .*no line breaks/));
    expect(refused(one({ kind: 'kernelModule', name: 'a\nb', file: '/etc/modules-load.d/x.conf' }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.name: kernel module names/));
    expect(refused(repo({ name: 'a/../b' }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.name: apt source names .*apt ignores other/));
    expect(refused(repo({ uri: 'https://example.org/\nTypes: deb-src' }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.uri: .*one word/));
    expect(refused(repo({ suites: ['x\ny'] }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.suites\.0: .*one word/));
    expect(refused(repo({ components: ['main contrib'] }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.components\.0: .*one word/));
    expect(refused(repo({ key: 'k', keyPath: '/etc/apt/keyrings/x\n.asc' }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.keyPath: .*one word/));
  });

  it('a supplementary group name with "," (it separates useradd --groups)', () => {
    expect(refused(one({ kind: 'user', name: 'dev', groups: ['a,b'], system: false }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.groups\.0: user and group names/));
  });

  it('step ids the progress lines cannot carry', () => {
    expect(refused(one({ id: 'a b', kind: 'swapOff' }))).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.id: step ids are one word/));
  });

  it('a hook among a phase\'s steps', () => {
    expect(refused(one({ kind: 'hook', when: 'pre', action: { type: 'event', target: 'stdout' } }))).toEqual(
      only(/^IMGC1004 invalid phases\.0\.steps\.0\.kind: a hook belongs in its phase's pre or post hooks/),
    );
  });

  it('an apt repository on a base that is not apt-based (IMGC1004, whatever the target)', () => {
    const ir = repo({});
    expect(refused({ ...ir, base: { ...ir.base, packageManager: 'dnf' } })).toEqual(only(/^IMGC1004 invalid phases\.0\.steps\.0\.kind: an apt repository cannot be added to a dnf base/));
  });

  it('packages on a base whose package manager it does not drive yet (IMGC2002, the target)', () => {
    const ir = one({ kind: 'packages', action: 'install', names: ['vim'] });
    expect(refused({ ...ir, base: { ...ir.base, packageManager: 'dnf' } })).toEqual(only(/^IMGC2002 the shell backend cannot drive the package manager 'dnf'/));
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
