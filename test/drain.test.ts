// The drain phase (ready -> draining): on existing hosts only, never in an
// image or the runtime outputs; the decommission outputs run it, with its
// hooks, before the decommission hooks and the undo, and a failing step stops
// them with nothing undone.
import { execa } from 'execa';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilers, targets } from '../src/compilers/index.js';
import { shellCompiler } from '../src/compilers/shell/index.js';
import { ansibleCompiler } from '../src/compilers/ansible/index.js';
import { chrootEnv } from '../src/build/chroot.js';
import { checkImage as check } from '../src/check/checker.js';
import { lifecycle } from '../src/ir/lifecycle.js';
import { Image } from '../src/ir/schema.js';
import { image } from '../src/index.js';
import { debian12 } from '../stdlib/bases.js';
import { imgc, irOf, tempDir } from './helpers/cli.js';
import { expectGolden } from './helpers/golden.js';
import { run as ansibleRun, workspace, writeFiles } from './compilers/ansible-support.js';
import { cannotChroot, diffListings, freshRoot, listing, phaseInRoot, removeRoot } from './runtime-support.js';

const fixture = 'test/fixtures/runtime/drain.ts';

describe('drain phase', () => {
  it('runs after bootstrap and before the decommission hooks, wherever it is declared, on existing hosts only', async () => {
    const ir = await irOf(fixture);
    expect(ir.phases.map((p) => [p.name, p.runtimeOnly ?? false])).toEqual([
      ['customize', false],
      ['provision', false],
      ['artifact', false],
      ['bootstrap', true],
      ['drain', true],
      ['decommission', true],
    ]);
    expect(lifecycle.find((e) => e.to === 'draining')).toMatchObject({ from: 'ready', phase: 'drain', where: 'runtime' });
    // The IR says it too: host-only phases out of the node's order, or not on a lifecycle edge, are no image.
    const [bootstrap, drain, decommission] = ir.phases.slice(3);
    const messages = (phases: typeof ir.phases) => Image.safeParse({ ...ir, phases: [...ir.phases.slice(0, 3), ...phases] }).error?.issues.map((i) => i.message) ?? [];
    expect(messages([bootstrap!, drain!, decommission!])).toEqual([]);
    expect(messages([drain!, bootstrap!, decommission!])).toEqual(["phase bootstrap comes before drain: the host-only phases run in the order of the node's life (bootstrap, drain, decommission)"]);
    expect(messages([bootstrap!, { ...drain!, name: 'cordon' }, decommission!])).toEqual(['a phase that runs on existing hosts only is one of bootstrap, drain, decommission']);
  });

  it('its steps may need facts of the phases before it (bootstrap\'s too); what it makes reaches no image step', async () => {
    const ir = await irOf(fixture);
    // The drain command requires the path bootstrap writes: met, the contracts hold.
    expect(check(ir).filter((d) => d.severity === 'error')).toEqual([]);
    // Without bootstrap nothing provides it: the checker names it.
    const noBootstrap = { ...ir, phases: ir.phases.filter((p) => p.name !== 'bootstrap') };
    const errors = check(noBootstrap).filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.code, d.stepId])).toEqual([['IMGC0001', 'drain.1.command']]);
    // An image step that needs what drain makes: examples/broken/provided-only-by-drain.ts (IMGC0002, test/check/broken.test.ts).
  });

  it('is in no image output and not in the runtime outputs', async () => {
    const ir = await irOf(fixture);
    const drainText = /phase drain|Phase drain|drain\.(\d|pre|post)|-drain-(pre|post)|drained|admin_kubeconfig|ADMIN_KUBECONFIG/;
    for (const target of targets) {
      const text = Object.entries(compilers[target].compile(ir, {})).map(([f, c]) => `${f}\n${c}`).join('\n');
      expect(text, target).not.toMatch(drainText);
      expect(text, target).toContain('/etc/kubernetes/node.conf');
    }
    const runtime = { ...shellCompiler.compile(ir, { runtime: true }), ...ansibleCompiler.compile(ir, { runtime: true }) };
    // group_vars/all.yml holds every variable's value: runtime.yml and decommission.yml share it.
    const played = Object.entries(runtime).filter(([f]) => f !== 'group_vars/all.yml');
    expect(played.map(([f, c]) => `${f}\n${c}`).join('\n')).not.toMatch(drainText);
    expect(runtime['provision.sh']).toContain('--- phase bootstrap');
  });

  it('the decommission outputs run it first, with its hooks; shellcheck-clean, ansible-lint production; goldens', async () => {
    const ir = await irOf(fixture);
    const sh = shellCompiler.compile(ir, { decommission: true });
    const yml = ansibleCompiler.compile(ir, { decommission: true });
    expectGolden('runtime-drain/shell', sh);
    expectGolden('runtime-drain/ansible', yml);
    expect(Object.keys(sh).sort()).toEqual(['decommission.sh', 'hooks/05-drain-post.sh', 'hooks/05-drain-pre.sh', 'hooks/06-decommission-post.sh', 'hooks/06-decommission-pre.sh']);
    const script = sh['decommission.sh']!;
    const at = (s: string) => script.indexOf(s);
    expect(at('imgc_run drain.pre2.hook')).toBeGreaterThan(0);
    expect(at('imgc_run drain.1.command')).toBeGreaterThan(at('imgc_run drain.pre2.hook'));
    expect(at('undo_1()')).toBeGreaterThan(at('imgc_run drain.1.command'));
    const dir = tempDir('drain-sh');
    writeFiles(dir, sh);
    const sc = await execa('shellcheck', ['-s', 'sh', '-S', 'style', ...Object.keys(sh)], { cwd: dir, reject: false });
    expect(sc.stdout + sc.stderr).toBe('');

    const play = yml['decommission.yml']!;
    const ay = (s: string) => play.indexOf(s);
    expect(ay("Pre hook: the node may be drained")).toBeGreaterThan(0);
    expect(ay('Phase drain: its steps; on a failure its post hooks say so')).toBeGreaterThan(ay('Pre hook: the node may be drained'));
    expect(ay('Phase drain: failed on this host')).toBeGreaterThan(ay('Phase drain: its steps'));
    expect(ay('decommission.pre1.hook')).toBeGreaterThan(ay('Phase drain: failed on this host'));
    expect(ay('Decommission: read the record')).toBeGreaterThan(ay('decommission.pre1.hook'));
    const ws = workspace('drain');
    try {
      writeFiles(ws.out, yml);
      const syntax = await ansibleRun('ansible-playbook', ['--syntax-check', '-i', 'localhost,', 'decommission.yml'], ws.out, ws.home);
      expect(syntax.exitCode, syntax.all).toBe(0);
      const lint = await ansibleRun('ansible-lint', ['--offline', '--profile', 'production', '--strict', '--nocolor', '-p', 'decommission.yml'], ws.out, ws.home);
      expect(lint.exitCode, lint.all).toBe(0);
    } finally {
      ws.remove();
    }
  }, 180_000);

  it("decommission.yml carries a drain step's files (an Ansible role's copy), and passes --syntax-check with them", async () => {
    const ir = image('drain-role')
      .base(debian12())
      .provision((p) => p.file('/etc/drained', { content: 'no\n' }))
      .drain((p) => p.ansibleRole('./fixtures/roles/motd', { requires: { path: ['/etc/drained'] } }))
      .toIR('drain.test.ts');
    const yml = ansibleCompiler.compile(ir, { decommission: true });
    expect(Object.keys(yml).filter((f) => f.startsWith('roles/motd/'))).toContain('roles/motd/tasks/main.yml');
    const ws = workspace('drain-role');
    try {
      writeFiles(ws.out, yml);
      const syntax = await ansibleRun('ansible-playbook', ['--syntax-check', '-i', 'localhost,', 'decommission.yml'], ws.out, ws.home);
      expect(syntax.exitCode, syntax.all).toBe(0);
    } finally {
      ws.remove();
    }
  }, 120_000);

  it('imgc explain and the lifecycle graph show it on the ready → draining edge', async () => {
    const explain = await imgc(['explain', fixture]);
    expect(explain.stdout).toContain('phase 5 drain (on existing hosts only: never in the image)');
    const graph = await imgc(['explain', '--graph', 'lifecycle', fixture]);
    expect(graph.stdout).toMatch(/ready --> draining: phase drain .*\[hooks 2 pre, 1 post\]/);
  });

  it.skipIf(cannotChroot !== undefined)(
    `decommission.sh drains a real root first: a failing drain step stops it with nothing undone; then it drains and undoes${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`,
    async () => {
      const ir = await irOf(fixture);
      const image = shellCompiler.compile(ir, {});
      const host = shellCompiler.compile(ir, { runtime: true, decommission: true });
      const root = await freshRoot(ir, 'drain');
      try {
        const customize = await phaseInRoot(root, image, 'phases/01-customize.sh');
        expect(customize.exitCode, customize.stderr).toBe(0);
        const before = listing(root);
        const run = (script: string) => execa('chroot', [root, '/bin/sh', '-s'], { input: script, env: chrootEnv(), extendEnv: false, reject: false });
        const progress = (r: { stdout: string }) => r.stdout.split('\n').filter((l) => l.startsWith('imgc-phase ') || / (failed|start)$/.test(l));
        const provisioned = await run(host['provision.sh']!);
        expect(provisioned.exitCode, provisioned.stderr).toBe(0);
        const provisionedListing = listing(root);

        // The drain command needs what bootstrap wrote: without it, the drain step fails, and nothing is undone.
        const joined = path.join(root, 'etc/kubernetes/joined');
        renameSync(joined, `${joined}.away`);
        const failed = await run(host['decommission.sh']!);
        expect(failed.exitCode).not.toBe(0);
        expect(progress(failed)).toEqual(['imgc-step drain.pre2.hook start', 'imgc-step drain.1.command start', 'imgc-step drain.1.command failed']);
        expect(failed.stderr).toContain('imgc: step drain.1.command failed');
        renameSync(`${joined}.away`, joined);
        expect(diffListings(provisionedListing, listing(root))).toEqual([]);

        // A pre hook script that refuses stops it before the drain step.
        writeFileSync(path.join(root, 'etc/kubernetes/no-drain'), '');
        const refused = await run(host['decommission.sh']!);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stdout).toContain('imgc-step drain.pre2.hook failed');
        expect(refused.stdout).not.toContain('drain.1.command');
        rmSync(path.join(root, 'etc/kubernetes/no-drain'));

        const done = await run(host['decommission.sh']!);
        expect(done.exitCode, done.stderr).toBe(0);
        expect(done.stdout.split('\n').filter((l) => l.startsWith('imgc-phase '))).toEqual(['imgc-phase drain done changed=1', 'imgc-phase decommission done changed=3']);
        // What drain did stays (not recorded, not undone); everything provisioned is gone.
        expect(readFileSync(path.join(root, 'var/lib/drained'), 'utf8')).toBe('drained with /etc/kubernetes/admin.conf\n');
        expect(diffListings(before, listing(root))).toEqual(['+ var/lib/drained']);
        expect(existsSync(joined)).toBe(false);
      } finally {
        removeRoot(root);
      }
    },
    300_000,
  );
});
