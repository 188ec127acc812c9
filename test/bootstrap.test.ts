// The bootstrap phase: on existing hosts only, after the image's phases,
// never in an image or its outputs; the runtime outputs run it with its hooks
// after provision, and decommission undoes what it created.
import { execa } from 'execa';
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilers, targets } from '../src/compilers/index.js';
import { shellCompiler } from '../src/compilers/shell/index.js';
import { chrootEnv } from '../src/build/chroot.js';
import { Image } from '../src/ir/schema.js';
import { imgc, irOf, tempDir } from './helpers/cli.js';
import { writeFiles } from './compilers/ansible-support.js';
import { cannotChroot, diffListings, freshRoot, inRoot, listing, phaseInRoot, removeRoot } from './runtime-support.js';

const fixture = 'test/fixtures/runtime/join.ts';
const token = 'abcdef.0123456789abcdef';

describe('bootstrap phase', () => {
  it('runs after every phase of the image, wherever it is declared, and only at runtime', async () => {
    const ir = await irOf(fixture);
    expect(ir.phases.map((p) => [p.name, p.runtime, p.runtimeOnly ?? false])).toEqual([
      ['customize', false, false],
      ['provision', true, false],
      ['artifact', false, false],
      ['bootstrap', true, true],
      ['decommission', true, true],
    ]);
    expect(ir.phases[4]!.steps).toEqual([]);
    // The IR says it too: a phase for existing hosts only before a phase of the image is not an image.
    const swapped = { ...ir, phases: [ir.phases[3]!, ...ir.phases.slice(0, 3)] };
    const r = Image.safeParse(swapped);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message)).toContain('phases that run on existing hosts only come after every phase of the image');
  });

  it('is in no image output: not its steps, not its hooks, not the variable only it uses', async () => {
    const ir = await irOf(fixture);
    for (const target of targets) {
      const files = compilers[target].compile(ir, {});
      const text = Object.entries(files).map(([f, c]) => `${f}\n${c}`).join('\n');
      expect(text, target).not.toMatch(/kubelet-bootstrap|phase bootstrap|Phase bootstrap|bootstrap\.\d|join_token|JOIN_TOKEN/);
      expect(text, target).toContain('/etc/kubernetes/node.conf');
    }
  });

  it('the runtime outputs run it after provision, with its hooks; shellcheck-clean', async () => {
    const ir = await irOf(fixture);
    const sh = shellCompiler.compile(ir, { runtime: true, decommission: true });
    expect(Object.keys(sh).sort()).toEqual([
      'decommission.sh',
      'hooks/04-bootstrap-post.sh',
      'hooks/04-bootstrap-pre.sh',
      'hooks/05-decommission-post.sh',
      'hooks/05-decommission-pre.sh',
      'provision.sh',
    ]);
    const provision = sh['provision.sh']!;
    expect(provision.indexOf('--- phase provision')).toBeGreaterThan(0);
    expect(provision.indexOf('--- phase bootstrap')).toBeGreaterThan(provision.indexOf('--- phase provision'));
    expect(provision).toContain('set IMGC_VAR_JOIN_TOKEN (sensitive variable join_token)');
    expect(provision).not.toContain(token);
    // The decommission edge's hooks belong to decommission.sh: its script hook before the first undo.
    expect(provision).not.toContain('decommission.pre1.hook');
    const decommission = sh['decommission.sh']!;
    expect(decommission.indexOf('imgc_run decommission.pre1.hook')).toBeGreaterThan(0);
    expect(decommission.indexOf('imgc_run decommission.pre1.hook')).toBeLessThan(decommission.indexOf('undo_1()'));
    const dir = tempDir('bootstrap-sh');
    writeFiles(dir, sh);
    const check = await execa('shellcheck', ['-s', 'sh', '-S', 'style', ...Object.keys(sh)], { cwd: dir, reject: false });
    expect(check.stdout + check.stderr).toBe('');
    const yml = compilers.ansible.compile(ir, { runtime: true })['runtime.yml']!;
    expect(yml.indexOf('- name: Phase bootstrap (runtime)')).toBeGreaterThan(yml.indexOf('- name: Phase provision (runtime)'));
    expect(yml).not.toContain('decommission.pre');
    // The task that holds the token logs nothing; the phase first asserts the token is given (-e or a vault).
    const fileTask = yml.slice(yml.indexOf('- name: File /etc/kubernetes/bootstrap-kubelet.conf'));
    expect(fileTask.slice(0, fileTask.indexOf('\n\n'))).toContain('no_log: true');
    expect(yml.indexOf("- name: 'Sensitive variables are given: join_token")).toBeGreaterThan(yml.indexOf('- name: Phase bootstrap (runtime)'));
    // decommission.yml: pre hooks, the undo in a block whose rescue tells the post hooks it failed, post hooks.
    const undo = compilers.ansible.compile(ir, { decommission: true })['decommission.yml']!;
    const at = (s: string) => undo.indexOf(s);
    expect(at('Pre hook: the node joined')).toBeGreaterThan(0);
    expect(at('Phase decommission: its steps; on a failure its post hooks say so')).toBeGreaterThan(at('Pre hook: the node joined'));
    expect(at('rescue:')).toBeGreaterThan(at('Decommission: read the record'));
    expect(at('Phase decommission: failed on this host')).toBeGreaterThan(at('rescue:'));
    // ansible-playbook --syntax-check and ansible-lint production: test/runtime.test.ts, with this fixture.
  });

  it('imgc explain and the lifecycle graph show it on the provisioned → bootstrapped edge, and the decommission hooks on theirs', async () => {
    const explain = await imgc(['explain', fixture]);
    expect(explain.stdout).toContain('phase 4 bootstrap (on existing hosts only: never in the image)');
    const graph = await imgc(['explain', '--graph', 'lifecycle', fixture]);
    expect(graph.stdout).toMatch(/provisioned --> bootstrapped: phase bootstrap .*\[hooks 1 pre, 1 post\]/);
    expect(graph.stdout).toMatch(/draining --> decommissioned: .*\[hooks 2 pre, 1 post\]/);
  });

  it.skipIf(cannotChroot !== undefined)(
    `provision.sh joins a real root: the token reaches its file and no output; a second run changes nothing; decommission.sh leaves the root as it was${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`,
    async () => {
      const ir = await irOf(fixture);
      const image = shellCompiler.compile(ir, {});
      const runtime = shellCompiler.compile(ir, { runtime: true, decommission: true });
      const root = await freshRoot(ir, 'bootstrap');
      try {
        // Phase 1 as the image has it; then the host is what provision.sh expects.
        const customize = await phaseInRoot(root, image, 'phases/01-customize.sh');
        expect(customize.exitCode, customize.stderr).toBe(0);
        const before = listing(root);

        const withoutToken = await inRoot(root, runtime['provision.sh']!);
        expect(withoutToken.exitCode).not.toBe(0);
        expect(withoutToken.stderr).toContain('set IMGC_VAR_JOIN_TOKEN (sensitive variable join_token)');
        expect(diffListings(before, listing(root))).toEqual([]);

        const run = (script: string) =>
          execa('chroot', [root, '/bin/sh', '-s'], { input: script, env: chrootEnv({ IMGC_VAR_JOIN_TOKEN: token }), extendEnv: false, reject: false });
        const first = await run(runtime['provision.sh']!);
        expect(first.exitCode, first.stderr).toBe(0);
        const progress = (r: { stdout: string }) => r.stdout.split('\n').filter((l) => l.startsWith('imgc-phase '));
        expect(progress(first)).toEqual(['imgc-phase provision done changed=2', 'imgc-phase bootstrap done changed=2']);
        const conf = path.join(root, 'etc/kubernetes/bootstrap-kubelet.conf');
        expect(statSync(conf).mode & 0o777).toBe(0o600);
        expect(readFileSync(conf, 'utf8')).toContain(`    token: ${token}\n`);
        expect(first.stdout + first.stderr).not.toContain(token);

        const second = await run(runtime['provision.sh']!);
        expect(second.exitCode, second.stderr).toBe(0);
        expect(progress(second)).toEqual(['imgc-phase provision done changed=0', 'imgc-phase bootstrap done changed=0']);

        // The pre hook says a node that never joined is not decommissioned: it fails before any undo.
        const joined = path.join(root, 'etc/kubernetes/joined');
        renameSync(joined, `${joined}.away`);
        const refused = await run(runtime['decommission.sh']!);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stdout).toContain('imgc-step decommission.pre1.hook failed');
        expect(refused.stdout).not.toContain('undo');
        expect(existsSync(conf)).toBe(true);
        renameSync(`${joined}.away`, joined);

        const undo = await run(runtime['decommission.sh']!);
        expect(undo.exitCode, undo.stderr).toBe(0);
        expect(undo.stdout).toMatch(/imgc-step decommission\.pre1\.hook start\n[^]*imgc-step bootstrap\.1\.file start/);
        expect(diffListings(before, listing(root))).toEqual([]);
      } finally {
        removeRoot(root);
      }
    },
    300_000,
  );
});
