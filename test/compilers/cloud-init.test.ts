// The cloud-init backend on every good example and on an image with every
// step kind: golden files, Debian's `cloud-init schema` (errors and
// deprecations both fail), the structure the `yaml` package and cloud-init's
// own loader read, shellcheck on the runcmd/bootcmd scripts cloud-init makes
// of it, cloud-init's write_files writing the files, the runcmd script run
// twice against a scratch directory, its hooks against a server on
// 127.0.0.1; and what compile refuses.
import { execa } from 'execa';
import { runsUnder, valuesOf } from '../../src/core/conditions.js';
import { existsSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudInitCompiler, hostnameOf } from '../../src/compilers/cloud-init/index.js';
import { dependsOn, plan, type Item } from '../../src/compilers/cloud-init/plan.js';
import { compilers } from '../../src/compilers/index.js';
import { CompileError, type CompiledFiles } from '../../src/compilers/types.js';
import type { Image, Phase, Step } from '../../src/ir/schema.js';
import { goodExamples, imgc, irOf } from '../helpers/cli.js';
import { expectGolden } from '../helpers/golden.js';
import { LITERAL_NOTE } from '../../src/emit/shell/quote.js';
import { CLOUD_INIT, cloudInitView, fact, type Cfg, imageOf, parseYaml, phase, python, run, step, uncheckedImageOf, workspace, writeFiles } from './cloud-init-support.js';

/** `cloud-init schema` must say exactly "Valid cloud-config": a deprecation is printed, and exits 0, in 22.4. */
const expectSchemaClean = async (dir: string, home: string, file = 'user-data'): Promise<void> => {
  for (const extra of [[], ['--annotate']]) {
    const r = await run(CLOUD_INIT, ['schema', '--config-file', file, ...extra], { cwd: dir, home });
    expect({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }, `cloud-init schema ${extra.join(' ')}`).toEqual({
      exitCode: 0,
      stdout: `Valid cloud-config: ${file}`,
      stderr: '',
    });
  }
};

