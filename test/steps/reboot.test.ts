// The reboot kind: where a machine can come back it is said (Packer's VM: the
// phase's script in parts around the reboot's own provisioners; Ansible on
// live hosts: ansible.builtin.reboot), everywhere else it is refused with
// IMGC2002 at the step (chroot builds, cloud-init, provision.sh, Packer's
// ansible provisioner). Real tools: packer validate/inspect/fmt (Packer 1.6.6),
// HashiCorp's HCL parser, shellcheck, ansible-playbook --syntax-check and
// ansible-lint --profile production.
import { execa } from 'execa';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { CompileError, type CompiledFiles, type CompileOptions } from '../../src/compilers/types.js';
import type { Diagnostic } from '../../src/check/diagnostic.js';
import type { Image } from '../../src/ir/schema.js';
import { image, variable, z } from '../../src/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { imgc, irOf, tempDir } from '../helpers/cli.js';
import { expectGolden } from '../helpers/golden.js';
import { run as ansibleRun, workspace, writeFiles } from '../compilers/ansible-support.js';
import { expectValid, inspectProvisioners, packer, parseHcl, requiredVars, writeOut, type Parsed } from '../compilers/packer-support.js';
import { write } from './support.js';

const FIXTURE = 'test/fixtures/reboot/reboot-node.ts';

let ir: Image;
beforeAll(async () => {
  ir = await irOf(FIXTURE);
});

/** The diagnostics a compile throws (none when it compiles). */
const refusal = (target: keyof typeof compilers, opts: CompileOptions = {}): Diagnostic[] => {
  try {
    compilers[target].compile(ir, opts);
  } catch (e) {
    if (e instanceof CompileError) return e.diagnostics;
    throw e;
  }
  return [];
};

describe('reboot: facts', () => {
  it('checks clean: it provides and requires nothing', () => {
    expect(checkImage(ir)).toEqual([]);
    const steps = ir.phases.flatMap((p) => p.steps.filter((s) => s.kind === 'reboot'));
    expect(steps.map((s) => [s.id, s.provides, s.requires])).toEqual([
      ['customize.2.reboot', [], []],
      ['provision.2.reboot', [], []],
    ]);
  });

  it('forgets what lies under /run (a tmpfs): a later step that needs it is IMGC0005', () => {
    const lost = image('x')
      .base(debian12())
      .customize((p) => p.directory('/run/imgc').reboot().file('/run/imgc/flag' as never, { content: '' }))
      .toIR('x.ts');
    expect(checkImage(lost).map((d) => d.code)).toEqual(['IMGC0005']);
    const kept = image('x').base(debian12()).customize((p) => p.directory('/etc/imgc').reboot().file('/etc/imgc/flag', { content: '' })).toIR('x.ts');
    expect(checkImage(kept)).toEqual([]);
  });
});

