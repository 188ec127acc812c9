// A Puppet manifest in a real build (docs/puppet-apply.md): `imgc build
// --target shell` installs puppet in one phase and applies a manifest with a
// module (a user, a file, a package) in the next, inside the chroot; verify
// finds the facts it declares; the compiled build.sh run again on the built
// root reports the Puppet step unchanged (exit status 0 of
// --detailed-exitcodes), and so does the cloud-init target's runcmd script;
// a manifest that fails stops the build (and runcmd) with Puppet's message. `imgc build --target ansible` does the same with the ansible
// target's tasks (copy, command, cleanup, fail). The phase that installs
// puppet (and ruby) is the same in every definition, so the builds after the
// first take it from the cache.
import { execa } from 'execa';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { cloudInitView } from '../compilers/cloud-init-support.js';
import { cannotBuild, failedLogs, imgcRun, outDir, privateCache, summaryOf } from './helpers.js';

const definition = (manifest: string, modules: boolean): string => `import { debian12, image } from 'imgc';

export default image('imgc-test-puppet')
  .base(debian12())
  .customize((p) => p.packages(['puppet']))
  .provision((p) =>
    p
      .puppetApply('./puppet/${manifest}', { ${modules ? "modulePath: './puppet/modules', " : ''}provides: { user: ['deploy'], package: ['tree'], path: ['/etc/motd-puppet'] } })
      .file('/etc/deploy-owned', { owner: 'deploy', mode: '0640', content: 'deploy\\n' }),
  )
  .artifact((a) => a.dir('rootfs'));
`;

/** A directory holding the definition and the fixture's manifest and modules. */
const definitionDir = (name: string, manifest: string, modules: boolean): string => {
  const dir = tempDir(name);
  cpSync(path.join(repoRoot, 'test/fixtures/puppet'), path.join(dir, 'puppet'), { recursive: true });
  writeFileSync(path.join(dir, 'puppet/fail.pp'), "fail('imgc test: this manifest fails on purpose')\n");
  writeFileSync(path.join(dir, 'node-image.ts'), definition(manifest, modules));
  return path.join(dir, 'node-image.ts');
};

/** The uid of `user` in the root's /etc/passwd. */
const uidOf = (root: string, user: string): number => Number(readFileSync(path.join(root, 'etc/passwd'), 'utf8').split('\n').find((l) => l.startsWith(`${user}:`))?.split(':')[2]);

/**
 * Runs the cloud-init target's runcmd for `def` in `root` as cloud-init would
 * on a booting node: the script util.shellify writes of it, by /bin/sh, with
 * /proc mounted in a mount namespace of its own (gone with the process).
 */
const runcmdOn = async (def: string, root: string) => {
  const out = tempDir('puppet-apply-cloud-init');
  const c = await imgcRun(['compile', def, '--no-typecheck', '--target', 'cloud-init', '--out', out]);
  expect(c.exitCode, c.all).toBe(0);
  await cloudInitView(out, path.join(out, 'home'));
  copyFileSync(path.join(out, 'runcmd.sh'), path.join(root, 'run/imgc-runcmd.sh'));
  try {
    return await execa('unshare', ['--mount', '--propagation', 'private', '--fork', 'sh', '-c', 'mount -t proc proc "$1/proc" && exec chroot "$1" /bin/sh /run/imgc-runcmd.sh', 'sh', root], { reject: false, all: true });
  } finally {
    rmSync(path.join(root, 'run/imgc-runcmd.sh'));
  }
};

const cache = cannotBuild ? '' : privateCache('puppet-apply');

