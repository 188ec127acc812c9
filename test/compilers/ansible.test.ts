// The ansible backend on every good example and on a synthetic image with
// every step kind: golden files, structure, and the real tools on the written
// output — ansible-playbook --syntax-check, ansible-lint (production profile,
// warnings fatal), ansible-inventory on inventory.example.
import { execa } from 'execa';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ansibleCompiler } from '../../src/compilers/ansible/index.js';
import { CompileError, type CompiledFiles } from '../../src/compilers/types.js';
import type { Image } from '../../src/ir/schema.js';
import { goodExamples, imgc, irOf } from '../helpers/cli.js';
import { expectGolden } from '../helpers/golden.js';
import { imageOf, parseYaml, phase, run, tasksInOrder, workspace, writeFiles } from './ansible-support.js';

type Task = Record<string, unknown> & { name: string };
type Play = { name: string; hosts: string; gather_facts: boolean; tags: string[]; roles: { role: string }[] };

const listFiles = (dir: string, prefix = ''): string[] =>
  readdirSync(dir).flatMap((f) => (statSync(path.join(dir, f)).isDirectory() ? listFiles(path.join(dir, f), `${prefix}${f}/`) : [`${prefix}${f}`]));

const moduleOf = (t: Task): string => {
  const keys = Object.keys(t).filter((k) => k.includes('.'));
  expect(keys, `one module per task: ${t.name}`).toHaveLength(1);
  return keys[0]!;
};

/** The real tools on a written output directory. */
const realTools = (label: string, get: () => { files: CompiledFiles; out: string; home: string }) => {
  it(`${label}: ansible-playbook --syntax-check passes`, async () => {
    const { out, home } = get();
    const r = await run('ansible-playbook', ['--syntax-check', '-i', 'localhost,', 'site.yml'], out, home);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).not.toMatch(/\[WARNING\]|ERROR/);
  });

  it(`${label}: ansible-lint --profile production is clean (warnings count)`, async () => {
    const { files, out, home } = get();
    const r = await run('ansible-lint', ['--offline', '--profile', 'production', '--strict', '--nocolor', '-p'], out, home);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toMatch(/Passed with production profile: 0 failure\(s\), 0 warning\(s\)/);
    expect(r.all).not.toMatch(/ERROR|Traceback/);
    // It really looked at every YAML file we wrote.
    const yamlFiles = Object.keys(files).filter((f) => f.endsWith('.yml')).length;
    const linted = Number(/on (\d+) files/.exec(r.all)?.[1] ?? 0);
    expect(linted).toBeGreaterThanOrEqual(yamlFiles);
  });

  it(`${label}: inventory.example parses`, async () => {
    const { out, home } = get();
    const r = await run('ansible-inventory', ['-i', 'inventory.example', '--list'], out, home);
    expect(r.exitCode, r.all).toBe(0);
    const inv = JSON.parse(r.stdout) as { chroot: { hosts: string[] }; ssh: { hosts: string[] }; _meta: { hostvars: Record<string, Record<string, string>> } };
    expect(inv.chroot.hosts).toEqual(['/path/to/root']);
    expect(inv._meta.hostvars['/path/to/root']!['ansible_connection']).toBe('community.general.chroot');
    expect(inv.ssh.hosts).toHaveLength(1);
  });

  it(`${label}: the tools wrote nothing into the output directory`, () => {
    const { files, out } = get();
    expect(listFiles(out).sort()).toEqual(Object.keys(files).sort());
  });
};

