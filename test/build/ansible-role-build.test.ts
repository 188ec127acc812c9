// An Ansible role in a real build (docs/ansible-role.md): `imgc build --target
// ansible` applies the role's copy in the chroot, verify finds the facts the
// role declares on the root, and a changed role file is a changed phase: the
// next build runs the phase again instead of taking the cached root. `imgc
// build --target shell` applies the same role from the build machine between
// the parts of the phase script (the same definition and role), and the
// compiled build.sh does it again on the built root, changing nothing; without
// ansible-playbook, build.sh stops before it touches the root.
import { execa } from 'execa';
import { cpSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { cannotBuild, imgcRun, outDir, privateCache, summaryOf } from './helpers.js';

const definition = `import { debian12, image } from 'imgc';

export default image('imgc-test-ansible-role')
  .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] }))
  .customize((p) =>
    p
      .ansibleRole('./roles/motd', { provides: { user: ['motd'], group: ['motd'], path: ['/etc/motd-imgc'] }, vars: { motd_text: 'Hello from imgc' } })
      .file('/etc/motd-owner', { owner: 'motd', mode: '0640', content: 'motd\\n' }),
  )
  .artifact((a) => a.dir('rootfs'));
`;

/** The uid of `user` in the root's /etc/passwd. */
const uidOf = (root: string, user: string): number => Number(readFileSync(path.join(root, 'etc/passwd'), 'utf8').split('\n').find((l) => l.startsWith(`${user}:`))?.split(':')[2]);

/** A directory holding the definition and its role (the fixture's copy). */
const definitionDir = (name: string): string => {
  const dir = tempDir(name);
  cpSync(path.join(repoRoot, 'test/fixtures/roles/motd'), path.join(dir, 'roles/motd'), { recursive: true });
  writeFileSync(path.join(dir, 'node-image.ts'), definition);
  return dir;
};

// One cache for both targets' builds: the base is made (or copied from the shared cache) once.
const cache = cannotBuild ? '' : privateCache('ansible-role');

describe.skipIf(cannotBuild)('imgc build --target ansible with an Ansible role', () => {
  it('applies the role in the chroot; verify finds what it declares; a changed role file builds the phase again', async () => {
    const dir = definitionDir('ansible-role-def');
    const def = path.join(dir, 'node-image.ts');
    const template = path.join(dir, 'roles/motd/templates/motd.j2');

    // A comma in the root's path: ansible-playbook's inventory would split it there.
    const first = outDir('ansible-role,1');
    const b1 = await imgcRun(['build', def, '--no-typecheck', '--target', 'ansible', '--out', first], { env: { IMGC_CACHE: cache } });
    expect(b1.exitCode, b1.all).toBe(0);
    const root1 = path.join(first, 'rootfs');
    expect(readFileSync(path.join(root1, 'etc/motd-imgc'), 'utf8')).toBe('Hello from imgc\n');
    const uid = uidOf(root1, 'motd');
    expect(statSync(path.join(root1, 'etc/motd-imgc')).uid).toBe(uid);
    expect(statSync(path.join(root1, 'etc/motd-owner')).uid).toBe(uid);
    const v = await imgcRun(['verify', def, '--no-typecheck', '--root', root1]);
    expect(v.exitCode, v.all).toBe(0);
    expect(summaryOf(first).phases.find((p) => p.name === 'customize')!.cached).toBe(false);

    // The same definition, one role file changed: not the cached root of the first build.
    writeFileSync(template, 'Changed: {{ motd_text }}\n');
    const second = outDir('ansible-role-2');
    const b2 = await imgcRun(['build', def, '--no-typecheck', '--target', 'ansible', '--out', second], { env: { IMGC_CACHE: cache } });
    expect(b2.exitCode, b2.all).toBe(0);
    expect(summaryOf(second).phases.find((p) => p.name === 'customize')!.cached).toBe(false);
    expect(readFileSync(path.join(second, 'rootfs/etc/motd-imgc'), 'utf8')).toBe('Changed: Hello from imgc\n');

    // And unchanged, the phase's root is the cached one.
    const third = outDir('ansible-role-3');
    const b3 = await imgcRun(['build', def, '--no-typecheck', '--target', 'ansible', '--out', third], { env: { IMGC_CACHE: cache } });
    expect(b3.exitCode, b3.all).toBe(0);
    expect(summaryOf(third).phases.find((p) => p.name === 'customize')!.cached).toBe(true);
  }, 1_800_000);
});

describe.skipIf(cannotBuild)('imgc build --target shell with an Ansible role', () => {
  it('applies the role from the build machine between the parts of the phase; verify finds what it declares; build.sh again changes nothing', async () => {
    const def = path.join(definitionDir('ansible-role-shell-def'), 'node-image.ts');
    const out = outDir('ansible-role-shell,1');
    const t = Date.now();
    const b = await imgcRun(['build', def, '--no-typecheck', '--target', 'shell', '--out', out], { env: { IMGC_CACHE: cache } });
    expect(b.exitCode, b.all).toBe(0);
    console.log(`imgc build --target shell with a role: ${((Date.now() - t) / 1000).toFixed(1)}s`);
    const root = path.join(out, 'rootfs');
    expect(readFileSync(path.join(root, 'etc/motd-imgc'), 'utf8')).toBe('Hello from imgc\n');
    // The step after the role runs after it: the role's user owns its file.
    const uid = uidOf(root, 'motd');
    expect(statSync(path.join(root, 'etc/motd-owner')).uid).toBe(uid);
    // Nothing of the run stays in the root: no module files, no staged scripts, no policy-rc.d.
    for (const left of ['run/imgc-ansible', 'run/imgc', 'usr/sbin/policy-rc.d', 'root/.ansible']) expect(existsSync(path.join(root, left)), left).toBe(false);
    const steps = summaryOf(out).phases.find((p) => p.name === 'customize')!.steps;
    expect(steps.map((s) => [s.id, s.status])).toEqual([
      ['customize.1.ansibleRole', 'changed'],
      ['customize.2.file', 'changed'],
    ]);
    const v = await imgcRun(['verify', def, '--no-typecheck', '--root', root]);
    expect(v.exitCode, v.all).toBe(0);

    // The compiled build.sh, on the built root: the role's play and the part after it, each unchanged.
    const compiled = path.join(out, 'compiled');
    const again = await execa('/bin/sh', [path.join(compiled, 'build.sh'), '--phase', 'customize'], { env: { IMGC_ROOT: root }, reject: false, all: true });
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).toMatch(/imgc: step customize\.1\.ansibleRole: ansible-playbook 01-customize\.1\.yml[\s\S]*changed=0 [\s\S]*imgc-step customize\.2\.file unchanged\nimgc-phase customize done changed=0/);
    for (const left of ['run/imgc-ansible', 'run/imgc', 'usr/sbin/policy-rc.d']) expect(existsSync(path.join(root, left)), left).toBe(false);

    // A play that fails stops the phase there: build.sh exits with its status, the part after it does not run.
    writeFileSync(
      path.join(compiled, '01-customize.1.yml'),
      '---\n- name: Fails\n  hosts: all\n  gather_facts: false\n  tasks:\n    - name: Fail\n      ansible.builtin.fail:\n        msg: role failed\n',
    );
    const failed = await execa('/bin/sh', [path.join(compiled, 'build.sh'), '--phase', 'customize'], { env: { IMGC_ROOT: root }, reject: false, all: true });
    expect(failed.exitCode, failed.all).toBe(2);
    expect(failed.all).toContain('imgc: phase customize failed (exit status 2)');
    expect(failed.all).not.toContain('customize.2.file');
    for (const left of ['run/imgc-ansible', 'usr/sbin/policy-rc.d']) expect(existsSync(path.join(root, left)), left).toBe(false);

    // Without ansible-playbook on the build machine: the package to install, and the root untouched.
    const bin = tempDir('ansible-role-no-ansible');
    for (const tool of ['dirname', 'id']) symlinkSync(`/usr/bin/${tool}`, path.join(bin, tool));
    const bare = await execa('/bin/sh', [path.join(compiled, 'build.sh')], { env: { IMGC_ROOT: root, PATH: bin }, extendEnv: false, reject: false, all: true });
    expect(bare.exitCode).toBe(1);
    expect(bare.all).toBe('imgc: ansible-playbook not found: this image applies Ansible roles from this machine; install the ansible package (apt-get install ansible)');
    expect(existsSync(path.join(root, 'usr/sbin/policy-rc.d'))).toBe(false);
  }, 1_800_000);
});
