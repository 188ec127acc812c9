// imgc probe --ssh: a real sshd in a chroot of a Debian root (the fleet
// tests' bed, test/fleet/sshbed.ts, one host) probed over SSH gives the same
// contract as the same root read as a directory; a host that cannot be
// reached, refuses the key, has an unknown host key or is not Debian is a
// clear diagnostic, never a stack dump.
import { mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { contractFrom, type Contract } from '../../src/contract/contract.js';
import { parseProbeOutput, probeScript, SkeletonView } from '../../src/probe/ssh.js';
import { tmpdir } from 'node:os';
import type { Image } from '../../src/ir/schema.js';
import { imgc, irOf } from '../helpers/cli.js';
import { cannotBed, SshBed, type BedHost } from '../fleet/sshbed.js';

describe('the probe script', () => {
  it('is POSIX sh that shellcheck passes, quoting the paths it is given', async () => {
    const r = await execa('shellcheck', ['-s', 'sh', '-'], { input: probeScript('@@m@@', ['/etc/a b', "/etc/it's"]), reject: false });
    expect(r.stdout).toBe('');
    expect(r.exitCode).toBe(0);
  });

  it('reads files, listed paths and commands by section; an output cut short is an error, not a smaller contract', () => {
    const out = ['@@m@@ file /etc/passwd', 'root:x:0:0:root:/root:/bin/sh', '', '@@m@@ end', '@@m@@ meta', 'd 2775 0 8 /var/mail\t', 'l 777 0 0 /bin\tusr/bin', '@@m@@ cmd /usr/bin', 'ls', '@@m@@ done', ''].join('\n');
    const p = parseProbeOutput(out, '@@m@@');
    expect(p.files.get('/etc/passwd')).toBe('root:x:0:0:root:/root:/bin/sh\n');
    expect(p.listed).toEqual([
      { path: '/var/mail', meta: { type: 'dir', mode: 0o2775, uid: 0, gid: 8 }, link: '' },
      { path: '/bin', meta: { type: 'symlink', mode: 0o777, uid: 0, gid: 0 }, link: 'usr/bin' },
    ]);
    expect(p.commands).toEqual(new Map([['/usr/bin', ['ls']]]));
    expect(() => parseProbeOutput(out.slice(0, out.indexOf('@@m@@ cmd')), '@@m@@')).toThrow(/stopped before its end/);
  });

  it("a host's links stay inside the skeleton: readers that follow them with this machine's filesystem never leave it", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'imgc-skeleton-'));
    const out = ['@@m@@ meta', 'd 755 0 0 /etc\t', 'l 777 0 0 /etc/passwd\t/etc/hostname', 'l 777 0 0 /etc/up\t../../../../../etc', 'l 777 0 0 /etc/masked\t/dev/null', '@@m@@ done', ''].join('\n');
    const v = new SkeletonView(dir, 'x', parseProbeOutput(out, '@@m@@'));
    expect(realpathSync(path.join(dir, 'etc/up'))).toBe(realpathSync(path.join(dir, 'etc')));
    expect(readlinkSync(path.join(dir, 'etc/passwd'))).toBe('hostname');
    expect(v.readlink('/etc/passwd')).toBe('/etc/hostname');
    expect(v.readlink('/etc/masked')).toBe('/dev/null');
    rmSync(dir, { recursive: true, force: true });
  });
});