describe.each(goodExamples())('ansible backend on %s', (file) => {
  const name = path.basename(file, '.ts');
  let ir: Image;
  let files: CompiledFiles;
  const ws = workspace(name);

  beforeAll(async () => {
    ir = await irOf(file);
    files = ansibleCompiler.compile(ir, {});
    writeFiles(ws.out, files);
  });
  afterAll(() => ws.remove());

  it('matches the golden files', () => expectGolden(`${name}/ansible`, files));

  it('is deterministic', () => {
    expect(ansibleCompiler.compile(structuredClone(ir), {})).toEqual(files);
  });

  it('has a play per phase with tasks, in IR order, tagged with the phase, and a role per play', () => {
    const plays = parseYaml(files['site.yml']!) as Play[];
    const withTasks = ir.phases.filter((p) => p.pre.length + p.post.length + p.steps.filter((s) => !['artifact', 'cloudImage', 'verify'].includes(s.kind)).length > 0);
    expect(plays.map((p) => p.tags)).toEqual(withTasks.map((p) => [p.name]));
    for (const [i, p] of plays.entries()) {
      expect(p.hosts).toBe('all');
      expect(p.gather_facts).toBe(false);
      expect(p.roles).toEqual([{ role: withTasks[i]!.name.replace(/-/g, '_') }]);
      expect(files[`roles/${p.roles[0]!.role}/tasks/main.yml`]).toBeDefined();
    }
    // Phases with nothing to run are named in site.yml's header, with their steps.
    for (const p of ir.phases.filter((q) => !withTasks.includes(q))) {
      expect(files['site.yml']).toContain(`#   ${p.name}:`);
      for (const s of p.steps) expect(files['site.yml']).toContain(`#     ${s.id}: `);
    }
    // Then the non-sensitive variables' values (none in the reference example but its sensitive join_token; test/variables.test.ts has more); sensitive ones never.
    const defaults = Object.fromEntries((ir.variables ?? []).filter((v) => !v.sensitive).map((v) => [v.name, Array.isArray(v.value) ? v.value : String(v.value)]));
    expect(parseYaml(files['group_vars/all.yml']!)).toEqual({ imgc_image: ir.name, imgc_base: ir.base.name, imgc_source: ir.source, ...defaults });
  });

  it('names every step in task names (unique per play) and uses fully qualified modules', () => {
    for (const p of ir.phases) {
      const f = files[`roles/${p.name.replace(/-/g, '_')}/tasks/main.yml`];
      if (f === undefined) continue;
      const tasks = tasksInOrder<Task>(f);
      const names = tasks.map((t) => t.name);
      expect(new Set(names).size).toBe(names.length);
      for (const s of [...p.pre, ...p.steps, ...p.post].filter((x) => !['artifact', 'cloudImage', 'verify'].includes(x.kind)))
        expect(names.some((n) => n.includes(`(${s.id}, ${s.loc!.file}:${s.loc!.line})`)), s.id).toBe(true);
      // community.general: filesize empties files (the chroot connection needs the collection anyway).
      for (const t of tasks) expect(moduleOf(t)).toMatch(/^(ansible\.(builtin|posix)|community\.general)\./);
    }
  });

  it('`imgc compile --target ansible` writes the same files', async () => {
    const dir = path.join(ws.root, 'cli');
    const r = await imgc(['compile', file, '--target', 'ansible', '--out', dir]);
    expect(r.exitCode, r.all).toBe(0);
    expect(listFiles(dir).sort()).toEqual(Object.keys(files).sort());
  });

  realTools(name, () => ({ files, out: ws.out, home: ws.home }));
});

