// Unit files and drop-ins as steps (the unit kind), and starting/restarting a
// service (the restart kind): outputs for every target, the checker's reading
// (a unit file provides its service, a drop-in needs its unit), the runtime
// outputs' daemon-reload, and start/restart/stop (refused only in chroot builds).
import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { CompileError } from '../../src/compilers/types.js';
import { image } from '../../src/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { tempDir } from '../helpers/temp.js';
import { outputTests, write } from './support.js';

const KUBELET = '[Unit]\nDescription=kubelet\n\n[Service]\nExecStart=/usr/local/bin/kubelet\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n';
const KUBEADM = '[Service]\nEnvironment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf"\nExecStart=\nExecStart=/usr/local/bin/kubelet $KUBELET_KUBECONFIG_ARGS\n';
// A base with systemd: enabling needs systemctl.
const base = debian12({ include: ['systemd', 'systemd-sysv'] });
const ir = image('unit-test')
  .base(base)
  .provision((p) =>
    p
      .packages(['containerd'])
      .dropIn('containerd', '10-imgc.conf', '[Service]\nLimitNOFILE=1048576\n')
      .unit('kubelet.service', KUBELET)
      .dropIn('kubelet.service', '10-kubeadm.conf', KUBEADM)
      .enableService('kubelet'),
  )
  .toIR('unit-test.ts');

describe('unit: unit files and drop-ins', () => {
  it('checks clean: the unit file provides its service, which the drop-in and the enable need', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('a drop-in of a unit nothing provides is IMGC0001', () => {
    const bare = image('x').base(debian12()).provision((p) => p.dropIn('kubelet' as never, '10-kubeadm.conf', KUBEADM)).toIR('x.ts');
    expect(checkImage(bare).map((d) => `${d.code} ${d.message}`)).toEqual(["IMGC0001 drop-in '10-kubeadm.conf' of 'kubelet.service' requires service 'kubelet', which no step or the base provides"]);
  });

  it('the runtime outputs reload systemd after a unit or drop-in changed', () => {
    const sh = compilers.shell.compile(ir, { runtime: true })['provision.sh']!;
    expect(sh).toContain('systemctl daemon-reload');
    const yml = Object.entries(compilers.ansible.compile(ir, { runtime: true })).map(([, t]) => t).join('\n');
    expect(yml).toMatch(/systemctl daemon-reload|daemon_reload: true/);
  });

  it('decommission removes the unit file and the drop-ins', () => {
    const sh = compilers.shell.compile(ir, { decommission: true })['decommission.sh']!;
    for (const p of ['/etc/systemd/system/kubelet.service', '/etc/systemd/system/kubelet.service.d/10-kubeadm.conf', '/etc/systemd/system/containerd.service.d/10-imgc.conf']) expect(sh).toContain(`imgc_undo_path ${p}`);
  });

  outputTests(ir, 'steps-unit');
});

describe('restart: startService, restartService and stopService', () => {
  const live = image('restart-test')
    .base(debian12())
    .provision((p) =>
      p
        .packages(['containerd'])
        .dropIn('containerd', '10-imgc.conf', '[Service]\nLimitNOFILE=1048576\n')
        .restartService('containerd')
        .startService('containerd')
        .stopService('containerd'),
    )
    .toIR('restart-test.ts');

  it('is refused in chroot builds (the shell and ansible image outputs) with IMGC2002, the reason and a hint', () => {
    for (const target of ['shell', 'ansible'] as const) {
      let err: unknown;
      try {
        compilers[target].compile(live, {});
      } catch (e) {
        err = e;
      }
      expect(err, target).toBeInstanceOf(CompileError);
      const ds = (err as CompileError).diagnostics;
      expect(ds.map((d) => d.stepId), target).toEqual(['provision.3.restart', 'provision.4.restart', 'provision.5.restart']);
      const d = ds[0]!;
      expect(d.code, target).toBe('IMGC2002');
      expect(d.message, target).toMatch(/cannot express restart of service 'containerd': a chroot build has no running init/);
      expect(d.hint, target).toMatch(/--target packer.*--runtime.*enableService\('containerd'\)/);
      expect(d.loc, 'points at the restartService call').toMatchObject({ file: 'test/steps/unit.test.ts' });
    }
  });

  it("runs in Packer's VM: both provisioners, with no chroot driver (shell/build.sh) in the output", async () => {
    const shell = compilers.packer.compile(live, { packerVersion: '1.6' });
    const script = Object.entries(shell).find(([f]) => /^shell\/phases\/\d+-provision\.sh$/.test(f))?.[1] ?? '';
    expect(script).toMatch(/imgc_service_now restart containerd\.service[\s\S]*imgc_service_now start containerd\.service[\s\S]*imgc_service_now stop containerd\.service/);
    expect(shell['shell/build.sh']).toBeUndefined();
    expect(shell['restart-test.pkr.hcl']).toContain('No shell/build.sh: a step needs the machine running');
    const dir = tempDir('restart-packer');
    write(dir, shell);
    const r = await execa('shellcheck', ['-s', 'sh', '-S', 'style', '-x', path.join(dir, 'shell/phases/01-provision.sh')], { reject: false, cwd: path.join(dir, 'shell/phases') });
    expect(r.stdout + r.stderr).toBe('');
    const yml = Object.values(compilers.packer.compile(live, { packerVersion: '1.6', provisioner: 'ansible' })).join('\n');
    expect(yml).toMatch(/ansible\.builtin\.systemd_service:\n\s+name: !unsafe 'containerd\.service'\n\s+state: 'stopped'/);
  });

  it('runs on live hosts: the runtime outputs (shellcheck-clean) and cloud-init', async () => {
    const files = compilers.shell.compile(live, { runtime: true });
    expect(files['provision.sh']).toContain('imgc_service_now restart containerd.service');
    expect(files['provision.sh']).toContain('imgc_service_now start containerd.service');
    expect(files['provision.sh']).toContain('imgc_service_now stop containerd.service');
    const dir = tempDir('restart-runtime');
    write(dir, files);
    const r = await execa('shellcheck', ['-s', 'sh', '-S', 'style', path.join(dir, 'provision.sh')], { reject: false });
    expect(r.stdout + r.stderr).toBe('');
    const yml = Object.values(compilers.ansible.compile(live, { runtime: true })).join('\n');
    expect(yml).toMatch(/ansible\.builtin\.systemd_service:\n\s+name: !unsafe 'containerd\.service'\n\s+state: 'restarted'/);
    const userData = compilers['cloud-init'].compile(live, {})['user-data'];
    expect(userData).toContain('- [imgc_service_now, restart, containerd.service]');
    expect(userData).toContain('- [imgc_service_now, stop, containerd.service]');
  });

  it("checks nothing at boot: what runs there is enableService's fact", async () => {
    // Imported here: a line more above would move the goldens' locations.
    const { bootChecksOf } = await import('../../src/verify/boot.js');
    expect(bootChecksOf(live).filter((c) => c.stepId.endsWith('.restart'))).toEqual([]);
  });
});
