// The schema's constraints on values every target writes as a word, a line or
// a file name: for each, values it accepts and values it refuses — checked
// with zod (what the loader and every compiler use) and with the exported
// JSON Schema (what ajv users get), which must agree.
import { describe, expect, it } from 'vitest';
import { compileImageSchema } from '../helpers/ajv.js';
import { validateImage } from '../../src/check/validate.js';
import { Image, imageJsonSchema } from '../../src/ir/index.js';

const base = { name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm', variant: 'minbase', packageManager: 'apt', include: [], provides: [] };
const facts = { provides: [], requires: [], removes: [] };

/** An image whose one phase holds `step` (with an id and facts unless given). */
const imageWith = (step: Record<string, unknown>, extra: { base?: Record<string, unknown>; pre?: unknown[] } = {}): unknown => ({
  irVersion: 1,
  name: 't',
  source: 't.ts',
  base: { ...base, ...extra.base },
  phases: [{ name: 'customize', runtime: false, pre: extra.pre ?? [], steps: [{ id: 'customize.1.x', ...facts, ...step }], post: [] }],
});

const user = (fields: Record<string, unknown>) => imageWith({ kind: 'user', name: 'ops', groups: [], system: false, ...fields });
const repo = (fields: Record<string, unknown>) => imageWith({ kind: 'aptRepository', name: 'x', uri: 'https://example.org/debian', suites: ['stable'], components: ['main'], ...fields });
const sysctl = (fields: Record<string, unknown>) => imageWith({ kind: 'sysctl', key: 'net.ipv4.ip_forward', value: '1', file: '/etc/sysctl.d/x.conf', ...fields });

interface Constraint {
  what: string;
  make: (v: string) => unknown;
  accept: string[];
  reject: string[];
}

const constraints: Constraint[] = [
  {
    what: 'user name',
    make: (v) => user({ name: v }),
    accept: ['ops', '_apt', 'systemd-timesync', 'build_1', 'host$', 'a'.repeat(32)],
    reject: ['', 'Ops', '1ops', '-ops', 'a b', 'a,b', 'a:b', 'a$b', 'a'.repeat(33), 'ops\n'],
  },
  { what: 'user primaryGroup', make: (v) => user({ primaryGroup: v }), accept: ['docker'], reject: ['Docker', 'a b'] },
  { what: 'user supplementary group', make: (v) => user({ groups: ['sudo', v] }), accept: ['docker'], reject: ['a,b', ''] },
  { what: 'group name', make: (v) => imageWith({ kind: 'group', name: v, system: true }), accept: ['kube-admins'], reject: ['kube admins', 'é'] },
  { what: 'directory owner', make: (v) => imageWith({ kind: 'directory', path: '/srv', owner: v }), accept: ['ops'], reject: ['ops:ops'] },
  { what: 'directory group', make: (v) => imageWith({ kind: 'directory', path: '/srv', group: v }), accept: ['ops'], reject: ['0ps'] },
  { what: 'file owner', make: (v) => imageWith({ kind: 'file', path: '/srv/f', content: '', owner: v }), accept: ['root'], reject: ['ro ot'] },
  { what: 'file group', make: (v) => imageWith({ kind: 'file', path: '/srv/f', content: '', group: v }), accept: ['root'], reject: ['ROOT'] },
  {
    what: 'package name',
    make: (v) => imageWith({ kind: 'packages', action: 'install', names: ['curl', v] }),
    accept: ['openssh-server', 'libstdc++6', 'python3.11', 'kubelet=1.30.1-1.1', 'foo=1:2.3~rc1+dfsg-1', 'NetworkManager', 'perl_Data', 'g++', 'kubelet=1.30.*', 'curl:amd64', 'libc6:i386=2.36*'],
    reject: ['', 'a b', '-x', '+x', 'vim,nano', 'x=', 'x=*', 'x*', 'x:', 'x=1*2', 'x=1 2', 'x\n', 'a/b', 'x==1'],
  },
  { what: 'base include', make: (v) => imageWith({ kind: 'swapOff' }, { base: { include: [v] } }), accept: ['systemd-sysv'], reject: ['systemd,sudo', 'x=1'] },
  {
    what: 'service name',
    make: (v) => imageWith({ kind: 'service', name: v, enabled: true }),
    accept: ['ssh', 'apt-daily.timer', 'getty@tty1.service', 'dev-disk-by\\x2duuid.swap', 'a:b_c'],
    reject: ['', 'a b', 'x;y', 'a/b', 'ssh\n', 'é.service'],
  },
  { what: 'service package', make: (v) => imageWith({ kind: 'service', name: 'ssh', enabled: true, package: v }), accept: ['openssh-server'], reject: ['openssh server'] },
  {
    what: 'sysctl key',
    make: (v) => sysctl({ key: v }),
    accept: ['net.ipv4.ip_forward', 'net/ipv4/conf/eth0/rp_filter', 'net.ipv4.conf.eth0-1.rp_filter', '_x'],
    reject: ['', 'a b', 'a=b', '.x', '/x', 'a\tb', 'a\nb', 'a*'],
  },
  { what: 'sysctl value', make: (v) => sysctl({ value: v }), accept: ['1', '', '4096 87380 6291456', '|/bin/x %p', 'a\u2028b'], reject: ['1\n2', '1\r', '\n'] },
  {
    what: 'kernel module name',
    make: (v) => imageWith({ kind: 'kernelModule', name: v, file: '/etc/modules-load.d/x.conf' }),
    accept: ['br_netfilter', 'nf-conntrack', 'overlay'],
    reject: ['', 'a b', 'a.ko', 'a\nb', 'a/b'],
  },
  { what: 'apt source name', make: (v) => repo({ name: v }), accept: ['kubernetes', 'docker-ce.stable_1'], reject: ['', 'a/../b', 'a b', 'a+b', 'x\n'] },
  {
    what: 'apt source URI',
    make: (v) => repo({ uri: v }),
    accept: ['https://pkgs.k8s.io/core:/stable:/v1.30/deb/', 'http://deb.debian.org/debian'],
    reject: ['https://example.org/ x', 'https://example.org/\nTypes: deb-src', 'https://example.org/\t', 'not a uri', 'example.org/debian'],
  },
  { what: 'apt key URL', make: (v) => repo({ keyUrl: v }), accept: ['https://example.org/key.asc'], reject: ['example.org/key.asc', '//example.org/key.asc'] },
  { what: 'apt suite', make: (v) => repo({ suites: [v] }), accept: ['bookworm', 'bookworm-updates', '/', 'stable/'], reject: ['', 'a b', 'a\nb', 'a\u00a0b'] },
  { what: 'apt component', make: (v) => repo({ components: ['main', v] }), accept: ['contrib', 'non-free-firmware'], reject: ['main contrib', 'x\r'] },
  {
    what: 'apt key path',
    make: (v) => repo({ keyUrl: 'https://example.org/key', keyPath: v }),
    accept: ['/etc/apt/keyrings/x.asc'],
    reject: ['/etc/apt/key rings/x.asc', '/etc/apt/keyrings/x.asc\nSigned-By: /y', 'keyrings/x.asc'],
  },
  { what: 'step id', make: (v) => imageWith({ id: v, kind: 'swapOff' }), accept: ['customize.1.swapOff', 'a-b_c.1'], reject: ['', 'a b', 'a/b', 'a\nb', 'é'] },
  {
    what: 'hook id',
    make: (v) => imageWith({ kind: 'swapOff' }, { pre: [{ id: v, ...facts, kind: 'hook', when: 'pre', action: { type: 'event', target: 'stdout' } }] }),
    accept: ['customize.pre1.hook'],
    reject: ['pre 1'],
  },
];

const validateJson = compileImageSchema(imageJsonSchema());

describe.each(constraints)('schema: $what', ({ make, accept, reject }) => {
  it.each(accept)('accepts %j', (v) => {
    const r = Image.safeParse(make(v));
    expect(r.error?.issues ?? []).toEqual([]);
    expect(validateJson(make(v)), JSON.stringify(validateJson.errors)).toBe(true);
  });

  it.each(reject)('refuses %j', (v) => {
    const r = Image.safeParse(make(v));
    expect(r.success).toBe(false);
    expect(r.error!.issues.length).toBeGreaterThan(0);
    expect(validateJson(make(v))).toBe(false);
  });
});

describe('schema: step kinds by place', () => {
  const hook = { kind: 'hook', when: 'pre', action: { type: 'event', target: 'stdout' } };

  it('refuses a hook among a phase\'s steps, saying where hooks go', () => {
    const r = validateImage(imageWith(hook));
    expect(r.ir).toBeUndefined();
    expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual(["IMGC1004 invalid phases.0.steps.0.kind: a hook belongs in its phase's pre or post hooks, not among its steps"]);
    expect(validateJson(imageWith(hook))).toBe(false);
  });

  it('accepts the same hook in the phase\'s pre hooks', () => {
    const ir = imageWith({ kind: 'swapOff' }, { pre: [{ id: 'customize.pre1.hook', ...facts, ...hook }] });
    expect(validateImage(ir).diagnostics).toEqual([]);
    expect(validateJson(ir)).toBe(true);
  });

  it('refuses an apt repository on a dnf base, and accepts it on an apt base (zod only: JSON Schema cannot relate the two)', () => {
    expect(validateImage(repo({})).diagnostics).toEqual([]);
    const onDnf = imageWith({ kind: 'aptRepository', name: 'x', uri: 'https://example.org/debian', suites: ['stable'], components: [] }, { base: { packageManager: 'dnf' } });
    expect(validateImage(onDnf).diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/^invalid phases\.0\.steps\.0\.kind: an apt repository cannot be added to a dnf base/)]);
  });

  it('puts each diagnostic at the nearest source location: the step\'s, else the phase\'s', () => {
    const loc = { file: 't.ts', line: 7, column: 5 };
    const ir = user({ name: 'Ops', loc }) as { phases: { loc?: unknown; steps: { loc?: unknown }[] }[] };
    expect(validateImage(ir).diagnostics).toEqual([expect.objectContaining({ code: 'IMGC1004', loc, message: expect.stringMatching(/^invalid phases\.0\.steps\.0\.name: user and group names/) })]);
    const phaseLoc = { file: 't.ts', line: 3, column: 1 };
    delete ir.phases[0]!.steps[0]!.loc;
    ir.phases[0]!.loc = phaseLoc;
    expect(validateImage(ir).diagnostics).toEqual([expect.objectContaining({ code: 'IMGC1004', loc: phaseLoc })]);
  });
});
