// Which live-host handlers a runtime step notifies (src/compilers/handlers.ts),
// from the facts it provides; and the fleet flags of `imgc compile`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { handlerName, phaseHandlers } from '../../src/compilers/handlers.js';
import { ansibleCompiler } from '../../src/compilers/ansible/index.js';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import { imgc, irOf, tempDir } from '../helpers/cli.js';

const notified = async (file: string) => {
  const ir = await irOf(file);
  const phase = ir.phases.find((p) => p.runtime)!;
  const plan = phaseHandlers(ir, phase);
  const bySummary = new Map<string, string[]>();
  for (const s of [...phase.pre, ...phase.steps, ...phase.post]) {
    const hs = plan.notifies.get(s.id);
    if (hs) bySummary.set(s.id, hs.map((i) => handlerName(plan.handlers[i]!)));
  }
  return { names: plan.handlers.map(handlerName), bySummary, ir, phase };
};

describe('handlers from facts', () => {
  it('the reference node: sysctl, modules, containerd restarted after its config changed, reboot for the kernel', async () => {
    const { names, bySummary, phase } = await notified('examples/node-image.ts');
    expect(names).toEqual(expect.arrayContaining(['sysctl --system', 'modprobe overlay', 'modprobe br_netfilter', 'systemctl try-restart containerd.service']));
    expect(names.some((n) => n.startsWith('reboot required: kernel package linux-image-amd64'))).toBe(true);
    // Units are reloaded and kernel settings applied before anything restarts; reboots are last.
    expect(names.indexOf('sysctl --system')).toBeLessThan(names.indexOf('systemctl try-restart containerd.service'));
    expect(names.findIndex((n) => n.startsWith('reboot'))).toBeGreaterThan(names.indexOf('systemctl try-restart containerd.service'));
    const config = phase.steps.find((s) => s.kind === 'file' && s.path.startsWith('/etc/containerd/'))!;
    expect(bySummary.get(config.id)).toEqual(['systemctl try-restart containerd.service']);
    // The package that brings containerd (and its own /etc/containerd) does not restart what it just installed.
    const pkg = phase.steps.find((s) => s.provides.some((f) => f.kind === 'service' && f.key === 'containerd'))!;
    expect(bySummary.get(pkg.id) ?? []).not.toContain('systemctl try-restart containerd.service');
  });

  it('the fleet fixture: a unit file reloads systemd and restarts its unit; its config dir restarts it too', async () => {
    const { bySummary } = await notified('test/fixtures/fleet/fleet.ts');
    expect(bySummary.get('provision.1.file')).toEqual(['systemctl daemon-reload', 'systemctl try-restart imgc-demo.service']);
    expect(bySummary.get('provision.3.file')).toEqual(['systemctl try-restart imgc-demo.service']);
    expect(bySummary.get('provision.5.sysctl')).toEqual(['sysctl --system']);
    expect(bySummary.get('provision.6.kernelModule')).toEqual(['modprobe br_netfilter']);
    expect(bySummary.has('provision.4.service')).toBe(false);
  });

  it('image builds have no handlers: only the runtime outputs do', async () => {
    const ir = await irOf('test/fixtures/fleet/fleet.ts');
    const build = Object.values(shellCompiler.compile(ir, {})).join('\n');
    expect(build).not.toContain('imgc_handler');
    expect(shellCompiler.compile(ir, { runtime: true })['provision.sh']).toContain("imgc_handler 'sysctl --system'");
    expect(Object.values(ansibleCompiler.compile(ir, {})).join('\n')).not.toContain('Handler:');
  });
});

describe('imgc compile --serial / --max-fail', () => {
  it('sets the defaults of the runtime play, overridable with -e', async () => {
    const ir = await irOf('test/fixtures/fleet/fleet.ts');
    const yml = ansibleCompiler.compile(ir, { runtime: true, serial: '25%', maxFail: 30 })['runtime.yml']!;
    expect(yml).toContain(`serial: "{{ imgc_serial | default('25%') }}"`);
    expect(yml).toContain('max_fail_percentage: "{{ imgc_max_fail | default(30) }}"');
  });

  it('takes its defaults from the definition\'s fleet(), which the command line overrides', async () => {
    const ir = await irOf('test/fixtures/fleet/batches.ts');
    expect(ir.fleet).toEqual({ serial: '50%', maxFailPercentage: 20 });
    const yml = ansibleCompiler.compile(ir, { runtime: true })['runtime.yml']!;
    expect(yml).toContain(`serial: "{{ imgc_serial | default('50%') }}"`);
    expect(yml).toContain('max_fail_percentage: "{{ imgc_max_fail | default(20) }}"');
    const out = tempDir('fleet-definition');
    const r = await imgc(['compile', '--no-typecheck', 'test/fixtures/fleet/batches.ts', '--target', 'ansible', '--runtime', '--serial', '3', '--out', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const flagged = readFileSync(path.join(out, 'runtime.yml'), 'utf8');
    expect(flagged).toContain(`serial: "{{ imgc_serial | default('3') }}"`);
    expect(flagged).toContain('max_fail_percentage: "{{ imgc_max_fail | default(20) }}"');
  });

  it('compile --decommission --serial 2 --max-fail 50 writes both into decommission.yml, with the summary plugin beside it', async () => {
    const out = tempDir('fleet-decommission');
    const r = await imgc(['compile', '--no-typecheck', 'test/fixtures/fleet/fleet.ts', '--target', 'ansible', '--decommission', '--serial', '2', '--max-fail', '50', '--out', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const yml = readFileSync(path.join(out, 'decommission.yml'), 'utf8');
    expect(yml).toContain(`serial: "{{ imgc_serial | default('2') }}"`);
    expect(yml).toContain('max_fail_percentage: "{{ imgc_max_fail | default(50) }}"');
    expect(readFileSync(path.join(out, 'callback_plugins/imgc_summary.py'), 'utf8')).toContain('def _decommission_summary(self, stats):');
  });

  it('a definition\'s fleet() with values Ansible cannot take is an error naming them', async () => {
    const r = await imgc(['check', '--no-typecheck', 'test/fixtures/fleet/batches-bad.ts']);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain('fleet(): serial is a number of hosts (2) or a percentage of them (25%); maxFailPercentage is a whole percentage from 0 to 100');
    expect(r.all).toContain('batches-bad.ts:6:4 - error IMGC1002');
  });

  it('refuses a bad value, or one for a target or mode that has no fleet, as usage errors', async () => {
    const out = tempDir('fleet-flags');
    const bad = await imgc(['compile', '--no-typecheck', 'test/fixtures/fleet/fleet.ts', '--target', 'ansible', '--runtime', '--serial', 'lots', '--out', out]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--serial takes a number of hosts or a percentage (2, 25%), not 'lots'");
    const pct = await imgc(['compile', '--no-typecheck', 'test/fixtures/fleet/fleet.ts', '--target', 'ansible', '--runtime', '--max-fail', '101', '--out', out]);
    expect(pct.exitCode).toBe(2);
    const shell = await imgc(['compile', '--no-typecheck', 'test/fixtures/fleet/fleet.ts', '--target', 'shell', '--runtime', '--serial', '2', '--out', out]);
    expect(shell.exitCode).toBe(2);
    expect(shell.stderr).toContain('--serial is for a fleet: --target ansible with --runtime or --decommission');
  });
});