/** Every step kind and hook type, with awkward values, in four phases. */
export const everyKind = (): Image =>
  imageOf([
    phase(
      'customize',
      [
        { kind: 'group', name: 'svc', gid: 990, system: true },
        { kind: 'user', name: 'svc', primaryGroup: 'svc', uid: 990, groups: [], system: true },
        { kind: 'user', name: 'dev', groups: ['svc', 'sudo'], home: '/home/dev', shell: '/bin/bash', system: false },
        { kind: 'directory', path: '/srv/app' },
        { kind: 'directory', path: '/srv/app/data', owner: 'svc', group: 'svc', mode: '750' },
        { kind: 'file', path: '/srv/app/Makefile', content: 'all:\n\techo "$(CC)" {{ not_jinja }}\n', mode: '0644' },
        { kind: 'file', path: '/srv/app/no-mode', content: '' },
        { kind: 'symlink', path: '/srv/app/current', target: '/srv/app/data' },
        { kind: 'aptRepository', name: 'example', uri: 'https://apt.example.com/debian', suites: ['stable'], components: ['main', 'contrib'], key: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF\n-----END PGP PUBLIC KEY BLOCK-----\n', keyPath: '/etc/apt/keyrings/example.asc' },
        { kind: 'packages', action: 'install', names: ['example-tool'] },
        { kind: 'packages', action: 'remove', names: ['nano'] },
        { kind: 'service', name: 'example.socket', enabled: false },
        { kind: 'command', run: 'printf "%s\\n" "$HOME" | tee /srv/app/home', creates: '/srv/app/home', needsMounts: true, description: 'record $HOME' },
        { kind: 'command', run: 'systemctl daemon-reload', needsMounts: false },
      ],
      {
        pre: [
          { kind: 'hook', when: 'pre', action: { type: 'script', run: 'echo "starting {{ phase }}"' } },
          { kind: 'hook', when: 'pre', action: { type: 'webhook', url: 'https://ci.example.com/hook?x={{y}}', timeoutSeconds: 2.5, retries: 3, onFailure: 'warn' } },
        ],
        post: [
          { kind: 'hook', when: 'post', action: { type: 'webhook', url: 'https://ci.example.com/done', timeoutSeconds: 10, retries: 0, onFailure: 'fail' } },
          { kind: 'hook', when: 'post', action: { type: 'event', target: '/var/log/imgc/events.jsonl' }, description: 'log the end' },
        ],
      },
    ),
    phase(
      'post-install',
      [
        { kind: 'sysctl', key: 'vm.swappiness', value: '10', file: '/etc/sysctl.d/90-app.conf' },
        { kind: 'kernelModule', name: 'nf_conntrack', file: '/etc/modules-load.d/app.conf' },
        { kind: 'swapOff' },
      ],
      { runtime: true },
    ),
    phase('artifact', [{ kind: 'artifact', format: 'tar', output: 'root.tar', compression: 'none' }], {
      post: [{ kind: 'hook', when: 'post', action: { type: 'event', target: 'stdout' } }],
    }),
    phase('verify', [
      { kind: 'verify', check: 'facts' },
      { kind: 'command', run: 'test -L /srv/app/current', needsMounts: false, description: 'the link exists' },
    ]),
  ]);

describe('ansible backend on every step kind', () => {
  let files: CompiledFiles;
  const ws = workspace('kinds');
  const tasksOf = (role: string) => tasksInOrder<Task>(files[`roles/${role}/tasks/main.yml`]!);

  beforeAll(() => {
    files = ansibleCompiler.compile(everyKind(), {});
    writeFiles(ws.out, files);
  });
  afterAll(() => ws.remove());

  it('maps each kind to its module', () => {
    const modules = tasksOf('customize').map(moduleOf);
    expect(modules).toEqual([
      'ansible.builtin.shell', // script hook
      'ansible.builtin.command', // webhook (Runtime SDK client)
      'ansible.builtin.debug', // the waits the controller asked for
      'ansible.builtin.debug', // its warning
      'ansible.builtin.group',
      'ansible.builtin.user', // primary group given: no own group
      'ansible.builtin.group', // dev's own group
      'ansible.builtin.user',
      'ansible.builtin.file',
      'ansible.builtin.file',
      'ansible.builtin.copy',
      'ansible.builtin.copy',
      'ansible.builtin.file', // symlink
      'ansible.builtin.copy', // key
      'ansible.builtin.copy', // .sources
      'ansible.builtin.package_facts', // which are installed: the install refreshes the lists only when one is not
      'ansible.builtin.apt',
      'ansible.builtin.apt',
      'ansible.builtin.systemd_service',
      'ansible.builtin.shell',
      'ansible.builtin.shell',
      'ansible.builtin.command', // webhook
      'ansible.builtin.debug', // the waits the controller asked for
      'ansible.builtin.fail', // stops on its answer
      'ansible.builtin.lineinfile', // event to a file
    ]);
    expect(tasksOf('post_install').map(moduleOf)).toEqual(['ansible.builtin.lineinfile', 'ansible.builtin.lineinfile', 'ansible.builtin.replace']);
    expect(tasksOf('artifact').map(moduleOf)).toEqual(['ansible.builtin.debug']);
    expect(tasksOf('verify').map(moduleOf)).toEqual(['ansible.builtin.shell']);
  });

  it('keeps user data verbatim and refreshes apt only where needed', () => {
    const t = tasksOf('customize');
    const by = (id: string) => t.filter((x) => x.name.includes(`(${id},`));
    expect((by('customize.6.file')[0]!['ansible.builtin.copy'] as { content: string }).content).toBe('all:\n\techo "$(CC)" {{ not_jinja }}\n');
    expect((by('customize.9.aptRepository')[1]!['ansible.builtin.copy'] as { content: string }).content).toBe(
      'Types: deb\nURIs: https://apt.example.com/debian\nSuites: stable\nComponents: main contrib\nSigned-By: /etc/apt/keyrings/example.asc\n',
    );
    expect(by('customize.10.packages')[0]).toMatchObject({ 'ansible.builtin.package_facts': { manager: 'auto' } });
    expect(by('customize.10.packages')[1]!['ansible.builtin.apt']).toMatchObject({ install_recommends: false, state: 'present' });
    expect((by('customize.10.packages')[1]!['ansible.builtin.apt'] as { update_cache: string }).update_cache).toMatch(/^\{\{ not \(\(ansible_facts\.packages\['/);
    expect(by('customize.11.packages')[0]!['ansible.builtin.apt']).toEqual({ name: ['nano'], state: 'absent', policy_rc_d: 101 });
    expect(by('customize.12.service')[0]!['ansible.builtin.systemd_service']).toEqual({ name: 'example.socket', enabled: false });
    expect(by('customize.13.command')[0]).toMatchObject({ 'ansible.builtin.shell': { creates: '/srv/app/home', executable: '/bin/sh' } });
    expect(by('customize.13.command')[0]!['changed_when']).toBeUndefined();
    expect(by('customize.14.command')[0]!['changed_when']).toBe(false);
    const [warn, waits, warned] = by('customize.pre2.hook');
    expect(waits).toMatchObject({ 'ansible.builtin.debug': { msg: '{{ item }}' }, run_once: true });
    expect(warn).toMatchObject({ delegate_to: 'localhost', run_once: true, register: 'imgc_webhook', failed_when: false });
    // URL, timeout (rounded up), retries, and the helper always fails: the next task decides.
    expect((warn!['ansible.builtin.command'] as { argv: string[] }).argv.slice(3)).toEqual(['sh', 'https://ci.example.com/hook?x={{y}}', '3', '3', 'fail']);
    expect(warned).toMatchObject({ 'ansible.builtin.debug': {}, when: '(imgc_webhook.rc | default(0)) != 0' });
    const [, , stop] = by('customize.post1.hook');
    expect(stop).toMatchObject({ 'ansible.builtin.fail': { msg: '{{ imgc_webhook.stderr }}' }, when: '(imgc_webhook.rc | default(0)) != 0' });
    // The only templates are the backend's own (a phase with post hooks: its rescue's, naming what failed).
    const failedAt = "ansible_failed_task\\.name ~ ': ' ~ \\(ansible_failed_result\\.msg \\| default\\('failed'\\)\\)";
    const own = new RegExp(`^(imgc_image|imgc_event|imgc_event \\| to_json|imgc_webhook_sh|imgc_webhook\\.stderr|item|imgc_webhook\\.stderr_lines \\| default\\(\\[\\]\\) \\| select\\('search', ' asks to retry after '\\) \\| list|'imgc: warning: ' ~ imgc_webhook\\.stderr ~ '; going on'|now\\(utc=True, fmt='%Y-%m-%dT%H:%M:%SZ'\\)|not \\(\\(ansible_facts\\.packages\\['[a-z0-9+.-]+'\\][^{}]*\\)\\)|${failedAt}|'imgc: phase [a-z0-9-]+ failed at ' ~ ${failedAt})$`);
    for (const f of Object.values(files)) for (const m of f.matchAll(/"\{\{ (.*?) \}\}"/g)) expect(m[1]).toMatch(own);
  });

  it('comments out swap entries in fstab as Ansible\'s replace would, idempotently', async () => {
    const r = tasksOf('post_install')[2]!['ansible.builtin.replace'] as { path: string; regexp: string; replace: string };
    expect(r.path).toBe('/etc/fstab');
    const fstab = [
      '# /etc/fstab',
      'UUID=abc / ext4 errors=remount-ro 0 1',
      'UUID=def none swap sw 0 0',
      '  /swapfile\tnone\tswap\tdefaults 0 0',
      '#/old none swap sw 0 0',
      '/dev/sdb1 /srv/swap ext4 defaults 0 2',
      '',
    ].join('\n');
    const py = 'import re,sys,json\na=json.load(sys.stdin)\nm=re.compile(a["r"],re.MULTILINE)\no=re.subn(m,a["s"],a["t"],0)[0]\np=re.subn(m,a["s"],o,0)\nprint(json.dumps([o,p[0],p[1]]))';
    const out = await execa('/usr/bin/python3', ['-c', py], { input: JSON.stringify({ r: r.regexp, s: r.replace, t: fstab }) });
    const [once, twice, again] = JSON.parse(out.stdout) as [string, string, number];
    expect(once).toBe(
      ['# /etc/fstab', 'UUID=abc / ext4 errors=remount-ro 0 1', '# UUID=def none swap sw 0 0', '#   /swapfile\tnone\tswap\tdefaults 0 0', '#/old none swap sw 0 0', '/dev/sdb1 /srv/swap ext4 defaults 0 2', ''].join('\n'),
    );
    expect(twice).toBe(once);
    expect(again).toBe(0);
  });

  realTools('every kind', () => ({ files, out: ws.out, home: ws.home }));
});

describe('ansible backend refusals', () => {
  const one = (step: Parameters<typeof phase>[1][number]) => imageOf([phase('customize', [step])]);
  const codes = (ir: Image): string[] => {
    try {
      ansibleCompiler.compile(ir, {});
    } catch (e) {
      expect(e).toBeInstanceOf(CompileError);
      return (e as CompileError).diagnostics.map((d) => d.code);
    }
    return [];
  };

  it('refuses NUL in a file body with IMGC2001', () => {
    expect(codes(one({ kind: 'file', path: '/etc/x', content: 'a\u0000b', mode: '0644' }))).toEqual(['IMGC2001']);
  });

  it('refuses an unpaired surrogate (UTF-8 cannot carry it) with IMGC2001', () => {
    expect(codes(one({ kind: 'file', path: '/etc/x', content: 'a\ud800b', mode: '0644' }))).toEqual(['IMGC2001']);
  });

  it('refuses line-oriented values that would break their line with IMGC1004 (the schema)', () => {
    expect(codes(one({ kind: 'sysctl', key: 'a.b', value: '1\nevil = 1', file: '/etc/sysctl.d/x.conf' }))).toEqual(['IMGC1004']);
    expect(codes(one({ kind: 'sysctl', key: 'a.b', value: '1\revil = 1', file: '/etc/sysctl.d/x.conf' }))).toEqual(['IMGC1004']);
    expect(codes(one({ kind: 'sysctl', key: 'a = b', value: '1', file: '/etc/sysctl.d/x.conf' }))).toEqual(['IMGC1004']);
    expect(codes(one({ kind: 'kernelModule', name: 'a b', file: '/etc/modules-load.d/x.conf' }))).toEqual(['IMGC1004']);
    expect(codes(one({ kind: 'aptRepository', name: 'x', uri: 'https://a.example/', suites: ['a b'], components: [] }))).toEqual(['IMGC1004']);
    expect(codes(one({ kind: 'aptRepository', name: 'x', uri: 'https://a.example/\nTypes: deb-src', suites: ['a'], components: [] }))).toEqual(['IMGC1004']);
    expect(codes(one({ kind: 'aptRepository', name: 'x', uri: 'https://a.example/', suites: ['a'], components: ['main\n'] }))).toEqual(['IMGC1004']);
    expect(codes(one({ kind: 'aptRepository', name: 'x', uri: 'https://a.example/', suites: ['a'], components: [], keyUrl: 'https://a.example/k', keyPath: '/etc/k\n' }))).toEqual(['IMGC1004']);
  });

  it('reports the schema\'s IMGC1004 at the step\'s source location, naming the field', () => {
    const ir = one({ kind: 'sysctl', key: 'a.b', value: '1\nevil = 1', file: '/etc/sysctl.d/x.conf' });
    let thrown: unknown;
    try {
      ansibleCompiler.compile(ir, {});
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CompileError);
    const [d, ...rest] = (thrown as CompileError).diagnostics;
    expect(rest).toEqual([]);
    expect(d).toMatchObject({ code: 'IMGC1004', loc: { file: 'test.ts', line: 10, column: 3 } });
    expect(d!.message).toMatch(/^invalid phases\.0\.steps\.0\.value: .*no line breaks/);
  });

  it('refuses a hook among a phase\'s steps with IMGC1004 (the schema)', () => {
    expect(codes(one({ kind: 'hook', when: 'pre', action: { type: 'event', target: 'stdout' } }))).toEqual(['IMGC1004']);
  });

  it('refuses an apt repository on a dnf base with IMGC1004 (the schema: no target can add one)', () => {
    const ir = one({ kind: 'aptRepository', name: 'x', uri: 'https://a.example/', suites: ['stable'], components: [] });
    expect(codes({ ...ir, base: { ...ir.base, packageManager: 'dnf' } })).toEqual(['IMGC1004']);
  });

  it('carries a sysctl value with Unicode line separators, which are not line breaks for sysctl.d', () => {
    const value = 'a\u2028b\u2029c\u0085d';
    const files = ansibleCompiler.compile(one({ kind: 'sysctl', key: 'a.b', value, file: '/etc/sysctl.d/x.conf' }), {});
    const [t] = parseYaml(files['roles/customize/tasks/main.yml']!) as Task[];
    expect((t!['ansible.builtin.lineinfile'] as { line: string }).line).toBe(`a.b = ${value}`);
  });

  it('uses the dnf module on a dnf base', () => {
    const ir = one({ kind: 'packages', action: 'install', names: ['vim'] });
    const files = ansibleCompiler.compile({ ...ir, base: { ...ir.base, packageManager: 'dnf' } }, {});
    const [facts, t] = parseYaml(files['roles/customize/tasks/main.yml']!) as Task[];
    expect(facts!['ansible.builtin.package_facts']).toEqual({ manager: 'auto' });
    expect(t!['ansible.builtin.dnf']).toEqual({ name: ['vim'], state: 'present', install_weak_deps: false, update_cache: "{{ not ((ansible_facts.packages['vim'] is defined)) }}" });
  });
});

describe('ansible group_vars', () => {
  it('keeps numbers and booleans typed, as Ansible (PyYAML, YAML 1.1) and the yaml package read them', async () => {
    const ir = structuredClone(await irOf('examples/node-image.ts'));
    const extra = [
      { name: 'max_pods', type: 'number', sensitive: false, value: 110 },
      { name: 'eviction_ratio', type: 'number', sensitive: false, value: 1e-7 },
      { name: 'big', type: 'number', sensitive: false, value: 1e21 },
      { name: 'hardened', type: 'boolean', sensitive: false, value: true },
      { name: 'looks_numeric', type: 'string', sensitive: false, value: '1.30' },
    ] as const;
    ir.variables = [...(ir.variables ?? []), ...extra];
    const text = ansibleCompiler.compile(ir, {})['group_vars/all.yml']!;
    const read = parseYaml(text) as Record<string, unknown>;
    const want = Object.fromEntries(extra.map((v) => [v.name, v.value]));
    expect(Object.fromEntries(extra.map((v) => [v.name, read[v.name]]))).toEqual(want);
    const py = await execa('python3', ['-c', 'import json, sys, yaml\nclass L(yaml.SafeLoader): pass\nL.add_constructor("!unsafe", lambda l, n: l.construct_scalar(n))\nprint(json.dumps(yaml.load(sys.stdin, Loader=L)))'], { input: text });
    const fromPython = JSON.parse(py.stdout) as Record<string, unknown>;
    expect(Object.fromEntries(extra.map((v) => [v.name, fromPython[v.name]]))).toEqual(want);
  });
});
