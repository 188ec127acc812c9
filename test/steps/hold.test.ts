// The hold kind: apt-mark hold/unhold, its outputs for every target, the
// checker's reading (only what is installed can be held), and a run of the
// shell rendering in a real Debian root.
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { image } from '../../src/index.js';
import { verifyRoot } from '../../src/verify/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { cannotChroot, freshRoot, phaseInRoot, removeRoot } from '../runtime-support.js';
import { outcomes, parseProgress } from '../compilers/shell-support.js';
import { outputTests } from './support.js';

const base = debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo', 'iproute2', 'iptables'] });
const ir = image('hold-test')
  .base(base)
  .provision((p) => p.hold(['sudo', 'kmod']).unhold(['procps']))
  .toIR('hold-test.ts');

describe('hold: hold and unhold', () => {
  it('checks clean', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('only an installed package can be held (IMGC0001)', () => {
    const bad = image('x').base(base).provision((p) => p.hold(['kubelet' as string])).toIR('x.ts');
    expect(checkImage(bad).map((d) => d.code)).toEqual(['IMGC0001']);
  });

  outputTests(ir, 'steps-hold');
});

describe.skipIf(cannotChroot)('hold: the shell rendering in a real Debian root', () => {
  let root: string;
  const files = compilers.shell.compile(ir, {});
  beforeAll(async () => {
    root = await freshRoot(ir, 'hold-root');
    await execa('chroot', [root, 'apt-mark', 'hold', 'procps']);
  });
  afterAll(() => removeRoot(root));

  it('holds and releases the first time, changes nothing the second, and verify agrees', async () => {
    expect(verifyRoot(ir, root).failures.map((f) => f.what)).toEqual(["package 'sudo' held", "package 'kmod' held", "package 'procps' not held"]);
    const first = await phaseInRoot(root, files, 'phases/01-provision.sh');
    expect(first.exitCode, first.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${first.stdout}\n`))].map(([, o]) => o)).toEqual(['changed', 'changed']);
    expect((await execa('chroot', [root, 'apt-mark', 'showhold'])).stdout.split('\n').sort()).toEqual(['kmod', 'sudo']);
    expect(verifyRoot(ir, root).failures).toEqual([]);
    const second = await phaseInRoot(root, files, 'phases/01-provision.sh');
    expect([...outcomes(parseProgress(`${second.stdout}\n`))].map(([, o]) => o)).toEqual(['unchanged', 'unchanged']);
  });
});