describe('reboot: refused where no machine comes back (IMGC2002 at the step)', () => {
  const chroot = /an image build in a chroot runs on the build machine's kernel: there is no machine of its own to reboot/;
  const cases: [string, keyof typeof compilers, CompileOptions, RegExp, RegExp][] = [
    ['shell (chroot build)', 'shell', {}, chroot, /--target packer.*--target ansible --runtime/],
    ['ansible (chroot build)', 'ansible', {}, chroot, /--target packer.*--target ansible --runtime/],
    ['cloud-init', 'cloud-init', {}, /runcmd once per instance: a reboot in the middle stops it/, /--target packer/],
    ['packer --provisioner ansible', 'packer', { provisioner: 'ansible' }, /with --provisioner ansible, each phase's play runs in one go/, /without --provisioner ansible/],
  ];
  it.each(cases)('%s', (_label, target, opts, reason, hint) => {
    const ds = refusal(target, opts);
    expect(ds.length).toBeGreaterThan(0);
    const d = ds[0]!;
    expect(d.code).toBe('IMGC2002');
    expect(d.message).toMatch(/cannot express reboot/);
    expect(d.message).toMatch(reason);
    expect(d.hint).toMatch(hint);
    expect(d.stepId).toBe('customize.2.reboot');
    // The IR names the definition's file as loaded; the CLI prints it from where it ran (below).
    expect(d.loc).toEqual({ file: 'reboot-node.ts', line: 9, column: 76 });
  });

  it.each(cases)('%s: every refused step at once, not the first alone', (_label, target, opts) => {
    expect(refusal(target, opts).map((d) => `${d.code} ${d.stepId}`)).toEqual(['IMGC2002 customize.2.reboot', 'IMGC2002 provision.2.reboot']);
  });

  it('provision.sh (shell --runtime): its one ssh session would end at the reboot', () => {
    const [d] = refusal('shell', { runtime: true });
    expect(d).toMatchObject({ code: 'IMGC2002', stepId: 'provision.2.reboot', loc: { file: 'reboot-node.ts', line: 13 } });
    expect(d!.message).toMatch(/cannot express reboot \(the containerd cgroup driver takes a fresh boot\): provision\.sh runs in one session \(ssh host sh -s\)/);
    expect(d!.hint).toMatch(/--target ansible --runtime/);
  });

  it('packer, under when(...): its provisioners take no condition; ansible --runtime puts the condition on the task', () => {
    const now = variable('reboot_now', z.boolean(), { default: true });
    // The variable as the loader adds it for the steps that use it (src/load/variables.ts).
    const maybe: Image = {
      ...image('x')
        .base(debian12())
        .provision((p) => p.when(now, (p) => p.reboot()))
        .toIR('x.ts'),
      variables: [{ name: 'reboot_now', type: 'boolean', sensitive: false, value: true }],
    };
    let err: unknown;
    try {
      compilers.packer.compile(maybe, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CompileError);
    const [d] = (err as CompileError).diagnostics;
    expect(d).toMatchObject({ code: 'IMGC2002', stepId: 'provision.1.reboot' });
    expect(d!.message).toBe('the packer target cannot express reboot: Packer runs it as provisioners of its own, which take no when(...) condition');
    expect(d!.hint).toMatch(/out of the when\(\.\.\.\) block/);
    expect(compilers.ansible.compile(maybe, { runtime: true })['runtime.yml']).toMatch(/ansible\.builtin\.reboot:\n\s+reboot_timeout: 600\n\s+when:/);
  });

  it('imgc compile prints it with file:line:col, the code frame and the hint, and exits 1', async () => {
    const r = await imgc(['compile', '--no-typecheck', FIXTURE, '--target', 'shell', '--out', tempDir('reboot-cli')]);
    expect(r.exitCode).toBe(1);
    expect(r.all).toContain(`${FIXTURE}:9:76 - error IMGC2002: the shell target cannot express reboot:`);
    expect(r.all).toMatch(/\.reboot\(\)\)\n\s+~{6}\n/);
    expect(r.all).toContain('hint: build the image with --target packer');
  });
});

describe('reboot: packer (the shell provisioner runs the phase in parts)', () => {
  let files: CompiledFiles;
  let legacy: CompiledFiles;
  beforeAll(() => {
    files = compilers.packer.compile(ir, { json: true });
    legacy = compilers.packer.compile(ir, { json: true, packerVersion: '1.6' });
  });

  it('matches the golden files (template, JSON form and the parts of the phase scripts)', () => {
    expectGolden('steps-reboot/packer', files);
  });

  it('each phase that reboots runs as parts holding its other steps once each, in order; no build.sh', () => {
    const parts = Object.keys(files).filter((f) => /^shell\/phases\/\d+-\w+\.\d+\.sh$/.test(f)).sort();
    expect(parts).toEqual(['shell/phases/01-customize.1.sh', 'shell/phases/02-provision.1.sh', 'shell/phases/02-provision.2.sh']);
    expect(Object.keys(files).filter((f) => /^shell\/(build\.sh|phases\/\d+-\w+\.sh)$/.test(f))).toEqual([]);
    const ran = parts.flatMap((f) => [...files[f]!.matchAll(/^imgc_run (\S+) /gm)].map((m) => m[1]));
    const want = ir.phases.flatMap((p) => p.steps.filter((s) => s.kind !== 'reboot').map((s) => s.id));
    expect(ran).toEqual(want);
  });

  it('the parts pass shellcheck with the helpers they source', async () => {
    const dir = tempDir('reboot-packer-shell');
    write(dir, files);
    const scripts = Object.keys(files).filter((f) => f.startsWith('shell/phases/'));
    const r = await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', '-S', 'style', ...scripts], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
  });

  it('reads back (hcl2json): the reboot expects the disconnect, the next provisioner waits, then retries for the timeout', async () => {
    const parsed = await parseHcl(files['reboot-node.pkr.hcl']!);
    // hcl2json groups the provisioners by type, each type's in order.
    const shells = ((parsed['build'] as Parsed[])[0]!['provisioner'] as Parsed)['shell'] as Parsed[];
    const rebootAt = shells.findIndex((b) => b['inline']?.at(-1) === 'reboot' && b['start_retry_timeout'] === '300s');
    // Each side prints its boot id, so Packer's output shows the machine came back from a reboot.
    expect(shells[rebootAt]).toMatchObject({ inline: ['echo "imgc: rebooting (boot $(cat /proc/sys/kernel/random/boot_id))"', 'reboot'], expect_disconnect: true, start_retry_timeout: '300s' });
    expect(shells[rebootAt + 1]).toMatchObject({ pause_before: '10s', start_retry_timeout: '300s' });
    expect(shells[rebootAt + 1]!['inline']![0]).toMatch(/^echo "imgc: back \(boot \$\(cat \/proc\/sys\/kernel\/random\/boot_id\)\)/);
    expect(shells[rebootAt + 2]?.['script']).toBe('${path.root}/shell/phases/02-provision.2.sh');
  });

  it('the 1.6 form is the default one but for its header and packer block', () => {
    const hcl = (text: string) => text.replace(/^(#.*\n)+\n/, '').replace(/^packer \{\n[\s\S]*?\n\}\n\n/, '');
    expect(hcl(legacy['reboot-node.pkr.hcl']!)).toBe(hcl(files['reboot-node.pkr.hcl']!));
    const json = (text: string) => {
      const { '//': _header, packer: _block, ...rest } = JSON.parse(text) as Record<string, unknown>;
      return rest;
    };
    expect(json(legacy['reboot-node.pkr.json']!)).toEqual(json(files['reboot-node.pkr.json']!));
  });

  it('packer 1.6.6 validates both syntaxes (full), lists the provisioners in order, and is fmt clean', async () => {
    const dir = writeOut(legacy, 'reboot-packer');
    // The null builder (no cloudImage step: an existing host) insists on a way to log in.
    const vars = [...requiredVars(await parseHcl(legacy['reboot-node.pkr.hcl']!)), '-var', 'existing_host_ssh_password=secret'];
    await expectValid(dir, 'reboot-node.pkr.hcl', vars);
    await expectValid(dir, 'reboot-node.pkr.json', vars);
    const { provisioners } = await inspectProvisioners(dir, 'reboot-node.pkr.hcl', vars);
    // The build directory (docs/packer.md); helpers.sh; customize: part 1, reboot, wait; provision: part 1, reboot, wait, part 2; the build directory removed.
    expect(provisioners).toEqual(['shell', 'file', 'shell', 'shell', 'shell', 'shell', 'shell', 'shell', 'shell', 'shell']);
    const fmt = await packer(['fmt', '-check', '-diff', 'reboot-node.pkr.hcl'], dir);
    expect(fmt.code, fmt.out).toBe(0);
  });
});

describe('reboot: ansible --runtime (ansible.builtin.reboot on live hosts)', () => {
  let files: CompiledFiles;
  beforeAll(() => {
    files = compilers.ansible.compile(ir, { runtime: true });
  });

  it('matches the golden files', () => {
    expectGolden('steps-reboot/ansible-runtime', files);
  });

  it('reboots with the reason and the timeout, between the steps around it', () => {
    const yml = files['runtime.yml']!;
    expect(yml).toMatch(/ansible\.builtin\.reboot:\n\s+msg: !unsafe 'the containerd cgroup driver takes a fresh boot'\n\s+reboot_timeout: 300\n/);
    const at = yml.indexOf('ansible.builtin.reboot:');
    expect(yml.lastIndexOf('Install containerd', at)).toBeGreaterThan(-1);
    expect(yml.indexOf('Enable containerd.service', at)).toBeGreaterThan(at);
  });

  it('passes ansible-playbook --syntax-check and ansible-lint --profile production', async () => {
    const ws = workspace('reboot-runtime');
    try {
      writeFiles(ws.out, files);
      const syntax = await ansibleRun('ansible-playbook', ['--syntax-check', '-i', 'localhost,', 'runtime.yml'], ws.out, ws.home);
      expect(syntax.exitCode, syntax.all).toBe(0);
      const lint = await ansibleRun('ansible-lint', ['--offline', '--profile', 'production', '--strict', '--nocolor', '-p', 'runtime.yml'], ws.out, ws.home);
      expect(lint.exitCode, lint.all).toBe(0);
    } finally {
      ws.remove();
    }
  });
});