const shellcheck = async (dir: string, scripts: string[]): Promise<void> => {
  if (!scripts.length) return;
  const r = await execa('shellcheck', ['-s', 'sh', '-S', 'style', '-f', 'gcc', ...scripts], { cwd: dir, reject: false });
  expect(r.stdout + r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  for (const s of scripts) {
    const n = await execa('sh', ['-n', s], { cwd: dir, reject: false });
    expect(n.stderr, `sh -n ${s}`).toBe('');
  }
};

/** The step ids named by the comments of a top-level section, in order. */
const idsIn = (userData: string, section: string): string[] => {
  const m = new RegExp(`^${section}:\\n((?:(?: .*)?\\n)*)`, 'm').exec(userData);
  return m ? [...m[1]!.matchAll(/^ {2}# ([a-z0-9-]+\.[A-Za-z0-9._-]+) \(/gm)].map((x) => x[1]!) : [];
};

/** How many runs of ascending definition order `ids` makes. */
const ascendingRuns = (ids: string[], order: string[]): number =>
  ids.reduce((runs, id, i) => (i > 0 && order.indexOf(id) < order.indexOf(ids[i - 1]!) ? runs + 1 : runs), ids.length ? 1 : 0);

const rootKinds = new Set(['user', 'group', 'directory', 'file', 'symlink', 'packages', 'aptRepository', 'service', 'sysctl', 'kernelModule', 'swapOff', 'command']);
const compiledPhases = (ir: Image): Phase[] => ir.phases.filter((p) => p.name !== 'artifact' && p.name !== 'verify');
/** The ids cloud-init carries out: steps the compile-time values do not take are left out (docs/conditions.md). */
const itemIds = (ir: Image): string[] => {
  const values = valuesOf(ir.variables);
  return compiledPhases(ir).flatMap((p) => [...p.pre, ...p.steps.filter((s) => runsUnder(s.conditions, values)), ...p.post].map((s) => s.id));
};

/** Checks shared by every compiled image. */
const commonChecks = (getIr: () => Image, getFiles: () => CompiledFiles, ws: ReturnType<typeof workspace>) => {
  let view: Cfg;
  beforeAll(async () => {
    writeFiles(ws.out, getFiles());
    view = await cloudInitView(ws.out, ws.home);
  });

  it('writes user-data starting with #cloud-config (never a template) and NoCloud meta-data', () => {
    const files = getFiles();
    expect(Object.keys(files).sort()).toEqual(['meta-data', 'user-data']);
    const ud = files['user-data']!;
    expect(ud.startsWith('#cloud-config\n')).toBe(true);
    expect(ud.endsWith('\n')).toBe(true);
    expect(ud).not.toMatch(/^## template/m);
    expect(ud).not.toMatch(/mime-version:/i);
    const ir = getIr();
    expect(parseYaml(files['meta-data']!)).toEqual({ 'instance-id': `imgc-${hostnameOf(ir.name)}`, 'local-hostname': hostnameOf(ir.name) });
  });

  it('is deterministic', () => {
    expect(cloudInitCompiler.compile(structuredClone(getIr()), {})).toEqual(getFiles());
  });

  it('passes `cloud-init schema` (22.4) without errors or deprecations', async () => {
    await expectSchemaClean(ws.out, ws.home);
  });

  it('reads the same with the yaml package (1.2 and 1.1) as with cloud-init\'s loader', () => {
    const ud = getFiles()['user-data']!;
    expect(parseYaml(ud)).toEqual(view);
    expect(parseYaml(ud, '1.1')).toEqual(view);
  });

  it('names every root step and hook of phases 1-2 once, each section in definition order', () => {
    const ir = getIr();
    const ud = getFiles()['user-data']!;
    const want = itemIds(ir);
    const names = ['bootcmd', 'write_files', 'groups', 'users', 'packages', 'runcmd'];
    const sections = names.map((s) => idsIn(ud, s));
    // write_files lists the files of the init stage, then those with defer.
    sections.forEach((ids, i) => expect(ascendingRuns(ids, want), names[i]).toBeLessThanOrEqual(names[i] === 'write_files' ? 2 : 1));
    // A step with nothing to do for the compile-time values (an empty package list) is named in the header instead.
    const inHeader = [...ud.matchAll(/^# {3}([a-z]+\.\d+\.[A-Za-z]+) \(nothing to do with these values\)$/gm)].map((m) => m[1]!);
    expect([...sections.flat(), ...inHeader].sort()).toEqual([...want].sort());
    for (const p of ir.phases.filter((q) => !compiledPhases(ir).includes(q))) for (const s of p.steps) expect(ud).not.toContain(`# ${s.id} (`);
  });

  it('keeps every runcmd and bootcmd entry a list, but the first (the helpers) and shellcheck notes before a list', () => {
    for (const k of ['runcmd', 'bootcmd'] as const) {
      const list = view[k];
      if (!list) continue;
      expect(typeof list[0]).toBe('string');
      expect(list[0]).toMatch(/^# imgc: stop at the first failed entry .*\nset -eu\n/);
      list.slice(1).forEach((e, i) => {
        // A string is a line of the script: only shellcheck's note, about the list that follows.
        if (typeof e === 'string') {
          expect(e).toBe(LITERAL_NOTE);
          expect(Array.isArray(list[i + 2]), `${k}: the note is followed by a list`).toBe(true);
        } else expect(Array.isArray(e) && e.every((w) => typeof w === 'string'), JSON.stringify(e)).toBe(true);
      });
    }
  });

  it('makes runcmd and bootcmd scripts (cloud-init\'s shellify) that pass shellcheck -s sh and sh -n', async () => {
    await shellcheck(ws.out, ['runcmd', 'bootcmd'].filter((k) => view[k] !== undefined).map((k) => `${k}.sh`));
  });

  return () => view;
};

// A sensitive variable has no value in the IR, and a booting machine has no
// one to ask: examples that use one are refused for this target (IMGC2002);
// every other good example compiles.
const sensitiveOf = (ir: Image): string[] =>
  ((ir as { variables?: { name: string; sensitive?: boolean }[] }).variables ?? []).filter((v) => v.sensitive).map((v) => v.name);
const examples = await Promise.all(goodExamples().map(async (file) => ({ file, ir: await irOf(file) })));
const compilable = examples.filter((e) => !sensitiveOf(e.ir).length).map((e) => e.file);
const withSensitive = examples.filter((e) => sensitiveOf(e.ir).length).map((e) => e.file);

describe.each(withSensitive)('cloud-init backend: %s (a sensitive variable)', (file) => {
  it('is refused with IMGC2002 naming each sensitive variable', async () => {
    const ir = await irOf(file);
    let err: unknown;
    try {
      cloudInitCompiler.compile(ir, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CompileError);
    const ds = (err as CompileError).diagnostics;
    expect(ds.map((d) => d.code)).toEqual(sensitiveOf(ir).map(() => 'IMGC2002'));
    sensitiveOf(ir).forEach((n, i) => expect(ds[i]!.message).toContain(`'${n}'`));
  });
});

describe.each(compilable)('cloud-init backend: %s', (file) => {
  const name = path.basename(file, '.ts');
  const ws = workspace(name);
  let ir: Image;
  let files: CompiledFiles;
  beforeAll(async () => {
    ir = await irOf(file);
    files = cloudInitCompiler.compile(ir, {});
  });
  afterAll(() => ws.remove());

  it('matches the golden files', () => {
    expectGolden(`${name}/cloud-init`, files);
  });

  const view = commonChecks(() => ir, () => files, ws);

  // Spot checks of the reference node's users and files: the node-image examples have them.
  it.runIf(file.includes('node-image'))('puts groups and users in their modules, the rest in runcmd, a sudoers file there too to be checked (spot checks)', () => {
    const cfg = view();
    expect(cfg.groups).toEqual(['admins']);
    expect(cfg.users).toEqual(['default', { name: 'ops', groups: ['admins', 'sudo'], homedir: '/home/ops', shell: '/bin/bash', lock_passwd: true }]);
    // write_files cannot check a sudoers file before it takes its place (src/emit/validators.ts).
    expect(cfg.write_files).toBeUndefined();
    expect(cfg.runcmd).toContainEqual(['imgc_checked', 'imgc_check_sudoers', 'imgc_file', '/etc/sudoers.d/admins', '0440', '', '', '%admins ALL=(ALL:ALL) NOPASSWD: ALL\n']);
    expect(cfg.bootcmd?.[1]).toEqual(['imgc_once', 'customize.pre1.hook', 'imgc_event', 'stdout', `{"image":"${ir.name}","phase":"customize","edge":{"from":"base","to":"customized"},"hosts":`, ',"when":"pre","timestamp":', ',"result":"starting"}']);
    expect(cfg.runcmd?.[1]).toEqual(['imgc_failing', 'imgc_failed_1']);
    expect(cfg.runcmd?.[2]).toEqual(['imgc_dir', '/home/ops/.ssh', '0700', 'ops', 'ops']);
    expect(cfg.runcmd).toContainEqual(['imgc_sysctl', '/etc/sysctl.d/99-kubernetes.conf', 'net.ipv4.ip_forward', '1']);
    expect(cfg.runcmd).toContainEqual(['imgc_swapoff', '/etc/fstab']);
    const config = ir.phases.flatMap((p) => p.steps).find((s) => s.kind === 'file' && s.path === '/etc/containerd/config.toml') as Extract<Step, { kind: 'file' }>;
    expect(cfg.runcmd).toContainEqual(['imgc_file', config.path, '0644', '', '', config.content]);
    // Every root step is in exactly one place.
    expect(ir.phases.flatMap((p) => p.steps).filter((s) => rootKinds.has(s.kind)).length).toBeGreaterThan(10);
  });
});

// An image with every step kind and hook type, with the facts the builder would give them.
const hook = (id: string, when: 'pre' | 'post', action: Record<string, unknown>) => step({ id, kind: 'hook', when, action });
const motd = "it's $HOME `id` ${x} %{y} {{ z }} {% if %}\\\n\tno newline at the end";
const everyKind = imageOf(
  [
    phase(
      'customize',
      [
        step({ id: 'customize.1.file', kind: 'file', path: '/etc/motd', content: motd, mode: '644', provides: [fact('path', '/etc/motd')], requires: [fact('path', '/etc')] }),
        step({ id: 'customize.2.group', kind: 'group', name: 'admins', system: false, provides: [fact('group', 'admins')] }),
        step({ id: 'customize.3.group', kind: 'group', name: 'dev', system: false, provides: [fact('group', 'dev')] }),
        step({ id: 'customize.4.user', kind: 'user', name: 'dev', groups: ['admins', 'sudo'], home: '/srv/dev', shell: '/bin/bash', uid: 1500, system: false, provides: [fact('user', 'dev'), fact('group', 'dev'), fact('path', '/srv/dev')], requires: [fact('group', 'admins'), fact('group', 'sudo')] }),
        step({ id: 'customize.5.user', kind: 'user', name: 'app', groups: [], system: true, provides: [fact('user', 'app'), fact('group', 'app')] }),
        step({ id: 'customize.6.user', kind: 'user', name: 'guest', groups: [], system: false, provides: [fact('user', 'guest'), fact('group', 'guest')] }),
        step({ id: 'customize.7.aptRepository', kind: 'aptRepository', name: 'example', uri: 'https://example.org/debian/', suites: ['bookworm', 'bookworm-updates'], components: ['main', 'contrib'], key: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF\n-----END PGP PUBLIC KEY BLOCK-----\n', keyPath: '/etc/apt/keyrings/example.asc', provides: [fact('repo', 'example'), fact('path', '/etc/apt/sources.list.d/example.sources'), fact('path', '/etc/apt/keyrings/example.asc')] }),
        step({ id: 'customize.8.packages', kind: 'packages', action: 'install', names: ['hello', 'jq=1.6-2.1'], provides: [fact('package', 'hello'), fact('package', 'jq'), fact('path', '/etc/hello')], requires: [fact('repo', 'example')] }),
        step({ id: 'customize.9.file', kind: 'file', path: '/srv/dev/.profile', content: 'export EDITOR=vi\n', owner: 'dev', group: 'dev', mode: '0600', provides: [fact('path', '/srv/dev/.profile')], requires: [fact('path', '/srv/dev'), fact('user', 'dev'), fact('group', 'dev')] }),
        step({ id: 'customize.10.file', kind: 'file', path: '/etc/hello/hello.conf', content: 'greeting = hi\r\nend\n\n', provides: [fact('path', '/etc/hello/hello.conf')], requires: [fact('path', '/etc/hello')] }),
        step({ id: 'customize.11.group', kind: 'group', name: 'docker', gid: 998, system: true, provides: [fact('group', 'docker')] }),
        step({ id: 'customize.12.user', kind: 'user', name: 'svc', uid: 990, primaryGroup: 'docker', groups: [], system: true, home: '/var/lib/svc', provides: [fact('user', 'svc'), fact('path', '/var/lib/svc')], requires: [fact('group', 'docker')] }),
        step({ id: 'customize.13.directory', kind: 'directory', path: '/srv/data', owner: 'dev', mode: '2775', provides: [fact('path', '/srv/data')], requires: [fact('user', 'dev')] }),
        step({ id: 'customize.14.file', kind: 'file', path: '/srv/data/README', content: '', group: 'dev', provides: [fact('path', '/srv/data/README')], requires: [fact('path', '/srv/data')] }),
        step({ id: 'customize.15.symlink', kind: 'symlink', path: '/usr/local/bin/vi', target: "/usr/bin/it's vim", provides: [fact('path', '/usr/local/bin/vi')] }),
        step({ id: 'customize.16.packages', kind: 'packages', action: 'remove', names: ['nano'], removes: [fact('package', 'nano')] }),
        step({ id: 'customize.17.service', kind: 'service', name: 'apt-daily.timer', enabled: false }),
        step({ id: 'customize.18.service', kind: 'service', name: 'hello', enabled: true, package: 'hello', requires: [fact('package', 'hello')] }),
        step({ id: 'customize.19.sysctl', kind: 'sysctl', key: 'vm.swappiness', value: '10', file: '/etc/sysctl.d/90-imgc.conf', provides: [fact('sysctl', 'vm.swappiness'), fact('path', '/etc/sysctl.d/90-imgc.conf')] }),
        step({ id: 'customize.20.kernelModule', kind: 'kernelModule', name: 'overlay', file: '/etc/modules-load.d/imgc.conf', provides: [fact('kernelModule', 'overlay'), fact('path', '/etc/modules-load.d/imgc.conf')] }),
        step({ id: 'customize.21.swapOff', kind: 'swapOff', requires: [fact('path', '/etc/fstab')] }),
        step({ id: 'customize.22.command', kind: 'command', description: 'build the locale', run: "sed -i 's/^# *en_US.UTF-8/en_US.UTF-8/' /etc/locale.gen\nlocale-gen", creates: '/usr/lib/locale/locale-archive', needsMounts: true }),
        step({ id: 'customize.23.command', kind: 'command', run: 'update-ca-certificates', needsMounts: false }),
      ],
      {
        pre: [
          hook('customize.pre1.hook', 'pre', { type: 'webhook', url: 'https://hooks.example.org/build?x=1&y=2', timeoutSeconds: 2.5, retries: 3, onFailure: 'warn' }),
          hook('customize.pre2.hook', 'pre', { type: 'event', target: 'stdout' }),
        ],
        post: [
          hook('customize.post1.hook', 'post', { type: 'script', run: "test -s /etc/motd\necho 'done' >/dev/null" }),
          hook('customize.post2.hook', 'post', { type: 'event', target: '/var/log/imgc events.jsonl' }),
          hook('customize.post3.hook', 'post', { type: 'webhook', url: 'https://hooks.example.org/done', timeoutSeconds: 10, retries: 0, onFailure: 'fail' }),
        ],
      },
    ),
    phase('provision', [
      step({ id: 'provision.1.packages', kind: 'packages', action: 'install', names: ['curl'], provides: [fact('package', 'curl'), fact('command', 'curl')] }),
      step({ id: 'provision.2.aptRepository', kind: 'aptRepository', name: 'kubernetes', uri: 'https://pkgs.k8s.io/core:/stable:/v1.30/deb/', suites: ['/'], components: [], keyUrl: 'https://pkgs.k8s.io/core:/stable:/v1.30/deb/Release.key', keyPath: '/etc/apt/keyrings/kubernetes.asc', requires: [fact('command', 'curl')], provides: [fact('repo', 'kubernetes')] }),
      step({ id: 'provision.3.packages', kind: 'packages', action: 'install', names: ['kubelet'], requires: [fact('repo', 'kubernetes')], provides: [fact('package', 'kubelet')] }),
    ]),
    phase('artifact', [step({ id: 'artifact.1.artifact', kind: 'artifact', format: 'tar', output: 'rootfs.tar' })]),
    phase('verify', [step({ id: 'verify.1.command', kind: 'command', run: 'getent passwd dev', needsMounts: false })]),
  ],
  'every_kind.image',
);

describe('cloud-init backend: every step kind and hook type', () => {
  const ws = workspace('every-kind');
  const files = cloudInitCompiler.compile(everyKind, {});
  afterAll(() => ws.remove());

  it('matches the golden files', () => {
    expectGolden('cloud-init-every-kind/cloud-init', files);
  });

  const view = commonChecks(() => everyKind, () => files, ws);

  it('uses each module for what it can express, in cloud-init\'s order, and runcmd for the rest', () => {
    const cfg = view();
    expect(Object.keys(cfg)).toEqual(['bootcmd', 'write_files', 'groups', 'users', 'package_update', 'packages', 'runcmd']);
    expect(cfg.bootcmd!.slice(1)).toEqual([
      ['imgc_once', 'customize.pre1.hook', 'imgc_webhook', 'https://hooks.example.org/build?x=1&y=2', '2.5', '3', 'warn', '{"image":"every_kind.image","phase":"customize","edge":{"from":"base","to":"customized"},"hosts":', ',"when":"pre","timestamp":', ',"result":"starting"}'],
      ['imgc_once', 'customize.pre2.hook', 'imgc_event', 'stdout', '{"image":"every_kind.image","phase":"customize","edge":{"from":"base","to":"customized"},"hosts":', ',"when":"pre","timestamp":', ',"result":"starting"}'],
    ]);
    expect(cfg.write_files).toEqual([
      { path: '/etc/motd', content: motd, permissions: '0644' },
      { path: '/etc/apt/keyrings/example.asc', content: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF\n-----END PGP PUBLIC KEY BLOCK-----\n', permissions: '0644' },
      {
        path: '/etc/apt/sources.list.d/example.sources',
        content: 'Types: deb\nURIs: https://example.org/debian/\nSuites: bookworm bookworm-updates\nComponents: main contrib\nSigned-By: /etc/apt/keyrings/example.asc\n',
        permissions: '0644',
      },
      // Owned by a user the users module makes: deferred.
      { path: '/srv/dev/.profile', content: 'export EDITOR=vi\n', owner: 'dev:dev', permissions: '0600', defer: true },
      // In a directory a package makes: deferred, after packages.
      { path: '/etc/hello/hello.conf', content: 'greeting = hi\r\nend\n\n', defer: true },
    ]);
    expect(cfg.groups).toEqual(['admins', 'dev']);
    expect(cfg.users).toEqual([
      'default',
      // The group "dev" exists already (customize.3.group): it is the primary group, not created again.
      { name: 'dev', primary_group: 'dev', groups: ['admins', 'sudo'], homedir: '/srv/dev', shell: '/bin/bash', uid: 1500, lock_passwd: true },
      { name: 'app', system: true, no_create_home: true, lock_passwd: true },
      { name: 'guest', no_create_home: true, lock_passwd: true },
    ]);
    expect(cfg.package_update).toBe(true);
    expect(cfg.packages).toEqual(['hello', 'jq=1.6-2.1']);
    expect(cfg.runcmd!.slice(1)).toEqual([
      // customize has post hooks: a step that stops runcmd from here fires them with result failed.
      ['imgc_failing', 'imgc_failed_1'],
      ['imgc_group', 'docker', '--system', '--gid', '998'],
      // A system user with a home: useradd in runcmd (cloud-init passes -M for system users).
      ['imgc_user', 'svc', 'docker', '--system', '--uid', '990', '--create-home', '--home-dir', '/var/lib/svc'],
      ['imgc_dir', '/srv/data', '2775', 'dev', ''],
      ['imgc_file', '/srv/data/README', '', '', 'dev', ''],
      ['imgc_symlink', '/usr/local/bin/vi', "/usr/bin/it's vim"],
      ['imgc_apt_purge', 'nano'],
      ['imgc_disable', 'apt-daily.timer'],
      ['imgc_enable', 'hello'],
      ['imgc_sysctl', '/etc/sysctl.d/90-imgc.conf', 'vm.swappiness', '10'],
      ['imgc_module', '/etc/modules-load.d/imgc.conf', 'overlay'],
      ['imgc_swapoff', '/etc/fstab'],
      ['imgc_creates', '/usr/lib/locale/locale-archive', '/bin/sh', '-ec', "sed -i 's/^# *en_US.UTF-8/en_US.UTF-8/' /etc/locale.gen\nlocale-gen"],
      ['/bin/sh', '-ec', 'update-ca-certificates'],
      // The machine is running: the phase's sysctl and module take effect now, not at the next boot.
      ['sysctl', '--system'],
      ['modprobe', 'overlay'],
      // The steps are done: the post hooks (a script, an event, a webhook) say ok.
      ['imgc_failing', '-'],
      ['/bin/sh', '-ec', "test -s /etc/motd\necho 'done' >/dev/null"],
      ['imgc_event', '/var/log/imgc events.jsonl', '{"image":"every_kind.image","phase":"customize","edge":{"from":"base","to":"customized"},"hosts":', ',"when":"post","timestamp":', ',"result":"ok"}'],
      ['imgc_webhook', 'https://hooks.example.org/done', '10', '0', 'fail', '{"image":"every_kind.image","phase":"customize","edge":{"from":"base","to":"customized"},"hosts":', ',"when":"post","timestamp":', ',"result":"ok"}'],
      // After a hook nothing moves up: provision is all runcmd.
      ['imgc_apt_install', 'curl'],
      ['imgc_fetch', 'https://pkgs.k8s.io/core:/stable:/v1.30/deb/Release.key', '/etc/apt/keyrings/kubernetes.asc'],
      ['imgc_file', '/etc/apt/sources.list.d/kubernetes.sources', '0644', '', '', 'Types: deb\nURIs: https://pkgs.k8s.io/core:/stable:/v1.30/deb/\nSuites: /\nSigned-By: /etc/apt/keyrings/kubernetes.asc\n'],
      ['imgc_apt_changed'],
      ['imgc_apt_install', 'kubelet'],
    ]);
  });

  it('cloud-init\'s own write_files writes every file byte for byte (contents, modes)', async () => {
    // cc_write_files.write_files on the loaded config, every path moved under a scratch root.
    const root = path.join(ws.root, 'wf');
    const code = `
import json, os, sys
from cloudinit import util
from cloudinit.config import cc_write_files
root = sys.argv[1] if len(sys.argv) > 1 else json.load(sys.stdin)
cfg = util.load_yaml(open("user-data", encoding="utf-8").read())
files = []
for f in cfg["write_files"]:
    f = dict(f, path=root + f["path"])
    f.pop("owner", None)  # the users do not exist here
    files.append(f)
cc_write_files.write_files("write_files", files, "root:root")
json.dump([{"path": f["path"][len(root):], "mode": oct(os.stat(f["path"]).st_mode & 0o7777)} for f in files], sys.stdout)
`;
    const written = (await python(code, root, ws.out, ws.home)) as { path: string; mode: string }[];
    const want = everyKind.phases[0]!.steps.filter((s) => s.kind === 'file' && ['/etc/motd', '/srv/dev/.profile', '/etc/hello/hello.conf'].includes(s.path)) as Extract<Step, { kind: 'file' }>[];
    for (const f of want) expect(readFileSync(path.join(root, f.path), 'utf8'), f.path).toBe(f.content);
    expect(written.find((w) => w.path === '/etc/motd')?.mode).toBe('0o644');
    expect(written.find((w) => w.path === '/srv/dev/.profile')?.mode).toBe('0o600');
  });
});

describe('cloud-init backend: the runcmd script, run twice in a scratch directory', () => {
  const ws = workspace('runcmd');
  afterAll(() => ws.remove());
  const at = (p: string) => path.join(ws.root, 'root', p);
  const contents = ['', 'no newline', 'a\r\nb\n\n\n', "$HOME `id` ${x} '\"\\\n\t{{ x }}\n", '😀 שלום\u2028\u0085\ufeff\n'];
  const ir = imageOf([
    phase('customize', [
      step({ id: 'customize.1.directory', kind: 'directory', path: at('d'), mode: '0750', provides: [fact('path', at('d'))] }),
      ...contents.map((content, i) => step({ id: `customize.${i + 2}.file`, kind: 'file', path: at(`d/f${i}`), content, mode: '0640', requires: [fact('path', at('d'))] })),
      step({ id: 'customize.10.symlink', kind: 'symlink', path: at('d/link'), target: "it's\nthere" }),
      step({ id: 'customize.11.sysctl', kind: 'sysctl', key: 'vm.swappiness', value: '10', file: at('sysctl/90.conf') }),
      step({ id: 'customize.12.sysctl', kind: 'sysctl', key: 'vm.swappiness', value: '20', file: at('sysctl/90.conf') }),
      step({ id: 'customize.13.sysctl', kind: 'sysctl', key: 'net.ipv4.ip_forward', value: '1', file: at('sysctl/90.conf') }),
      step({ id: 'customize.14.kernelModule', kind: 'kernelModule', name: 'overlay', file: at('modules/k.conf') }),
      step({ id: 'customize.15.kernelModule', kind: 'kernelModule', name: 'overlay', file: at('modules/k.conf') }),
      step({ id: 'customize.16.command', kind: 'command', run: `printf x >>${JSON.stringify(at('count'))}`, creates: at('d/f0'), needsMounts: false }),
      step({ id: 'customize.17.command', kind: 'command', run: `printf x >>${JSON.stringify(at('count'))}`, needsMounts: false }),
    ]),
  ]);

  it('writes what the steps say, and the second run changes nothing', async () => {
    writeFiles(ws.out, cloudInitCompiler.compile(ir, {}));
    await cloudInitView(ws.out, ws.home);
    const sh = () => execa('/bin/sh', ['runcmd.sh'], { cwd: ws.out, reject: false });
    const first = await sh();
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    contents.forEach((c, i) => expect(readFileSync(at(`d/f${i}`), 'utf8')).toBe(c));
    expect((statSync(at('d')).mode & 0o7777).toString(8)).toBe('750');
    expect((statSync(at('d/f1')).mode & 0o7777).toString(8)).toBe('640');
    expect(readlinkSync(at('d/link'))).toBe("it's\nthere");
    expect(readFileSync(at('sysctl/90.conf'), 'utf8')).toBe('vm.swappiness = 20\nnet.ipv4.ip_forward = 1\n');
    expect(readFileSync(at('modules/k.conf'), 'utf8')).toBe('overlay\n');
    expect(readFileSync(at('count'), 'utf8')).toBe('x');
    const inodes = contents.map((_, i) => statSync(at(`d/f${i}`)).ino);
    const second = await sh();
    expect(second.exitCode).toBe(0);
    expect(contents.map((_, i) => statSync(at(`d/f${i}`)).ino), 'unchanged files are not rewritten').toEqual(inodes);
    expect(readFileSync(at('sysctl/90.conf'), 'utf8')).toBe('vm.swappiness = 20\nnet.ipv4.ip_forward = 1\n');
    // The command with `creates` ran neither time (f0 existed by then); the other runs each time.
    expect(readFileSync(at('count'), 'utf8')).toBe('xx');
  });

  it('its hooks send the request for this node (uname -n) with the phase\'s edge, to a file and to a webhook on 127.0.0.1', async () => {
    const got: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const hooked = imageOf([
        phase('provision', [step({ id: 'provision.1.command', kind: 'command', run: 'true', needsMounts: false })], {
          post: [hook('provision.post1.hook', 'post', { type: 'event', target: path.join(ws.out, 'events.jsonl') }), hook('provision.post2.hook', 'post', { type: 'webhook', url, timeoutSeconds: 5, retries: 0, onFailure: 'fail' })],
        }),
      ]);
      writeFiles(ws.out, cloudInitCompiler.compile(hooked, {}));
      await cloudInitView(ws.out, ws.home);
      const r = await execa('/bin/sh', ['runcmd.sh'], { cwd: ws.out, reject: false });
      expect(r.exitCode, r.stderr).toBe(0);
      const line = JSON.parse(readFileSync(path.join(ws.out, 'events.jsonl'), 'utf8')) as Record<string, unknown>;
      expect(line).toEqual({
        image: hooked.name,
        phase: 'provision',
        edge: { from: 'customized', to: 'provisioned' },
        hosts: [hostname()],
        when: 'post',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        result: 'ok',
      });
      expect(got.map((b) => ({ ...(JSON.parse(b) as Record<string, unknown>), timestamp: 'T' }))).toEqual([{ ...line, timestamp: 'T' }]);
    } finally {
      server.close();
    }
  });

  it('its webhook reads the answer as a Runtime SDK response: retryAfterSeconds waits and asks again, Failure stops runcmd with the message', async () => {
    let answers: string[] = [];
    const at: number[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        at.push(Date.now());
        res.writeHead(200, { 'content-type': 'application/json' }).end(answers.length > 1 ? answers.shift() : answers[0]);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      // A timeout in fractions of a second: the deadline is whole seconds, rounded up.
      const hooked = imageOf([
        phase('provision', [step({ id: 'provision.1.command', kind: 'command', run: `: >${JSON.stringify(path.join(ws.out, 'ran'))}`, needsMounts: false })], {
          pre: [hook('provision.pre1.hook', 'pre', { type: 'webhook', url, timeoutSeconds: 2.5, retries: 0, onFailure: 'fail' })],
        }),
      ]);
      writeFiles(ws.out, cloudInitCompiler.compile(hooked, {}));
      await cloudInitView(ws.out, ws.home);
      answers = ['{"status":"Success","message":"not yet","retryAfterSeconds":1}', '{"status":"Success"}'];
      const ok = await execa('/bin/sh', ['runcmd.sh'], { cwd: ws.out, reject: false });
      expect(ok.exitCode, ok.stderr).toBe(0);
      expect(at).toHaveLength(2);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(1000);
      expect(ok.stderr).toContain(`imgc: webhook ${url} asks to retry after 1 s: not yet`);
      expect(existsSync(path.join(ws.out, 'ran'))).toBe(true);

      rmSync(path.join(ws.out, 'ran'));
      at.length = 0;
      answers = ['{"status":"Failure","message":"the node is cordoned elsewhere"}'];
      const failed = await execa('/bin/sh', ['runcmd.sh'], { cwd: ws.out, reject: false });
      expect(failed.exitCode).not.toBe(0);
      expect(at).toHaveLength(1);
      expect(failed.stderr).toContain(`imgc: webhook ${url} answered Failure: the node is cordoned elsewhere`);
      expect(existsSync(path.join(ws.out, 'ran'))).toBe(false);
    } finally {
      server.close();
    }
  });

  it('a step that stops runcmd fires its phase\'s post hooks with result failed and the message; a later phase\'s never run', async () => {
    const events = path.join(ws.out, 'failed-events.jsonl');
    rmSync(events, { force: true });
    const marker = path.join(ws.out, 'later-ran');
    const failing = (run: string) =>
      imageOf([
        phase('customize', [step({ id: 'customize.1.command', kind: 'command', run: 'true', needsMounts: false })], {
          post: [hook('customize.post1.hook', 'post', { type: 'event', target: events })],
        }),
        phase('provision', [step({ id: 'provision.1.command', kind: 'command', run, needsMounts: false }), step({ id: 'provision.2.command', kind: 'command', run: 'true', needsMounts: false })], {
          post: [hook('provision.post1.hook', 'post', { type: 'event', target: events })],
        }),
        phase('sysprep', [step({ id: 'sysprep.1.command', kind: 'command', run: `: >${JSON.stringify(marker)}`, needsMounts: false })], {
          post: [hook('sysprep.post1.hook', 'post', { type: 'event', target: events })],
        }),
      ]);
    const lines = () => readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    writeFiles(ws.out, cloudInitCompiler.compile(failing('exit 3'), {}));
    await cloudInitView(ws.out, ws.home);
    const r = await execa('/bin/sh', ['runcmd.sh'], { cwd: ws.out, reject: false });
    expect(r.exitCode).toBe(3);
    expect(lines().map((l) => [l['phase'], l['result'], l['message']])).toEqual([
      ['customize', 'ok', undefined],
      ['provision', 'failed', 'a step of phase provision failed, and runcmd stopped there: see /var/log/cloud-init-output.log on the node'],
    ]);
    expect(existsSync(marker)).toBe(false);
    // Nothing fails: every post hook says ok, and no failed request is sent.
    rmSync(events);
    writeFiles(ws.out, cloudInitCompiler.compile(failing('true'), {}));
    await cloudInitView(ws.out, ws.home);
    const ok = await execa('/bin/sh', ['runcmd.sh'], { cwd: ws.out, reject: false });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(lines().map((l) => [l['phase'], l['result']])).toEqual([
      ['customize', 'ok'],
      ['provision', 'ok'],
      ['sysprep', 'ok'],
    ]);
    expect(existsSync(marker)).toBe(true);
  });

  it('stops at the first failed entry', async () => {
    const failing = imageOf([
      phase('customize', [
        step({ id: 'customize.1.command', kind: 'command', run: 'exit 3', needsMounts: false }),
        step({ id: 'customize.2.command', kind: 'command', run: `: >${JSON.stringify(at('after-failure'))}`, needsMounts: false }),
      ]),
    ]);
    writeFiles(ws.out, cloudInitCompiler.compile(failing, {}));
    await cloudInitView(ws.out, ws.home);
    const r = await execa('/bin/sh', ['runcmd.sh'], { cwd: ws.out, reject: false });
    expect(r.exitCode).toBe(3);
    expect(() => statSync(at('after-failure'))).toThrow();
  });
});

describe('cloud-init backend: where steps go (plan)', () => {
  const item = (s: Record<string, unknown> & { id: string }): Item => ({ step: step(s) as Item['step'], phase: phase('customize', []) });
  const stagesOf = (...steps: (Record<string, unknown> & { id: string })[]) => plan(steps.map(item), { packagesModule: true }).map((p) => p.stage);
  const file = (id: string, p: string, extra: Record<string, unknown> = {}) => ({ id, kind: 'file', path: p, content: 'x', provides: [fact('path', p)], ...extra });

  it('hoists independent steps into earlier modules, keeping dependents after what they need', () => {
    expect(
      stagesOf(
        { id: 'a', kind: 'directory', path: '/srv/a', provides: [fact('path', '/srv/a')] },
        file('b', '/etc/b'),
        file('c', '/srv/a/c', { requires: [fact('path', '/srv/a')] }),
        { id: 'd', kind: 'group', name: 'g', system: false, provides: [fact('group', 'g')] },
      ),
    ).toEqual(['runcmd', 'write_files', 'runcmd', 'groups']);
  });

  it('never moves file writes and package operations past each other', () => {
    expect(stagesOf({ id: 'p', kind: 'packages', action: 'install', names: ['x'] }, file('f', '/etc/f'))).toEqual(['packages', 'write_files_deferred']);
    expect(stagesOf({ id: 'd', kind: 'directory', path: '/srv/a' }, { id: 'p', kind: 'packages', action: 'install', names: ['x'] })).toEqual(['runcmd', 'runcmd']);
    expect(dependsOn(step({ id: 'f', kind: 'file', path: '/etc/f', content: '' }), step({ id: 'p', kind: 'packages', action: 'remove', names: ['x'] }))).toBe(true);
  });

  it('nothing passes a command or a hook', () => {
    expect(stagesOf({ id: 'c', kind: 'command', run: 'true', needsMounts: false }, file('f', '/etc/f'), { id: 'g', kind: 'group', name: 'g', system: false })).toEqual(['runcmd', 'runcmd', 'runcmd']);
    expect(stagesOf({ id: 'h', kind: 'hook', when: 'pre', action: { type: 'script', run: 'true' } }, file('f', '/etc/f'))).toEqual(['runcmd', 'runcmd']);
    // Hooks that cannot fail, before any step: bootcmd, and the steps keep their modules.
    expect(stagesOf({ id: 'h', kind: 'hook', when: 'pre', action: { type: 'event', target: 'stdout' } }, file('f', '/etc/f'))).toEqual(['bootcmd', 'write_files']);
    expect(stagesOf({ id: 'h', kind: 'hook', when: 'pre', action: { type: 'event', target: '/var/log/x' } }, file('f', '/etc/f'))).toEqual(['runcmd', 'runcmd']);
  });

  it('packages installs in one apt-get call: a dependent one goes to runcmd', () => {
    expect(
      stagesOf(
        { id: 'p1', kind: 'packages', action: 'install', names: ['a'], provides: [fact('package', 'a')] },
        { id: 'p2', kind: 'packages', action: 'install', names: ['b'], requires: [fact('package', 'a')] },
        { id: 'p3', kind: 'packages', action: 'install', names: ['c'] },
      ),
    ).toEqual(['packages', 'runcmd', 'packages']);
  });

  it('counts the facts fields imply, for hand-made IR that leaves them out', () => {
    const user = { id: 'u', kind: 'user', name: 'u', groups: [], system: false };
    expect(stagesOf(user, { id: 'f', kind: 'file', path: '/etc/f', content: '', owner: 'u' })).toEqual(['users', 'write_files_deferred']);
    // useradd made group u (Debian's USERGROUPS): a later groupadd u must not run before it.
    expect(stagesOf(user, { id: 'g', kind: 'group', name: 'u', system: false })).toEqual(['users', 'runcmd']);
    expect(stagesOf({ id: 'p', kind: 'packages', action: 'install', names: ['x=1'] }, { id: 'q', kind: 'packages', action: 'install', names: ['x'] })).toEqual(['packages', 'runcmd']);
  });

  it('paths meet paths above and below them, in the direction that matters', () => {
    const dir = step({ id: 'd', kind: 'directory', path: '/srv/a', provides: [fact('path', '/srv/a')], requires: [fact('path', '/srv')] });
    expect(dependsOn(step({ id: 'f', kind: 'file', path: '/srv/a/b/c', content: '', requires: [fact('path', '/srv/a/b')] }), dir)).toBe(true);
    expect(dependsOn(step({ id: 'g', kind: 'directory', path: '/srv/z', requires: [fact('path', '/srv')], provides: [fact('path', '/srv/z')] }), dir)).toBe(false);
  });
});

describe('cloud-init backend refuses what it cannot carry', () => {
  const refused = (ir: Image): string[] => {
    try {
      cloudInitCompiler.compile(ir, {});
    } catch (e) {
      expect(e).toBeInstanceOf(CompileError);
      return (e as CompileError).diagnostics.map((d) => `${d.code} ${d.message}`);
    }
    return expect.fail('compile did not refuse');
  };
  const one = (s: Record<string, unknown>, base = {}) => uncheckedImageOf([phase('customize', [step({ id: 'customize.1.x', ...s })])], 'test-image', base);

  it('NUL in a file body (IMGC2001)', () => {
    expect(refused(one({ kind: 'file', path: '/etc/x', content: 'a\u0000b' }))).toEqual([expect.stringMatching(/^IMGC2001 .*U\+0000/)]);
  });

  it('NUL in a command (IMGC2001)', () => {
    expect(refused(one({ kind: 'command', run: 'echo \u0000', needsMounts: false }))).toEqual([expect.stringMatching(/^IMGC2001 .*U\+0000/)]);
  });

  it('a package step runcmd would need a package manager for that it does not drive (IMGC2002)', () => {
    expect(refused(one({ kind: 'packages', action: 'remove', names: ['vim'] }, { packageManager: 'dnf' }))).toEqual([expect.stringMatching(/^IMGC2002 the cloud-init backend cannot drive the package manager 'dnf'/)]);
    // cloud-init's packages module picks the distro's package manager itself.
    const ok = cloudInitCompiler.compile(one({ kind: 'packages', action: 'install', names: ['vim'] }, { packageManager: 'dnf' }), {});
    expect((parseYaml(ok['user-data']!) as Cfg).packages).toEqual(['vim']);
  });
});

describe('cloud-init backend: nothing to run', () => {
  it('is an empty cloud-config that cloud-init accepts', async () => {
    const ws = workspace('empty');
    const files = cloudInitCompiler.compile(imageOf([phase('customize', []), phase('verify', [step({ id: 'verify.1.verify', kind: 'verify', check: 'facts' })])]), {});
    expect(parseYaml(files['user-data']!)).toEqual({});
    writeFiles(ws.out, files);
    await expectSchemaClean(ws.out, ws.home);
    ws.remove();
  });
});

describe('imgc compile --target cloud-init', () => {
  it('is registered and writes user-data and meta-data', async () => {
    expect(compilers['cloud-init'].target).toBe(cloudInitCompiler.target);
    expect(compilable.length, 'a good example compiles for cloud-init').toBeGreaterThan(0);
    const file = compilable[0]!;
    const ir = await irOf(file);
    const ws = workspace('cli');
    const r = await imgc(['compile', file, '--target', 'cloud-init', '--out', ws.out]);
    expect(r.exitCode, r.all).toBe(0);
    expect(readFileSync(path.join(ws.out, 'user-data'), 'utf8')).toBe(cloudInitCompiler.compile(ir, {})['user-data']);
    expect(readFileSync(path.join(ws.out, 'meta-data'), 'utf8')).toContain(`instance-id: imgc-${hostnameOf(ir.name)}\n`);
    ws.remove();
  });
});
