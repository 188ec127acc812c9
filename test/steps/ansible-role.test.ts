// The ansibleRole kind: an existing role as one step with declared facts. Its
// outputs (the ansible target's build and runtime playbooks, Packer with the
// ansible provisioner) carry a copy of the role and pass the real tools; the
// targets whose steps run inside the root refuse it with IMGC2002; the checker
// and the types see only the facts it declares; a missing or empty role
// directory stops the definition at the step.
import { execa } from 'execa';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { CompileError } from '../../src/compilers/types.js';
import { image, variable, z } from '../../src/index.js';
import { loadDefinition } from '../../src/load/index.js';
import { hashInputs, inputsUnchanged } from '../../src/util/cache.js';
import { debian12 } from '../../stdlib/bases.js';
import { expectGolden } from '../helpers/golden.js';
import { tempDir } from '../helpers/temp.js';
import { ansibleEnv } from '../compilers/ansible-support.js';
import { write } from './support.js';
import { expectValid, parseHcl, requiredVars, writeOut } from '../compilers/packer-support.js';

const base = debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] });
const motd = '../fixtures/roles/motd';
const ir = image('ansible-role-test')
  .base(base)
  .customize((p) =>
    p
      .ansibleRole(motd, { provides: { user: ['motd'], group: ['motd'], path: ['/etc/motd-imgc'] }, vars: { motd_text: 'Hello from imgc {{ not templated }}' } })
      // The role's declared user and group reach this step's types.
      .file('/etc/motd-owner', { owner: 'motd', group: 'motd', mode: '0644', content: 'motd\n' }),
  )
  .provision((p) => p.ansibleRole(motd, { requires: { path: ['/etc/motd-imgc'] } }))
  // A Packer source, so that the ansible provisioner's template validates.
  .artifact((a) => a.cloudImage('qemu', 'qemu', { disk_size: '8G', format: 'qcow2', headless: true }))
  .toIR('ansible-role-test.ts');

const lintClean = async (dir: string, playbook: string) => {
  const env = ansibleEnv(tempDir('ansible-role-home'));
  const syntax = await execa('ansible-playbook', ['--syntax-check', '-i', 'localhost,', playbook], { cwd: dir, env, reject: false, all: true });
  expect(syntax.exitCode, syntax.all).toBe(0);
  const lint = await execa('ansible-lint', ['--offline', '--profile', 'production', '--strict', '--nocolor', '-p'], { cwd: dir, env, reject: false, all: true });
  expect(lint.exitCode, lint.all).toBe(0);
};

const refusal = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    if (e instanceof CompileError) return e.diagnostics.map((d) => `${d.code} ${d.message}`);
    throw e;
  }
  return [];
};