describe.skipIf(cannotBuild)('imgc build --target shell with a Puppet manifest', () => {
  it('applies it in the chroot; verify finds what it declares; build.sh again changes nothing; a failing manifest stops the build', async () => {
    const def = definitionDir('puppet-apply-def', 'site.pp', true);
    const out = outDir('puppet-apply-shell');
    let t = Date.now();
    const b = await imgcRun(['build', def, '--no-typecheck', '--target', 'shell', '--out', out], { env: { IMGC_CACHE: cache } });
    expect(b.exitCode, b.all).toBe(0);
    console.log(`imgc build --target shell, puppet installed and a manifest applied: ${((Date.now() - t) / 1000).toFixed(1)}s`);
    const root = path.join(out, 'rootfs');
    expect(readFileSync(path.join(root, 'etc/motd-puppet'), 'utf8')).toBe('Hello from Puppet, {{ not templated }} $(id)\n');
    expect(existsSync(path.join(root, 'usr/bin/tree'))).toBe(true);
    // The step after the manifest runs after it: the manifest's user owns its file.
    expect(statSync(path.join(root, 'etc/deploy-owned')).uid).toBe(uidOf(root, 'deploy'));
    // Nothing of the run's copy stays in the root.
    expect(readdirSync(path.join(root, 'run')).filter((f) => f.startsWith('imgc'))).toEqual([]);
    const steps = summaryOf(out).phases.find((p) => p.name === 'provision')!.steps;
    expect(steps.map((s) => [s.id, s.status])).toEqual([
      ['provision.1.puppetApply', 'changed'],
      ['provision.2.file', 'changed'],
    ]);
    const v = await imgcRun(['verify', def, '--no-typecheck', '--root', root]);
    expect(v.exitCode, v.all).toBe(0);

    // The compiled build.sh, on the built root: Puppet finds nothing to change (exit status 0).
    t = Date.now();
    const again = await execa('/bin/sh', [path.join(out, 'compiled', 'build.sh'), '--phase', 'provision'], { env: { IMGC_ROOT: root }, reject: false, all: true });
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).toMatch(/imgc-step provision\.1\.puppetApply unchanged\n[\s\S]*imgc-step provision\.2\.file unchanged\n[\s\S]*imgc-phase provision done changed=0/);
    console.log(`build.sh --phase provision again (puppet apply, no change): ${((Date.now() - t) / 1000).toFixed(1)}s`);

    // cloud-init's runcmd, the script cloud-init's shellify makes of it, on the built root: the manifest, applied again, succeeds.
    const runcmd = await runcmdOn(def, root);
    expect(runcmd.exitCode, runcmd.all).toBe(0);

    // A manifest that fails: the build stops at its step with Puppet's message; the phase that installs puppet comes from the cache.
    const bad = definitionDir('puppet-apply-fail-def', 'fail.pp', false);
    const failed = await runcmdOn(bad, root);
    expect(failed.exitCode).not.toBe(0);
    expect(failed.all).toContain('imgc test: this manifest fails on purpose');
    expect(failed.all).toContain('imgc: puppet apply of fail.pp failed (exit status 1)');
    t = Date.now();
    const f = await imgcRun(['build', bad, '--no-typecheck', '--target', 'shell', '--out', outDir('puppet-apply-fail')], { env: { IMGC_CACHE: cache } });
    console.log(`imgc build with a failing manifest: ${((Date.now() - t) / 1000).toFixed(1)}s`);
    expect(f.exitCode, f.all).not.toBe(0);
    expect(f.all).toContain('imgc test: this manifest fails on purpose');
    expect(f.all).toContain('imgc: puppet apply of fail.pp failed (exit status 1)');
    expect(f.all).toMatch(/provision\.1\.puppetApply/);
    expect(f.all).not.toMatch(/provision\.2\.file (changed|unchanged)/);
  }, 1_800_000);
});

describe.skipIf(cannotBuild)('imgc build --target ansible with a Puppet manifest', () => {
  it("applies it with the ansible target's tasks; verify finds what it declares; a failing manifest fails the play with Puppet's message", async () => {
    const def = definitionDir('puppet-apply-ansible-def', 'site.pp', true);
    const out = outDir('puppet-apply-ansible');
    let t = Date.now();
    const b = await imgcRun(['build', def, '--no-typecheck', '--target', 'ansible', '--out', out], { env: { IMGC_CACHE: cache } });
    expect(b.exitCode, b.all).toBe(0);
    console.log(`imgc build --target ansible with a manifest: ${((Date.now() - t) / 1000).toFixed(1)}s`);
    const root = path.join(out, 'rootfs');
    expect(readFileSync(path.join(root, 'etc/motd-puppet'), 'utf8')).toBe('Hello from Puppet, {{ not templated }} $(id)\n');
    expect(existsSync(path.join(root, 'usr/bin/tree'))).toBe(true);
    expect(statSync(path.join(root, 'etc/deploy-owned')).uid).toBe(uidOf(root, 'deploy'));
    expect(readdirSync(path.join(root, 'run')).filter((f) => f.startsWith('imgc'))).toEqual([]);
    const v = await imgcRun(['verify', def, '--no-typecheck', '--root', root]);
    expect(v.exitCode, v.all).toBe(0);

    const bad = definitionDir('puppet-apply-ansible-fail-def', 'fail.pp', false);
    t = Date.now();
    const failOut = outDir('puppet-apply-ansible-fail');
    const f = await imgcRun(['build', bad, '--no-typecheck', '--target', 'ansible', '--out', failOut], { env: { IMGC_CACHE: cache } });
    console.log(`imgc build --target ansible with a failing manifest: ${((Date.now() - t) / 1000).toFixed(1)}s`);
    expect(f.exitCode, f.all).not.toBe(0);
    // The build's summary quotes Puppet's error; the step's log has the whole message of the fail task.
    expect(f.all).toMatch(/provision\.1\.puppetApply failed[\s\S]*Evaluation Error: .*imgc test: this manifest fails on purpose/);
    expect(readFileSync(path.join(failedLogs(failOut), '02-provision/provision.1.puppetApply.log'), 'utf8')).toMatch(/puppet apply failed \(exit status 1\): [\s\S]*imgc test: this manifest fails on purpose/);
  }, 1_800_000);
});