describe.skipIf(cannotBed !== undefined)(`imgc probe --ssh${cannotBed ? ` (skipped: ${cannotBed})` : ''}`, () => {
  let bed: SshBed;
  let h: BedHost;
  let knownHosts: string;
  let ir: Image;
  // How ssh reaches the bed's host: through its network namespace.
  const proxy = () => bed.sshOptions(h).find((o) => o.startsWith('ProxyCommand='))!;
  const viaSsh = (extra: string[] = [], key = bed.key) => imgc(['probe', '--ssh', `root@${h.name}`, '--identity', key, '--known-hosts', knownHosts, '--ssh-option', proxy(), ...extra]);
  const parsed = (stdout: string): Contract => contractFrom(JSON.parse(stdout), 'probe');

  beforeAll(async () => {
    // The fleet fixture's base: the bed's prepared root is the one the fleet tests use (cached once).
    ir = await irOf('test/fixtures/fleet/fleet.ts');
    bed = await SshBed.start(ir, ['probe1']);
    h = bed.hosts[0]!;
    knownHosts = path.join(bed.dir, 'known_hosts');
    writeFileSync(knownHosts, `${h.name} ${readFileSync(path.join(h.root, 'etc/ssh/ssh_host_ed25519_key.pub'), 'utf8')}`);
    // Something a probe should see beyond the base: a user, an enabled unit, a sysctl and a module.
    const r = await bed.ssh(h, 'useradd -m ops && mkdir -p /etc/demo && printf "net.ipv4.ip_forward = 1\\n" > /etc/sysctl.d/90-demo.conf && printf "br_netfilter\\n" > /etc/modules-load.d/demo.conf');
    expect(r.exitCode, r.stderr).toBe(0);
  }, 900_000);
  // stop() fails when a process of the host is left.
  afterAll(() => bed?.stop());

  it('over SSH, with read-only commands, gives the contract of the same root read as a directory', async () => {
    const before = await bed.ssh(h, 'find / -xdev -newer /etc/hostname -not -path "/proc/*" -not -path "/run/*" -not -path "/var/log/*" -not -path "/root/.ssh*" | wc -l');
    const ssh = await viaSsh();
    expect(ssh.exitCode, ssh.all).toBe(0);
    const dir = await imgc(['probe', '--root', h.root]);
    expect(dir.exitCode, dir.all).toBe(0);
    const a = parsed(ssh.stdout);
    const b = parsed(dir.stdout);
    expect(a.image).toBe(h.name);
    expect(a.base).toEqual(b.base);
    expect(a.facts.length).toBeGreaterThan(1000);
    expect(a.facts).toEqual(b.facts);
    for (const [kind, key] of [['user', 'ops'], ['path', '/etc/demo'], ['sysctl', 'net.ipv4.ip_forward'], ['kernelModule', 'br_netfilter'], ['service', 'ssh'], ['command', 'sshd']]) {
      expect(a.facts.find((f) => f.kind === kind && f.key === key), `${kind} ${key}`).toBeDefined();
    }
    // The probe wrote nothing on the host.
    const after = await bed.ssh(h, 'find / -xdev -newer /etc/hostname -not -path "/proc/*" -not -path "/run/*" -not -path "/var/log/*" -not -path "/root/.ssh*" | wc -l');
    expect(after.stdout).toBe(before.stdout);
  }, 300_000);

  it('--expect over SSH looks up the facts the bounded listing leaves out, as the directory probe does', async () => {
    const expected = path.join(bed.dir, 'expected.json');
    const deep = { kind: 'path', key: '/usr/share/doc/bash/copyright' };
    writeFileSync(expected, JSON.stringify({ contract: 1, image: 'x', phase: 'base', base: { name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm' }, facts: [deep] }));
    const ssh = await viaSsh(['--expect', expected]);
    expect(ssh.exitCode, ssh.all).toBe(0);
    const dir = await imgc(['probe', '--root', h.root, '--expect', expected]);
    expect(parsed(ssh.stdout).facts).toEqual(parsed(dir.stdout).facts);
    expect(parsed(ssh.stdout).facts).toContainEqual({ ...deep, type: 'file', owner: 'root', group: 'root', mode: '0644' });
  }, 300_000);

  it('two probes of an unchanged host are byte-identical, and contract diff of them exits 0, though the host changed its volatile paths between them', async () => {
    const [one, two] = [path.join(bed.dir, 'one.contract.json'), path.join(bed.dir, 'two.contract.json')];
    // What a running host does on its own between two probes: temporary files, a log, a cache, a user's file.
    const noise = 'mkdir -p /tmp/imgc-a/b /var/tmp/imgc-c /var/log/imgc-d /var/cache/imgc-e /root/.imgc-f /home/ops/.imgc-g';
    const first = await viaSsh(['--out', one]);
    expect(first.exitCode, first.all).toBe(0);
    expect((await bed.ssh(h, noise)).exitCode).toBe(0);
    try {
      const second = await viaSsh(['--out', two]);
      expect(second.exitCode, second.all).toBe(0);
      expect(readFileSync(two, 'utf8')).toBe(readFileSync(one, 'utf8'));
      const diff = await imgc(['contract', 'diff', one, two]);
      expect(diff.exitCode, diff.all).toBe(0);
      const keys = (stdout: string) => parsed(stdout).facts.filter((f) => f.kind === 'path').map((f) => f.key);
      // Left out by default: none under /tmp, /run, /root, /home/*, /var/log, /var/cache; the directories themselves stay.
      const paths = keys(readFileSync(one, 'utf8'));
      expect(paths.filter((p) => /^\/(tmp|var\/tmp|run|proc|sys|dev|root|home\/[^/]+|var\/log|var\/cache)\//.test(p))).toEqual([]);
      for (const p of ['/tmp', '/root', '/home/ops', '/var/log']) expect(paths).toContain(p);
      // --include keeps what the defaults leave out; --exclude leaves out more.
      const more = await viaSsh(['--include', '/tmp', '--include', '/var/log', '--exclude', '/etc/demo']);
      expect(more.exitCode, more.all).toBe(0);
      expect(keys(more.stdout)).toEqual(expect.arrayContaining(['/tmp/imgc-a', '/tmp/imgc-a/b', '/var/log/imgc-d']));
      expect(keys(more.stdout)).not.toContain('/etc/demo');
      expect(keys(more.stdout)).not.toContain('/root/.imgc-f');
      const bad = await viaSsh(['--exclude', 'tmp/x']);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain('--exclude tmp/x: not an absolute path');
    } finally {
      await bed.ssh(h, 'rm -rf /tmp/imgc-a /var/tmp/imgc-c /var/log/imgc-d /var/cache/imgc-e /root/.imgc-f /home/ops/.imgc-g');
    }
  }, 300_000);

  it('an unknown host key, a refused key, an unreachable host and a host without dpkg are diagnostics with a hint', async () => {
    const empty = path.join(bed.dir, 'empty_known_hosts');
    writeFileSync(empty, '');
    const unknown = await imgc(['probe', '--ssh', `root@${h.name}`, '--identity', bed.key, '--known-hosts', empty, '--ssh-option', proxy()]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/^imgc probe: the host key of root@probe1 is not known or changed: .*\n {2}hint: give a known_hosts file/);

    const other = path.join(bed.dir, 'other_key');
    await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const refused = await viaSsh([], other);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/^imgc probe: ssh could not log in to root@probe1: .*Permission denied.*\n {2}hint: give the key with --identity FILE/);

    // Port 9 of the bed host's own loopback: nothing listens there.
    const closed = await imgc(['probe', '--ssh', `root@${h.name}`, '--port', '9', '--identity', bed.key, '--known-hosts', knownHosts, '--ssh-option', proxy().replace(/ 22$/, ' 9')]);
    expect(closed.exitCode).toBe(2);
    expect(closed.stderr).toMatch(/^imgc probe: (cannot reach|ssh to) root@probe1 port 9/);
    expect(closed.all).not.toMatch(/\n\s+at /);

    const moved = await bed.ssh(h, 'mv /var/lib/dpkg/status /var/lib/dpkg/status.away');
    expect(moved.exitCode).toBe(0);
    try {
      const notDebian = await viaSsh();
      expect(notDebian.exitCode).toBe(2);
      expect(notDebian.stderr).toMatch(/^imgc probe: root@probe1 is not a Debian host \(no \/var\/lib\/dpkg\/status; it runs Debian GNU\/Linux 12 \(bookworm\)\)\n {2}hint: /);
    } finally {
      await bed.ssh(h, 'mv /var/lib/dpkg/status.away /var/lib/dpkg/status');
    }
  }, 300_000);

  it('the probe flags go together', async () => {
    expect((await imgc(['probe', '--root', h.root, '--port', '22'])).stderr).toMatch(/--port goes with --ssh USER@HOST/);
    expect((await imgc(['probe', '--ssh', 'root@x', '--port', '70000'])).stderr).toMatch(/--port 70000: not a TCP port/);
    expect((await imgc(['probe', '--ssh', 'root@x', '--root', h.root])).stderr).toMatch(/one of --root DIR, --image FILE or --ssh USER@HOST/);
  });
});
