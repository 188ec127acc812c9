// imgc probe on a real root: the base root the reference example starts from,
// read as a directory, as a tarball, as a raw ext4 image and as qcow2 (never
// mounted) gives the same facts; used with check --against, the example's
// phases fit it with no false alarm; diffed against an expected contract, it
// names what the root lacks or has with other details.
import { execa } from 'execa';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { contractFrom, contractJson, type Contract } from '../../src/contract/contract.js';
import { imgc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { cannotBuild, imgcRun, outDir, privateCache } from './helpers.js';

const include = ['iproute2', 'iptables', 'kmod', 'procps', 'sudo', 'systemd', 'systemd-sysv'];

const probe = async (args: string[]): Promise<Contract> => {
  const r = await imgc(['probe', ...args]);
  expect(r.exitCode, r.all).toBe(0);
  return contractFrom(JSON.parse(r.stdout), 'probe');
};

describe.skipIf(cannotBuild)('imgc probe', () => {
  let dir: string;
  let tar: string;
  let root: string;
  let fromRoot: Contract;
  beforeAll(async () => {
    dir = tempDir('probe');
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    // The reference example's base, as a tarball: `imgc build` of nothing but that base.
    const def = path.join(dir, 'base.ts');
    writeFileSync(def, `import { debian12, image } from 'imgc';\nexport default image('base').base(debian12({ include: ${JSON.stringify(include)} })).artifact((a) => a.tar('rootfs.tar'));\n`);
    const out = outDir('probe-base');
    const b = await imgcRun(['build', '--no-typecheck', def, '--out', out], { env: { IMGC_CACHE: privateCache('probe') } });
    expect(b.exitCode, b.all).toBe(0);
    tar = path.join(out, 'rootfs.tar');
    root = path.join(dir, 'root');
    mkdirSync(root);
    await execa('tar', ['-xf', tar, '-C', root, '--numeric-owner']);
    fromRoot = await probe(['--root', root]);
  }, 1_200_000);

  it('reads users, groups, packages with versions, paths with owners and modes, services, commands, sysctls and the distro', () => {
    const has = (kind: string, key: string) => fromRoot.facts.find((f) => f.kind === kind && f.key === key);
    expect(fromRoot).toMatchObject({ contract: 1, image: 'root', phase: 'base', base: { name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm' } });
    expect(has('user', 'root')).toBeDefined();
    expect(has('group', 'sudo')).toBeDefined();
    expect(has('package', 'systemd')?.version).toMatch(/^252\./);
    expect(has('path', '/etc/passwd')).toEqual({ kind: 'path', key: '/etc/passwd', type: 'file', owner: 'root', group: 'root', mode: '0644' });
    expect(has('path', '/var/mail')).toMatchObject({ group: 'mail', mode: '2775' });
    expect(has('service', 'systemd-journald')).toBeDefined();
    expect(has('command', 'sudo')).toBeDefined();
    expect(has('sysctl', 'fs.protected_regular')).toBeDefined();
  });

  it('a tarball, a raw ext4 image and a qcow2 image of the same root give the same facts', async () => {
    const raw = path.join(dir, 'root.raw');
    const qcow2 = path.join(dir, 'root.qcow2');
    await execa('mkfs.ext4', ['-q', '-F', '-d', root, raw, '1G']);
    await execa('qemu-img', ['convert', '-O', 'qcow2', raw, qcow2]);
    const facts = (c: Contract) => c.facts.filter((f) => f.key !== '/lost+found');
    expect(facts(await probe(['--image', tar]))).toEqual(fromRoot.facts);
    expect(facts(await probe(['--image', raw]))).toEqual(fromRoot.facts);
    expect(facts(await probe(['--image', qcow2]))).toEqual(fromRoot.facts);
  }, 600_000);

  it('as a base, the probe lets the reference example\'s phases check with no false alarm', async () => {
    const file = path.join(dir, 'probe.json');
    writeFileSync(file, contractJson(fromRoot));
    const r = await imgc(['check', '--no-typecheck', 'examples/node-image.ts', '--against', file]);
    expect(r.exitCode, r.all).toBe(0);
  });

  it('diff EXPECTED PROBE names what the root lacks and what it has with other details; --expect finds facts the bounded listing leaves out', async () => {
    const expected = path.join(dir, 'customize.json');
    const w = await imgc(['contract', '--no-typecheck', 'examples/node-image.ts', '--phase', 'customize', '--out', expected]);
    expect(w.exitCode, w.all).toBe(0);
    const c = contractFrom(JSON.parse(readFileSync(expected, 'utf8')), expected);
    const deep = { kind: 'path' as const, key: '/usr/share/doc/bash/copyright' };
    const strict = { ...c, facts: [...c.facts.filter((f) => f.key !== '/etc/passwd'), { kind: 'path' as const, key: '/etc/passwd', mode: '0600' }, deep] };
    writeFileSync(expected, contractJson(strict));
    const probed = path.join(dir, 'probed.json');
    writeFileSync(probed, contractJson(await probe(['--root', root, '--expect', expected])));
    const d = await imgc(['contract', 'diff', expected, probed]);
    expect(d.exitCode).toBe(1);
    expect(d.stdout).toMatch(/error IMGC3001: user 'ops' holds in .* but not in/);
    expect(d.stdout).toMatch(/error IMGC3001: path '\/etc\/sudoers.d\/admins' holds in/);
    expect(d.stdout).toContain("error IMGC3002: path '/etc/passwd' changed: mode 0600 → type file, owner root, group root, mode 0644");
    expect(d.stdout).not.toMatch(/user 'root' holds/);
    expect(d.stdout).not.toContain(deep.key);
    const bounded = path.join(dir, 'bounded.json');
    writeFileSync(bounded, contractJson(fromRoot));
    const without = await imgc(['contract', 'diff', expected, bounded]);
    expect(without.stdout).toContain(`path '${deep.key}' holds in`);
  });
});
