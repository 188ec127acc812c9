// The contract checker in-process, on definitions made with the builder: what
// it must find (and must not) about removals, kinds of paths and pins.
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { validateImage } from '../../src/check/validate.js';
import { image, script, variable, z, type BaseImage, type PhaseBuilder } from '../../src/index.js';
import { allKinds } from '../../src/steps/index.js';
import type { Image } from '../../src/ir/schema.js';
import type { Facts } from '../../src/dsl/types.js';
import { debian12 } from '../../stdlib/bases.js';

/** Debian 12 with the type-level facts off (plain strings): the checker alone judges. */
const base: BaseImage = debian12();
type P = PhaseBuilder<Facts>;

/** `code@step` of every diagnostic of the image made by `customize` (on debian 12). */
const verdict = (customize: (p: P) => unknown): string[] => {
  const ir = image('t').base(base).customize(customize as (p: P) => P).toIR();
  return checkImage(ir).map((d) => `${d.code}@${d.stepId ?? '-'}`);
};

describe('removal is structural', () => {
  it('a directory removed takes what lies below it: a later write there is IMGC0005', () => {
    expect(verdict((p) => p.directory('/opt/t').directory('/opt/t/bin').command('rm -rf /opt/t', { removes: { path: ['/opt/t'] } }).file('/opt/t/bin/x', { content: '' }) )).toEqual([
      'IMGC0005@customize.4.file',
    ]);
  });

  it('a path below a removed tree that no step named is IMGC0005 too, naming the removal', () => {
    const ir = image('t').base(base).customize((p) => p.directory('/opt/t').command('rm -rf /opt/t', { removes: { path: ['/opt/t'] } }).directory('/opt/t/a/b')).toIR();
    const ds = checkImage(ir);
    expect(ds.map((d) => d.code)).toEqual(['IMGC0005']);
    expect(ds[0]!.related[0]!.loc?.line).toBeGreaterThan(0);
  });

  it('a glob removes every known path it names, with what lies below each (sh globbing: one segment, no leading dot)', () => {
    expect(
      verdict((p) =>
        p
          .directory('/opt/t')
          .directory('/opt/t/a')
          .directory('/opt/t/a/b')
          .directory('/opt/t/.d')
          .command('rm -rf /opt/t/*', { removes: { path: ['/opt/t/*'] } })
          .file('/opt/t/.d/x', { content: '' })
          .file('/opt/t/a/x', { content: '' })
          .file('/opt/t/a/b/x', { content: '' }),
      ),
    ).toEqual(['IMGC0005@customize.7.file', 'IMGC0005@customize.8.file']);
  });

  it('making the directory again makes it usable again', () => {
    expect(verdict((p) => p.directory('/opt/t').command('rm -rf /opt/t', { removes: { path: ['/opt/t'] } }).directory('/opt/t').file('/opt/t/x', { content: '' }) )).toEqual([]);
  });

  it('a removed file may be written again without a duplicate warning', () => {
    expect(verdict((p) => p.file('/etc/x', { content: 'a' }).command('rm /etc/x', { removes: { path: ['/etc/x'] } }).file('/etc/x', { content: 'a' }) )).toEqual([]);
  });

  it('removing a package takes only its own paths, not what others wrote below them (dpkg)', () => {
    expect(
      verdict((p) => p.packages(['containerd']).directory('/etc/containerd/certs.d').removePackages(['containerd']).file('/etc/containerd/certs.d/x', { content: '' })),
    ).toEqual([]);
  });
});

