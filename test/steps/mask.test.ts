// The mask kind: masking and unmasking systemd units, its outputs for every
// target, the checker's reading (a masked unit is no service to enable), and
// a run of the shell rendering in a real Debian root with systemd.
import path from 'node:path';
import { readlinkSync, symlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { image } from '../../src/index.js';
import { verifyRoot } from '../../src/verify/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { cannotChroot, freshRoot, phaseInRoot, removeRoot } from '../runtime-support.js';
import { outcomes, parseProgress } from '../compilers/shell-support.js';
import { outputTests } from './support.js';

// The base node-image-debian builds from (its root is in the build cache).
const base = debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] });
const ir = image('mask-test')
  .base(base)
  .provision((p) => p.maskService('apt-daily.timer').maskService('unattended-upgrades').maskService('apt-daily-upgrade.timer').unmaskService('systemd-networkd'))
  .toIR('mask-test.ts');

describe('mask: maskService and unmaskService', () => {
  it('checks clean', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('a masked service cannot be enabled later (IMGC0005)', () => {
    const later = image('x').base(base).provision((p) => p.maskService('systemd-networkd').enableService('systemd-networkd' as string)).toIR('x.ts');
    expect(checkImage(later).map((d) => `${d.code} ${d.message}`)).toEqual([
      "IMGC0005 enable of service 'systemd-networkd' requires service 'systemd-networkd', but service 'systemd-networkd' is removed earlier, in phase 'provision' (mask of service 'systemd-networkd')",
    ]);
  });

  outputTests(ir, 'steps-mask');
});

describe.skipIf(cannotChroot)('mask: the shell rendering in a real Debian root', () => {
  let root: string;
  const files = compilers.shell.compile(ir, {});
  beforeAll(async () => {
    root = await freshRoot(ir, 'mask-root');
    // Masked before: the unmask has something to do.
    symlinkSync('/dev/null', path.join(root, 'etc/systemd/system/systemd-networkd.service'));
  });
  afterAll(() => removeRoot(root));

  it('masks and unmasks the first time, changes nothing the second, and verify agrees', async () => {
    expect(verifyRoot(ir, root).failures.map((f) => f.what)).toEqual(expect.arrayContaining(["service 'apt-daily.timer' masked", "service 'unattended-upgrades' masked"]));
    const first = await phaseInRoot(root, files, 'phases/01-provision.sh');
    expect(first.exitCode, first.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${first.stdout}\n`))].map(([, o]) => o)).toEqual(['changed', 'changed', 'changed', 'changed']);
    expect(readlinkSync(path.join(root, 'etc/systemd/system/apt-daily.timer'))).toBe('/dev/null');
    expect(verifyRoot(ir, root).failures).toEqual([]);
    const second = await phaseInRoot(root, files, 'phases/01-provision.sh');
    expect(second.exitCode, second.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${second.stdout}\n`))].map(([, o]) => o)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
  });
});
