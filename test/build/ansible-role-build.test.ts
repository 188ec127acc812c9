// An Ansible role in a real build (docs/ansible-role.md): `imgc build --target
// ansible` applies the role's copy in the chroot, verify finds the facts the
// role declares on the root, and a changed role file is a changed phase: the
// next build runs the phase again instead of taking the cached root.
import { cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

describe.skipIf(cannotBuild)('imgc build --target ansible with an Ansible role', () => {
  const cache = cannotBuild ? '' : privateCache('ansible-role');
  const dir = tempDir('ansible-role-def');
  const def = path.join(dir, 'node-image.ts');
  const template = path.join(dir, 'roles/motd/templates/motd.j2');

  it('applies the role in the chroot; verify finds what it declares; a changed role file builds the phase again', async () => {
    cpSync(path.join(repoRoot, 'test/fixtures/roles/motd'), path.join(dir, 'roles/motd'), { recursive: true });
    writeFileSync(def, definition);

    const first = outDir('ansible-role-1');
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