describe('different kinds at one path conflict (IMGC0012), with both locations', () => {
  const cases: [string, (p: P) => unknown, string][] = [
    ['file where a directory is', (p) => p.directory('/etc/k').file('/etc/k', { content: '' }), 'customize.2.file'],
    ['directory where a file is', (p) => p.file('/etc/k', { content: '' }).directory('/etc/k'), 'customize.2.directory'],
    ['symlink where a directory is', (p) => p.directory('/etc/k').symlink('/etc/k', '/x'), 'customize.2.symlink'],
    ['directory where a symlink is', (p) => p.symlink('/etc/k', '/x').directory('/etc/k'), 'customize.2.directory'],
    ['file below a file', (p) => p.file('/etc/k', { content: '' }).file('/etc/k/x', { content: '' }), 'customize.2.file'],
    ['a user\'s home where a file is', (p) => p.file('/home/kube', { content: '' }).user('kube'), 'customize.2.user'],
  ];
  it.each(cases)('%s', (_, steps, at) => {
    const ir = image('t').base(base).customize(steps as (p: P) => P).toIR();
    const ds = checkImage(ir).filter((d) => d.code === 'IMGC0012');
    expect(ds.map((d) => d.stepId)).toEqual([at]);
    expect(ds[0]!.loc).toBeDefined();
    expect(ds[0]!.related[0]!.loc).toBeDefined();
  });

  it('a directory made twice, or a file and a symlink (IMGC0006), are not kind conflicts', () => {
    expect(verdict((p) => p.directory('/etc/k').directory('/etc/k') )).toEqual([]);
    expect(verdict((p) => p.file('/etc/k', { content: '' }).symlink('/etc/k', '/x') )).toEqual(['IMGC0006@customize.2.symlink']);
  });

  it('a path removed in between may become another kind', () => {
    expect(verdict((p) => p.directory('/etc/k').command('rm -r /etc/k', { removes: { path: ['/etc/k'] } }).file('/etc/k', { content: '' }) )).toEqual([]);
  });
});

describe('a file written whole, then edited (IMGC0015, a warning)', () => {
  const written = (p: P) => p.file('/etc/k.conf', { content: 'a = 1\n' });
  it.each([
    ['a line', (p: P) => written(p).lineInFile('/etc/k.conf', { line: 'b = 2' }), 'customize.2.lineInFile'],
    ['a block', (p: P) => written(p).blockInFile('/etc/k.conf', 'b = 2\n'), 'customize.2.blockInFile'],
    ['an ini key', (p: P) => written(p).iniKey('/etc/k.conf', 'b', { value: '2' }), 'customize.2.iniKey'],
    ['a sysctl in its file', (p: P) => p.directory('/etc/sysctl.d').file('/etc/sysctl.d/k.conf', { content: '' }).sysctl('vm.swappiness', 0, { file: '/etc/sysctl.d/k.conf' }), 'customize.3.sysctl'],
  ])('%s', (_, steps, at) => {
    expect(verdict(steps)).toEqual([`IMGC0015@${at}`]);
  });

  it('an edit of a file the base or a package has, a file written after the edit, or one removed and made again, is not', () => {
    expect(verdict((p) => p.lineInFile('/etc/adduser.conf', { line: 'DSHELL=/bin/bash', regexp: '^DSHELL=' }))).toEqual([]);
    expect(verdict((p) => p.directory('/etc/sysctl.d').sysctl('vm.swappiness', 0, { file: '/etc/sysctl.d/k.conf' }).file('/etc/sysctl.d/other.conf', { content: '' }))).toEqual([]);
    expect(verdict((p) => written(p).command('rm /etc/k.conf', { removes: { path: ['/etc/k.conf'] } }).command('touch /etc/k.conf', { provides: { path: ['/etc/k.conf'] } }).lineInFile('/etc/k.conf', { line: 'b = 2' }))).toEqual([]);
  });
});

