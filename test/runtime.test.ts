// --runtime: the host contract (computed from the IR) and the preflight that
// checks it on a real Debian root, changing nothing when something is missing.
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { hostContract, runtimePlan } from '../src/compilers/runtime.js';
import { shellCompiler } from '../src/compilers/shell/index.js';
import { ansibleCompiler } from '../src/compilers/ansible/index.js';
import { imgc, irOf, tempDir } from './helpers/cli.js';
import { image } from '../src/index.js';
import { debian12 } from '../stdlib/bases.js';
import { run as ansibleRun, workspace, writeFiles } from './compilers/ansible-support.js';
import { cannotChroot, diffListings, freshRoot, inRoot, listing, playInRoot, removeRoot, withAptReadyRoot, withPython } from './runtime-support.js';

const fixture = 'test/fixtures/runtime/round-trip.ts';

describe('host contract', () => {
  it('holds what the runtime phase needs from the base and phase 1, not what it makes itself', async () => {
    const ir = await irOf(fixture);
    const c = hostContract(ir);
    const labels = c.facts.map((f) => f.label);
    expect(c.distro).toBe('debian');
    expect(c.release).toBe('12');
    expect(labels).toContain("user 'ops'");
    expect(labels).toContain("path '/etc/demo'");
    expect(labels).toContain("command 'systemctl'");
    // Made inside the runtime phase: not preconditions.
    expect(labels).not.toContain("group 'demo'");
    expect(labels).not.toContain("user 'svc'");
    expect(labels).not.toContain("service 'imgc-demo'");
  });

  it('asks a path its type, owner, group and mode, and a pinned package its version, not the versions the base had; says what the host has', async () => {
    // dpkg at a version no host has: the preflight fails here, on this machine, reading only.
    const ir = image('pins')
      .base(debian12())
      .customize((p) => p.packages(['dpkg=0.0-imgc']))
      .provision((p) => p.command('dpkg --version >/dev/null', { requires: { package: ['dpkg', 'bash'], path: ['/etc'] } }))
      .toIR();
    const facts = new Map(hostContract(ir).facts.map((f) => [f.key, f.details]));
    expect(facts.get('dpkg')).toEqual({ version: '0.0-imgc' });
    expect(facts.has('bash')).toBe(true);
    expect(facts.get('bash')).toBeUndefined();
    expect(facts.get('/etc')).toEqual({ type: 'dir', owner: 'root', group: 'root', mode: '0755' });
    const installed = (await execa('dpkg-query', ['-W', '-f=${Version}', 'dpkg'])).stdout;
    const want = `package 'dpkg' (version 0.0-imgc) (this host: version ${installed})`;

    // shell: the preflight's helpers and checks, run by sh here (the script's steps are not: they come after).
    const sh = shellCompiler.compile(ir, { runtime: true })['provision.sh']!;
    const dir = tempDir('runtime-pins');
    writeFiles(dir, { 'provision.sh': sh });
    const lint = await execa('shellcheck', ['-s', 'sh', '-S', 'style', 'provision.sh'], { cwd: dir, reject: false });
    expect(lint.stdout + lint.stderr).toBe('');
    const preflight = sh.slice(0, sh.indexOf('if [ "$imgc_missing" -gt 0 ]; then'));
    const r = await execa('sh', ['-c', `${preflight}\nexit "$imgc_missing"`], { reject: false });
    expect(r.stderr.trim().split('\n')).toEqual([`imgc: preflight: missing ${want}`]);

    // ansible: the preflight play alone (it only reads), on this machine.
    const w = workspace('pins');
    try {
      const files = ansibleCompiler.compile(ir, { runtime: true });
      const yml = files['runtime.yml']!;
      const second = yml.indexOf('\n- name:', yml.indexOf('- name:') + 1);
      writeFiles(w.out, { ...files, 'runtime.yml': second < 0 ? yml : `${yml.slice(0, second)}\n`, 'inventory.ini': 'localhost ansible_connection=local\n' });
      const a = await ansibleRun('ansible-playbook', ['-i', 'inventory.ini', 'runtime.yml'], w.out, w.home);
      expect(a.exitCode, a.all).toBe(2);
      expect(a.all).toContain(`imgc: preflight: missing ${want}; nothing was changed`);
    } finally {
      w.remove();
    }
  }, 300_000);

  it('records only what the runtime phase creates (not facts of the base or phase 1)', async () => {
    const ir = await irOf(fixture);
    const tokens = runtimePlan(ir).phases.flatMap((p) => p.steps.flatMap((s) => s.creations.map((c) => c.token)));
    expect(tokens).toContain('provision.1.packages#0');
    expect(runtimePlan(ir).phases[0]!.steps.find((s) => s.step.id === 'provision.3.user')!.creations).toContainEqual(expect.objectContaining({ kind: 'user', home: { token: 'provision.3.user#home', path: '/home/svc' } }));
    expect(tokens.some((t) => t.startsWith('customize.'))).toBe(false);
  });

  it('the node-image example compiles for both targets, shell output shellcheck-clean', async () => {
    const ir = await irOf('examples/node-image.ts');
    const files = shellCompiler.compile(ir, { runtime: true, decommission: true });
    const dir = tempDir('runtime-sh');
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFiles(dir, { [rel]: text });
    }
    const r = await execa('shellcheck', ['-s', 'sh', '-S', 'style', ...Object.keys(files)], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(Object.keys(ansibleCompiler.compile(ir, { runtime: true, decommission: true }))).toEqual(expect.arrayContaining(['runtime.yml', 'decommission.yml']));
  });

  it('imgc compile --runtime on a target without it is a usage error naming the targets that have it', async () => {
    const r = await imgc(['compile', '--no-typecheck', fixture, '--target', 'packer', '--runtime', '--out', tempDir('rt-packer')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/ansible, shell/);
  });
});

describe.each(['examples/node-image.ts', fixture, 'test/fixtures/runtime/join.ts'])('ansible --runtime --decommission of %s', (file) => {
  it('passes ansible-playbook --syntax-check and ansible-lint --profile production', async () => {
    const ir = await irOf(file);
    const files = ansibleCompiler.compile(ir, { runtime: true, decommission: true });
    const ws = workspace('runtime');
    try {
      writeFiles(ws.out, files);
      const syntax = await ansibleRun('ansible-playbook', ['--syntax-check', '-i', 'localhost,', 'runtime.yml', 'decommission.yml'], ws.out, ws.home);
      expect(syntax.exitCode, syntax.all).toBe(0);
      const lint = await ansibleRun('ansible-lint', ['--offline', '--profile', 'production', '--strict', '--nocolor', '-p', 'runtime.yml', 'decommission.yml'], ws.out, ws.home);
      expect(lint.exitCode, lint.all).toBe(0);
      // The preflight play comes first and fails with the list.
      expect(files['runtime.yml']!.indexOf('Preflight: host contract')).toBeLessThan(files['runtime.yml']!.indexOf('(runtime)'));
      expect(files['runtime.yml']).toContain('ansible.builtin.fail');
    } finally {
      ws.remove();
    }
  }, 180_000);
});

describe('preflight on a real root', () => {
  it.skipIf(cannotChroot !== undefined)(`shell: a root without phase 1 stops with exit 3, names the user, changes nothing${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`, async () => {
    const ir = await irOf(fixture);
    const script = shellCompiler.compile(ir, { runtime: true })['provision.sh']!;
    const root = await freshRoot(ir, 'preflight');
    try {
      // A base directory with another mode than the base's: named with what the host has.
      chmodSync(path.join(root, 'opt'), 0o700);
      const before = listing(root);
      const r = await inRoot(root, script);
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain("imgc: preflight: missing user 'ops'");
      expect(r.stderr).toContain("missing path '/etc/demo' (type dir, mode 0755) (this host: no such path)");
      expect(r.stderr).toContain("missing path '/opt' (type dir, owner root, group root, mode 0755) (this host: type dir, owner root, group root, mode 0700)");
      expect(r.stderr).not.toContain("missing path '/home'");
      expect(r.stderr).toContain('nothing was changed');
      expect(r.stderr).not.toContain("missing command 'systemctl'");
      expect(r.stdout).toBe('');
      expect(diffListings(before, listing(root))).toEqual([]);
    } finally {
      removeRoot(root);
    }
  }, 300_000);

  it.skipIf(cannotChroot !== undefined)(`ansible: a root without python3 fails the preflight naming python3, changes nothing${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`, async () => {
    const ir = await irOf(fixture);
    const files = ansibleCompiler.compile(ir, { runtime: true });
    const root = await freshRoot(ir, 'preflight-python');
    try {
      const before = listing(root);
      const r = await playInRoot(root, files, 'runtime.yml');
      expect(r.exitCode, r.all).toBe(2);
      expect(r.all).toContain('imgc: preflight: missing python3');
      expect(r.all).toContain('nothing was changed');
      expect(r.all).not.toContain('Phase provision');
      expect(diffListings(before, listing(root))).toEqual([]);
    } finally {
      removeRoot(root);
    }
  }, 300_000);

  it.skipIf(cannotChroot !== undefined)(`ansible: a root without phase 1 fails the preflight play, names the user, changes nothing${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`, async () => {
    const ir = await irOf(fixture);
    const files = ansibleCompiler.compile(ir, { runtime: true });
    const root = await freshRoot(ir, 'preflight-ansible');
    await withAptReadyRoot(root, async () => {
      await withPython(root);
      chmodSync(path.join(root, 'opt'), 0o700);
      const before = listing(root);
      const r = await playInRoot(root, files, 'runtime.yml');
      expect(r.exitCode, r.all).toBe(2);
      expect(r.all).toMatch(/imgc: preflight: missing [^\n]*user 'ops'[^\n]*path '\/etc\/demo'[^\n]*; nothing was changed/);
      expect(r.all).toContain("path '/opt' (type dir, owner root, group root, mode 0755) (this host: type dir, owner root, group root, mode 0700)");
      expect(r.all).toContain("path '/etc/demo' (type dir, mode 0755) (this host: no such path)");
      expect(r.all).not.toMatch(/imgc: preflight: missing [^\n]*path '\/home'/);
      expect(r.all).not.toMatch(/missing [^\n]*command 'systemctl'/);
      expect(r.all).not.toContain('Phase provision');
      expect(diffListings(before, listing(root))).toEqual([]);
    });
  }, 600_000);
});
