// The stdlib modules that make a node shippable (docs/boot.md): they check
// clean on Debian 12, and the break-glass console password is off unless used
// and the IR only references it.
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { image, variable, z } from '../../src/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { bootable, cloudInit, consolePassword, containerd, network, sshHardening, sysprep } from '../../stdlib/modules.js';

const base = debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'iproute2'] });

describe('a shippable node', () => {
  it('network, cloud-init, sysprep and bootable check clean together', () => {
    const ir = image('ship')
      .base(base)
      .provision((p) => p.use(sshHardening()).use(containerd()).use(bootable()).use(network()).use(cloudInit()).use(sysprep()))
      .toIR('ship.ts');
    expect(checkImage(ir).filter((d) => d.severity === 'error')).toEqual([]);
    const files = ir.phases.flatMap((ph) => ph.steps).filter((s) => s.kind === 'file').map((s) => (s as { path: string }).path);
    expect(files).toEqual(expect.arrayContaining(['/etc/systemd/network/80-imgc-dhcp.network', '/etc/cloud/cloud.cfg.d/91_imgc.cfg', '/etc/kernel/postinst.d/zz-imgc-esp', '/etc/initramfs/post-update.d/zz-imgc-esp', '/etc/fstab']));
  });

  it('the console password is a sensitive hash, set with chpasswd -e, and only referenced in the IR', () => {
    const hash = variable('console_password_hash', z.string(), { sensitive: true, description: "root's console password, as a crypt(3) hash" });
    const ir = image('break-glass').base(base).provision((p) => p.use(consolePassword(hash))).toIR('break-glass.ts');
    const step = ir.phases.flatMap((ph) => ph.steps).find((s) => s.kind === 'command') as { run: string };
    expect(step.run).toMatch(/\| chpasswd -e$/);
    // The command holds a reference to the variable, which has no value before the build gives it one.
    expect(step.run).toContain('console_password_hash');
    expect(hash.options.sensitive).toBe(true);
    // Without the module there is no console password at all.
    const without = image('no-break-glass').base(base).provision((p) => p.use(bootable())).toIR('no.ts');
    expect(without.phases.flatMap((ph) => ph.steps).some((s) => s.kind === 'command')).toBe(false);
  });
});