describe('package pins (apt name[:arch][=version])', () => {
  it('a pinned package provides what the unpinned one does', () => {
    expect(verdict((p) => p.packages(['systemd', 'containerd=1.6.20~ds1-1+b1']).enableService('containerd'))).toEqual([]);
    expect(verdict((p) => p.packages(['containerd:amd64']).command('ctr version', { requires: { command: ['ctr'] } }))).toEqual([]);
    expect(verdict((p) => p.packages(['containerd=1.6.*']).file('/etc/containerd/config.toml', { content: '' }))).toEqual([]);
  });

  it('a pinned package from a repository never added is IMGC0001 for the repository', () => {
    const ir = image('t').base(base).customize((p) => p.packages(['kubelet=1.30.2-1.1'])).toIR();
    expect(checkImage(ir).map((d) => `${d.code} ${d.message}`)).toEqual([expect.stringMatching(/^IMGC0001 .*requires repository 'kubernetes'/)]);
  });

  it('the same package pinned and unpinned is installed twice (IMGC0009); a removal by name takes the pinned one', () => {
    expect(verdict((p) => p.packages(['curl']).packages(['curl=7.88.1-10+deb12u5']))).toEqual(['IMGC0009@customize.2.packages']);
    expect(verdict((p) => p.packages(['curl=7.88.1-10+deb12u5']).removePackages(['curl']).command('curl -V', { requires: { command: ['curl'] } }))).toEqual([
      'IMGC0005@customize.3.command',
    ]);
  });

  it('two different pins of one package are IMGC0016, an error naming both steps; a glob the other pin matches, or a removal between, is not', () => {
    const ir = image('t').base(base).customize((p) => p.packages(['curl=7.88.1-10+deb12u5'])).provision((p) => p.packages(['jq', 'curl=7.88.1-10+deb12u8'])).toIR();
    const ds = checkImage(ir);
    expect(ds.map((d) => `${d.code}@${d.stepId}`)).toEqual(['IMGC0016@provision.1.packages']);
    expect(ds[0]!.severity).toBe('error');
    expect(ds[0]!.message).toBe("package 'curl' is pinned to version '7.88.1-10+deb12u8' by install of 'jq', 'curl=7.88.1-10+deb12u8', but to '7.88.1-10+deb12u5' by install of 'curl=7.88.1-10+deb12u5' in phase 'customize'");
    expect(ds[0]!.related[0]!.loc?.line).toBeGreaterThan(0);
    expect(verdict((p) => p.packages(['curl=7.88.*']).packages(['curl=7.88.1-10+deb12u5']))).toEqual(['IMGC0009@customize.2.packages']);
    expect(verdict((p) => p.packages(['curl=7.88.1-10+deb12u5']).removePackages(['curl']).packages(['curl=7.88.1-10+deb12u8']))).toEqual([]);
  });

  it('the IR holds the spec as written, and the schema takes arch qualifiers and version globs', () => {
    const ir = image('t').base(base).customize((p) => p.packages(['curl:amd64=7.88*'])).toIR();
    expect(ir.phases[0]!.steps[0]).toMatchObject({ names: ['curl:amd64=7.88*'] });
    expect(validateImage(ir).diagnostics).toEqual([]);
    expect(validateImage(image('t').base(base).customize((p) => p.packages(['curl=7 8'])).toIR()).diagnostics.map((d) => d.code)).toEqual(['IMGC1004']);
  });
});

describe('a variable where a literal is needed is IMGC0011 naming it, in every field, never IMGC1004', () => {
  const who = variable('who', z.string(), { default: 'ops' });
  const declared = (ir: Image): Image => ({ ...ir, variables: [{ name: 'who', type: 'string', sensitive: false, value: 'ops' }] });
  it.each<[string, () => Image]>([
    ['image name', () => image(`img-${who}`).base(base).customize((p) => p).toIR()],
    ['phase name', () => image('t').base(base).phase(`ph-${who}`, (p) => p.directory('/srv/x')).toIR()],
    ['user in a group list', () => image('t').base(base).customize((p) => p.user('ops', { groups: [`${who}`] })).toIR()],
    ['group of a directory', () => image('t').base(base).customize((p) => p.directory('/srv/x', { group: `${who}` })).toIR()],
    ['apt repository name', () => image('t').base(base).customize((p) => p.aptRepository(`${who}`, { uri: 'http://deb.example/debian', suites: ['bookworm'] })).toIR()],
    ['a fact a raw step declares', () => image('t').base(base).customize((p) => p.command('true', { provides: { user: [`${who}`] } })).toIR()],
    ['base include', () => image('t').base(debian12({ include: [`${who}`] }) as BaseImage).customize((p) => p).toIR()],
  ])('%s', (_, make) => {
    const { ir, diagnostics } = validateImage(declared(make()));
    expect(diagnostics).toEqual([]);
    const ds = checkImage(ir!);
    expect(ds.length).toBeGreaterThan(0);
    for (const d of ds) expect(`${d.code} ${d.message}`).toMatch(/^IMGC0011 .*variable 'who'/);
  });
});

