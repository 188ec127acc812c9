// Conditions in real builds (docs/conditions.md): the same definition built
// with other values takes other steps, through the shell target and through
// Ansible in the chroot; verify promises what the steps taken provide, and a
// standalone verify with other values than the build's finds the difference.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { cannotBuild, imgcRun, outDir, privateCache, read, summaryOf } from './helpers.js';

const fixture = path.join(repoRoot, 'test/build/fixtures/conditions.ts');

const rootOf = (out: string) => {
  const root = path.join(out, 'rootfs');
  return {
    role: read(path.join(root, 'etc/kubernetes/role')),
    mode: (statSync(path.join(root, 'etc/kubernetes')).mode & 0o777).toString(8),
    manifests: existsSync(path.join(root, 'etc/kubernetes/manifests')),
    audit: existsSync(path.join(root, 'etc/kubernetes/audit.conf')),
    auditor: read(path.join(root, 'etc/passwd')).includes('\nauditor:'),
  };
};

describe.skipIf(cannotBuild)('imgc build with conditions', () => {
  // A cache of the file's own, shared by its builds (the base is laid down once): the phases run, so their steps report.
  const cache = cannotBuild ? '' : privateCache('conditions');
  it('shell: the default values take the worker branch and leave the audit steps out', async () => {
    const out = outDir('cond-shell');
    const b = await imgcRun(['build', fixture, '--no-typecheck', '--out', out], { env: { IMGC_CACHE: cache } });
    expect(b.exitCode, b.all).toBe(0);
    expect(rootOf(out)).toEqual({ role: 'worker\n', mode: '750', manifests: false, audit: false, auditor: false });
    const steps = summaryOf(out).phases.find((p) => p.name === 'provision')!.steps;
    expect(steps.filter((s) => s.status === 'skipped').map((s) => s.id)).toEqual(['provision.1.directory', 'provision.2.directory', 'provision.5.user', 'provision.6.file']);
  }, 900_000);

  it('ansible: other values take the other steps, and verify holds the root to them', async () => {
    const out = outDir('cond-ansible');
    const b = await imgcRun(['build', fixture, '--no-typecheck', '--target', 'ansible', '--out', out, '--var', 'role=control-plane', '--var', 'audit=true'], {
      env: { IMGC_CACHE: cache },
    });
    expect(b.exitCode, b.all).toBe(0);
    expect(rootOf(out)).toEqual({ role: 'control-plane\n', mode: '755', manifests: true, audit: true, auditor: true });
    const steps = summaryOf(out).phases.find((p) => p.name === 'provision')!.steps;
    expect(steps.filter((s) => s.status === 'skipped').map((s) => s.id)).toEqual(['provision.3.directory']);
    // The same root, verified with the default values: the worker's directory mode is not what is there.
    const other = await imgcRun(['verify', fixture, '--no-typecheck', '--root', path.join(out, 'rootfs')]);
    expect(other.exitCode, other.all).toBe(1);
    expect(other.all).toMatch(/\/etc\/kubernetes/);
    const same = await imgcRun(['verify', fixture, '--no-typecheck', '--root', path.join(out, 'rootfs'), '--var', 'role=control-plane', '--var', 'audit=true']);
    expect(same.exitCode, same.all).toBe(0);
  }, 900_000);
});