describe('ansibleRole: outputs', () => {
  it('checks clean', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('ansible: matches the golden files (the role copied to roles/motd)', () => {
    const files = compilers.ansible.compile(ir, {});
    expect(files['roles/motd/templates/motd.j2']).toBe('{{ motd_text }}\n');
    expectGolden('steps-ansible-role/ansible', files);
  });

  it('ansible --runtime: matches the golden files', () => {
    expectGolden('steps-ansible-role/ansible-runtime', compilers.ansible.compile(ir, { runtime: true }));
  });

  it('packer --provisioner ansible: matches the golden files', () => {
    expectGolden('steps-ansible-role/packer-ansible', compilers.packer.compile(ir, { provisioner: 'ansible', packerVersion: '1.6' }));
  });

  it('packer --provisioner ansible: packer validate passes with the role beside the playbook', async () => {
    const files = compilers.packer.compile(ir, { provisioner: 'ansible', packerVersion: '1.6' });
    expect(files['ansible/roles/motd/tasks/main.yml']).toBeDefined();
    const dir = writeOut(files, 'ansible-role-packer');
    const template = Object.keys(files).find((f) => f.endsWith('.pkr.hcl'))!;
    await expectValid(dir, template, requiredVars(await parseHcl(files[template]!)));
  });

  it('ansible: the playbook and the role pass --syntax-check and ansible-lint --profile production', async () => {
    const dir = tempDir('ansible-role-ansible');
    write(dir, compilers.ansible.compile(ir, {}));
    await lintClean(dir, 'site.yml');
  });

  it('ansible --runtime: runtime.yml and the role pass --syntax-check and ansible-lint --profile production', async () => {
    const dir = tempDir('ansible-role-runtime');
    write(dir, compilers.ansible.compile(ir, { runtime: true }));
    await lintClean(dir, 'runtime.yml');
  });

  it('shell: matches the golden files (the phase scripts in parts around each role\'s play)', () => {
    const files = compilers.shell.compile(ir, {});
    expect(Object.keys(files).filter((f) => !f.startsWith('roles/')).sort()).toEqual([
      '01-customize.1.yml',
      '02-provision.1.yml',
      'build.sh',
      'phases/01-customize.2.sh',
      'phases/03-artifact.sh',
      'phases/helpers.sh',
    ]);
    expectGolden('steps-ansible-role/shell', files);
  });

  it('shell: build.sh and the parts pass shellcheck; each play passes --syntax-check and ansible-lint --profile production', async () => {
    const dir = tempDir('ansible-role-shell');
    const files = compilers.shell.compile(ir, {});
    write(dir, files);
    const sh = Object.keys(files).filter((f) => f.endsWith('.sh'));
    const r = await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', '-S', 'style', ...sh], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
    for (const play of Object.keys(files).filter((f) => /^[^/]+\.yml$/.test(f))) await lintClean(dir, play);
  });

  it('shell: a role under when(...) is decided by build.sh, as the phase scripts decide their steps', async () => {
    const hardening = variable('hardening', z.boolean(), { default: true });
    const conditioned = image('x')
      .base(base)
      .customize((p) => p.when(hardening, (q) => q.ansibleRole(motd)).file('/etc/x', { content: 'x\n' }))
      .toIR('x.ts');
    const v = { ...conditioned, variables: [{ name: 'hardening', type: 'boolean', sensitive: false, value: true }] } as typeof conditioned;
    const files = compilers.shell.compile(v, {});
    const build = files['build.sh']!;
    expect(build).toContain('IMGC_VAR_HARDENING=${IMGC_VAR_HARDENING:-true}');
    expect(build).toMatch(/ {2}if \[ "\$\{IMGC_VAR_HARDENING\}" = true \]; then\n {4}imgc_play 01-customize\.1\.yml customize\.1\.ansibleRole \|\| imgc_failed customize "\$\?"\n {2}else\n/);
    const dir = tempDir('ansible-role-shell-when');
    write(dir, files);
    const r = await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', '-S', 'style', 'build.sh'], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
  });

  it('provision.sh, Packer with the shell provisioner and cloud-init refuse it with IMGC2002 and what to do instead', () => {
    expect(refusal(() => compilers.shell.compile(ir, { runtime: true }))).toEqual([
      "IMGC2002 the shell target cannot express ansible role 'motd': provision.sh runs on the host itself as one script (ssh host sudo sh -s), which carries no copy of the role and no ansible-playbook to apply it",
    ]);
    expect(refusal(() => compilers.packer.compile(ir, {}))).toEqual([
      "IMGC2002 the packer target cannot express ansible role 'motd': Packer's shell provisioner runs the phase scripts in the machine being built, and nothing applies the role to it from outside",
      "IMGC2002 the packer target cannot express ansible role 'motd': Packer's shell provisioner runs the phase scripts in the machine being built, and nothing applies the role to it from outside",
    ]);
    // Both role steps, customize's and provision's: every refused step at once.
    expect(refusal(() => compilers['cloud-init'].compile(ir, {}))).toEqual([
      "IMGC2002 the cloud-init target cannot express ansible role 'motd': cloud-init runs no Ansible role: its commands run on the booting node, which has no copy of the role or ansible-playbook",
      "IMGC2002 the cloud-init target cannot express ansible role 'motd': cloud-init runs no Ansible role: its commands run on the booting node, which has no copy of the role or ansible-playbook",
    ]);
  });

  it('two different roles whose copies would share a name, or a role named like a phase, are IMGC2002', () => {
    const dir = tempDir('ansible-role-clash');
    cpSync(path.join(import.meta.dirname, motd), path.join(dir, 'a/motd'), { recursive: true });
    cpSync(path.join(import.meta.dirname, motd), path.join(dir, 'b/motd'), { recursive: true });
    writeFileSync(path.join(dir, 'b/motd/defaults/main.yml'), '---\nmotd_text: Other\n');
    const rel = path.relative(import.meta.dirname, dir);
    const clash = image('x').base(base).customize((p) => p.ansibleRole(`${rel}/a/motd`).ansibleRole(`${rel}/b/motd`)).toIR('x.ts');
    expect(refusal(() => compilers.ansible.compile(clash, {}))).toEqual([
      "IMGC2002 the ansible target cannot express ansible role 'motd': its copy roles/motd/defaults/main.yml differs from the one step customize.1.ansibleRole carries",
    ]);
    // A role named like a phase would mix with that phase's role.
    cpSync(path.join(import.meta.dirname, motd), path.join(dir, 'customize'), { recursive: true });
    const phaseNamed = image('x').base(base).customize((p) => p.ansibleRole(`${rel}/customize`)).toIR('x.ts');
    expect(refusal(() => compilers.ansible.compile(phaseNamed, {}))).toEqual([
      "IMGC2002 the ansible target cannot express ansible role 'customize': its copy roles/customize/ would mix with the output's own roles/customize/",
    ]);
  });
});

describe('ansibleRole: the checker sees the facts it declares', () => {
  it('a later step may require what the role declares; what it does not declare is IMGC0001 with a suggestion', () => {
    const role = { provides: { path: ['/etc/motd-imgc'] } } as const;
    const ok = image('x')
      .base(base)
      .customize((p) => p.ansibleRole(motd, role).command('cat /etc/motd-imgc', { requires: { path: ['/etc/motd-imgc'] } }))
      .toIR('x.ts');
    expect(checkImage(ok)).toEqual([]);
    const bad = image('x')
      .base(base)
      .customize((p) => p.ansibleRole(motd, role).command('cat /etc/motd-imgcc', { requires: { path: ['/etc/motd-imgcc'] } }))
      .toIR('x.ts');
    const d = checkImage(bad);
    expect(d.map((x) => x.code)).toEqual(['IMGC0001']);
    expect(`${d[0]!.message} ${d[0]!.hint ?? ''}`).toMatch(/did you mean .*\/etc\/motd-imgc\b/);
  });

  it('types: the users a role declares reach later steps; others do not', () => {
    image('x')
      .base(base)
      .customize((p) =>
        p
          .ansibleRole(motd, { provides: { user: ['motd'] } })
          .directory('/srv/a', { owner: 'motd' })
          // @ts-expect-error: the role declares no user 'motdd'
          .directory('/srv/b', { owner: 'motdd' }),
      );
  });

  it('a role requiring a fact nothing provides is IMGC0001', () => {
    const bad = image('x').base(base).customize((p) => p.ansibleRole(motd, { requires: { user: ['nginx'] } })).toIR('x.ts');
    expect(checkImage(bad).map((x) => x.code)).toEqual(['IMGC0001']);
  });
});

describe('ansibleRole: the role directory', () => {
  it('a missing directory, or one without tasks/main.yml, stops the definition at the step (IMGC1002, file:line:col)', async () => {
    const dir = tempDir('ansible-role-missing');
    const def = path.join(dir, 'node-image.ts');
    writeFileSync(
      def,
      [
        "import { debian12, image } from 'imgc';",
        'export default image(\'x\')',
        '  .base(debian12())',
        "  .customize((p) => p.ansibleRole('./roles/absent'));",
        '',
      ].join('\n'),
    );
    const missing = await loadDefinition(def, { typecheck: false });
    expect(missing.diagnostics.map((d) => [d.code, d.message, d.loc?.line, d.loc?.column])).toEqual([
      ['IMGC1002', `DefinitionError: ansibleRole('./roles/absent'): no such directory (${path.join(dir, 'roles/absent')})`, 4, 23],
    ]);
    cpSync(path.join(import.meta.dirname, motd, 'templates'), path.join(dir, 'roles/absent/templates'), { recursive: true });
    const empty = await loadDefinition(def, { typecheck: false });
    expect(empty.diagnostics.map((d) => d.message)).toEqual([`DefinitionError: ansibleRole('./roles/absent'): ${path.join(dir, 'roles/absent')} has no tasks/main.yml (or tasks/main.yaml): not an Ansible role`]);
  });

  it('a directory among a cached result\'s inputs counts as its listing: unchanged until a file is added or removed', () => {
    const dir = tempDir('ansible-role-listing');
    writeFileSync(path.join(dir, 'a'), 'a');
    const inputs = hashInputs([dir]);
    expect(inputs[0]!.sha256).not.toBe('');
    expect(inputsUnchanged(inputs)).toBe(true);
    writeFileSync(path.join(dir, 'b'), 'b');
    expect(inputsUnchanged(inputs)).toBe(false);
    rmSync(path.join(dir, 'b'));
    expect(inputsUnchanged(inputs)).toBe(true);
  });

  it('the loader\'s cached result follows an edited, added or removed role file', async () => {
    const dir = tempDir('ansible-role-load');
    cpSync(path.join(import.meta.dirname, motd), path.join(dir, 'roles/motd'), { recursive: true });
    const def = path.join(dir, 'node-image.ts');
    writeFileSync(def, ["import { debian12, image } from 'imgc';", "export default image('x').base(debian12()).customize((p) => p.ansibleRole('./roles/motd'));", ''].join('\n'));
    const files = async () => {
      const r = await loadDefinition(def, { typecheck: false });
      expect(r.diagnostics).toEqual([]);
      const s = r.ir!.phases[0]!.steps[0]!;
      return s.kind === 'ansibleRole' ? Object.fromEntries(s.files.map((f) => [f.path, f.text])) : {};
    };
    expect((await files())['templates/motd.j2']).toBe('{{ motd_text }}\n');
    writeFileSync(path.join(dir, 'roles/motd/templates/motd.j2'), 'changed {{ motd_text }}\n');
    expect((await files())['templates/motd.j2']).toBe('changed {{ motd_text }}\n');
    writeFileSync(path.join(dir, 'roles/motd/templates/extra.j2'), 'new\n');
    expect((await files())['templates/extra.j2']).toBe('new\n');
  });
});