describe('every kind\'s written paths take part in the two-writers and kind checks (IMGC0006, IMGC0012)', () => {
  const SUM = 'a'.repeat(64);
  const url = 'https://downloads.example.org/t';
  type As = 'file' | 'symlink' | 'directory' | 'edit' | 'declared';
  type Abs = `/${string}`;
  /** Per registered kind: steps that write paths (each with what the step makes it), or why the kind writes none of its own. */
  const writers: Record<string, { samples: [(p: P) => unknown, [Abs, As][]][] } | { none: string }> = {
    user: { samples: [[(p) => p.user('kube', { home: '/home/kube' }), [['/home/kube', 'directory']]]] },
    group: { none: 'a group is a line of /etc/group, which the base has and no step writes whole' },
    directory: { samples: [[(p) => p.directory('/opt/t'), [['/opt/t', 'directory']]]] },
    file: { samples: [[(p) => p.file('/etc/t', { content: 'x\n' }), [['/etc/t', 'file']]]] },
    symlink: { samples: [[(p) => p.symlink('/etc/t', '/x'), [['/etc/t', 'symlink']]]] },
    packages: { none: 'what a package brings is its own: a configuration file it ships is there to be replaced' },
    aptRepository: { samples: [[(p) => p.aptRepository('t', { uri: 'https://apt.example.org/debian', suites: ['stable'] }), [['/etc/apt/sources.list.d/t.sources', 'file']]]] },
    service: { none: 'enabling links the unit into the .wants directories its [Install] section names, which the checker does not read' },
    sysctl: { samples: [[(p) => p.sysctl('vm.swappiness', 0, { file: '/etc/sysctl.d/t.conf' }), [['/etc/sysctl.d/t.conf', 'edit']]]] },
    kernelModule: { samples: [[(p) => p.kernelModule('overlay', { file: '/etc/modules-load.d/t.conf' }), [['/etc/modules-load.d/t.conf', 'edit']]]] },
    swapOff: { none: 'it comments out the swap entries of whatever /etc/fstab holds; a whole fstab written later is a new table (the reference node writes its disk\'s)' },
    command: { samples: [[(p) => p.command('true', { provides: { path: ['/etc/t'] } }), [['/etc/t', 'declared']]]] },
    clean: { none: 'it removes or empties what is there, whoever wrote it; a path removed may be made again' },
    mask: { samples: [[(p) => p.maskService('t'), [['/etc/systemd/system/t.service', 'symlink']]]] },
    hold: { none: 'dpkg\'s selections only' },
    artifact: { none: 'made from the root, outside it' },
    cloudImage: { none: 'made by Packer, outside the root' },
    verify: { none: 'reads the root only' },
    hook: { samples: [[(p) => p.pre(script('true'), { provides: { path: ['/etc/t'] } }), [['/etc/t', 'declared']]]] },
    download: { samples: [[(p) => p.download(url, '/usr/local/bin/t', { sha256: SUM }), [['/usr/local/bin/t', 'file']]]] },
    archive: { samples: [[(p) => p.archive(`${url}.tar.gz`, '/opt/t', { sha256: SUM, creates: ['/opt/t/x'] }), [['/opt/t', 'directory'], ['/opt/t/x', 'declared']]]] },
    unit: {
      samples: [
        [(p) => p.unit('t.service', '[Service]\nExecStart=/bin/true\n'), [['/etc/systemd/system/t.service', 'file']]],
        [(p) => p.unit('t.service', '[Service]\n').dropIn('t.service', 'a.conf', '[Service]\n'), [['/etc/systemd/system/t.service.d/a.conf', 'file']]],
      ],
    },
    restart: { none: 'live hosts only, and it changes no file' },
    lineInFile: { samples: [[(p) => p.lineInFile('/etc/t.conf', { line: 'a = 1' }), [['/etc/t.conf', 'edit']]]] },
    blockInFile: { samples: [[(p) => p.blockInFile('/etc/t.conf', 'a = 1\n'), [['/etc/t.conf', 'edit']]]] },
    iniKey: { samples: [[(p) => p.iniKey('/etc/t.conf', 'a', { value: '1' }), [['/etc/t.conf', 'edit']]]] },
    dataKey: { samples: [[(p) => p.tomlKey('/etc/t.toml', 'a', { value: 1 }), [['/etc/t.toml', 'edit']]]] },
    upgrade: { none: 'what packages bring, as an install' },
    ansibleRole: { samples: [[(p) => p.ansibleRole('../fixtures/roles/motd', { provides: { path: ['/etc/t'] } }), [['/etc/t', 'declared']]]] },
    reboot: { none: 'changes no file' },
    puppetApply: { samples: [[(p) => p.packages(['puppet']).puppetApply('../fixtures/puppet/site.pp', { provides: { path: ['/etc/t'] } }), [['/etc/t', 'declared']]]] },
    packageList: { none: 'what packages bring, as an install' },
  };

  /** The path diagnostics of the image (`before`, the sample, `after`, each in a phase of its own) on the step of phase `on`, as codes. */
  const pathCodes = (before: (p: P) => unknown, sample: (p: P) => unknown, after: (p: P) => unknown, on: 'a' | 'b' | 'c'): string[] => {
    const ir = image('t').base(base).phase('a', before as (p: P) => P).phase('b', sample as (p: P) => P).phase('c', after as (p: P) => P).toIR();
    return checkImage(ir)
      .filter((d) => ['IMGC0006', 'IMGC0007', 'IMGC0012', 'IMGC0015'].includes(d.code) && d.stepId?.startsWith(`${on}.`))
      .map((d) => d.code);
  };
  const nothing = (p: P) => p;

  it('lists every registered kind', () => {
    expect(Object.keys(writers).sort()).toEqual([...allKinds().keys()].sort());
  });

  const cases = Object.entries(writers).flatMap(([kind, w]) =>
    'none' in w ? [] : w.samples.flatMap(([sample, paths]) => paths.map(([path, as]) => [kind, path, as, sample] as const)),
  );
  it.each(cases)('%s: %s (%s)', (_, path, as, sample) => {
    // A whole file written after it replaces it: two writers; or it is a directory: a kind conflict.
    expect(pathCodes(nothing, sample, (p) => p.file(path, { content: 'y\n' }), 'c')).toEqual([as === 'directory' ? 'IMGC0012' : 'IMGC0006']);
    // A directory made after it: a kind conflict, unless it is one (or a declared path, of a kind not known).
    expect(pathCodes(nothing, sample, (p) => p.directory(path), 'c')).toEqual(as === 'directory' || as === 'declared' ? [] : ['IMGC0012']);
    // Made where a directory is: a kind conflict for a file, a link or an edit.
    expect(pathCodes((p) => p.directory(path), sample, nothing, 'b')).toEqual(as === 'directory' || as === 'declared' ? [] : ['IMGC0012']);
    // Made where a whole file is: two writers, an edit of a written file (a warning), or a kind conflict.
    expect(pathCodes((p) => p.file(path, { content: 'y\n' }), sample, nothing, 'b')).toEqual([as === 'directory' ? 'IMGC0012' : as === 'edit' ? 'IMGC0015' : 'IMGC0006']);
  });
});

describe('sysctl keys a kernel module registers require the module (src/core/sysctl-modules.ts)', () => {
  it('net.bridge.* and net.netfilter.* without the module listed before are IMGC0001, after it IMGC0002; listed before, clean', () => {
    expect(verdict((p) => p.sysctl('net.bridge.bridge-nf-call-iptables', 1))).toEqual(['IMGC0001@customize.1.sysctl']);
    expect(verdict((p) => p.sysctl('net/netfilter/nf_conntrack_max', 262144))).toEqual(['IMGC0001@customize.1.sysctl']);
    expect(verdict((p) => p.sysctl('net.bridge.bridge-nf-call-ip6tables', 1).kernelModule('br_netfilter'))).toEqual(['IMGC0002@customize.1.sysctl']);
    expect(verdict((p) => p.kernelModule('br_netfilter').kernelModule('nf_conntrack').sysctl('net.bridge.bridge-nf-call-iptables', 1).sysctl('net.netfilter.nf_conntrack_max', 262144))).toEqual([]);
  });

  it('keys of the kernel itself need no module', () => {
    expect(verdict((p) => p.sysctl('net.ipv4.ip_forward', 1).sysctl('vm.swappiness', 0).sysctl('net.bridgeless', 1))).toEqual([]);
  });
});
