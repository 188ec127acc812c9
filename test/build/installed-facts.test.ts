// The pure parts of installedFacts (src/build/installed-facts.ts), in-process:
// reading a tree's users, groups and /etc,/opt paths, what one install added,
// which paths are left out, and apt's simulation read back. The real installs
// are compared with a root in test/stdlib/archive-facts.test.ts.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { factsBetween, hostSpecific, installedFacts, simulatedInstalls, snapshot } from '../../src/build/installed-facts.js';
import { tempDir } from '../helpers/temp.js';

const PASSWD = 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n';
const GROUP = 'root:x:0:\nnogroup:x:65534:\n';

/** A small root: passwd, group, a few /etc and /opt entries. */
const tree = (): string => {
  const root = tempDir('installed-facts');
  mkdirSync(path.join(root, 'etc/ssh'), { recursive: true });
  mkdirSync(path.join(root, 'opt'));
  writeFileSync(path.join(root, 'etc/passwd'), PASSWD);
  writeFileSync(path.join(root, 'etc/group'), GROUP);
  return root;
};

describe('installedFacts: snapshots and what one install added', () => {
  it('a snapshot holds the users, groups and every path below /etc and /opt, symlinks not followed', () => {
    const root = tree();
    mkdirSync(path.join(root, 'etc/nginx/conf.d'), { recursive: true });
    symlinkSync('/etc/nginx', path.join(root, 'opt/web'));
    const s = snapshot(root);
    expect([...s.users]).toEqual(['root', 'nobody']);
    expect([...s.groups]).toEqual(['root', 'nogroup']);
    expect([...s.paths].sort()).toEqual(['/etc/group', '/etc/nginx', '/etc/nginx/conf.d', '/etc/passwd', '/etc/ssh', '/opt/web']);
  });

  it('the users, groups and paths an install added, its listed paths and their parents, without host keys or tool backups', () => {
    const root = tree();
    const before = snapshot(root);
    writeFileSync(path.join(root, 'etc/passwd'), `${PASSWD}sshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n`);
    writeFileSync(path.join(root, 'etc/passwd-'), PASSWD);
    writeFileSync(path.join(root, 'etc/.pwd.lock'), '');
    writeFileSync(path.join(root, 'etc/group'), `${GROUP}_ssh:x:101:\n`);
    mkdirSync(path.join(root, 'etc/ssh/sshd_config.d'));
    writeFileSync(path.join(root, 'etc/ssh/sshd_config'), 'Include /etc/ssh/sshd_config.d/*.conf\n');
    writeFileSync(path.join(root, 'etc/ssh/ssh_host_ed25519_key'), 'secret');
    writeFileSync(path.join(root, 'etc/ssh/ssh_host_ed25519_key.pub'), 'public');
    // The package's file list: its own directories (/etc/ssh existed before: a parent still), a path outside
    // /etc and /opt, /etc itself, and a listed path the root does not have (a diversion moved it).
    const listed = ['/.', '/etc', '/etc/ssh', '/etc/ssh/sshd_config.d', '/etc/ssh/moduli', '/usr/sbin/sshd'];
    expect(factsBetween(before, snapshot(root), listed)).toEqual({
      users: ['sshd'],
      groups: ['_ssh'],
      paths: ['/etc/ssh', '/etc/ssh/sshd_config', '/etc/ssh/sshd_config.d'],
    });
  });

  it('nothing added and nothing listed below /etc or /opt: no facts', () => {
    const root = tree();
    const s = snapshot(root);
    expect(factsBetween(s, snapshot(root), ['/usr/bin/jq', '/usr/share/doc/jq'])).toEqual({ users: [], groups: [], paths: [] });
  });

  it('host keys and the backups and locks of useradd are host-specific; other files are not', () => {
    expect(['/etc/ssh/ssh_host_rsa_key', '/etc/ssh/ssh_host_rsa_key.pub', '/etc/passwd-', '/etc/gshadow-', '/etc/.pwd.lock'].filter(hostSpecific)).toHaveLength(5);
    expect(['/etc/ssh/sshd_config', '/etc/ssh/ssh_host_keys.d/x', '/etc/nginx/passwd-', '/opt/ssh_host_x', '/etc/passwd'].filter(hostSpecific)).toEqual([]);
  });

  it("reads the packages apt-get install -s would unpack, architecture qualifiers dropped", () => {
    const out = [
      'NOTE: This is only a simulation!',
      'The following NEW packages will be installed:',
      '  nginx nginx-common',
      'Inst nginx-common (1.22.1-9+deb12u12 Debian-Security:12/oldstable-security [all])',
      'Inst libssl3:amd64 (3.0.22-1~deb12u2 Debian-Security:12/oldstable-security [amd64])',
      'Inst nginx (1.22.1-9+deb12u12 Debian-Security:12/oldstable-security [amd64])',
      'Conf nginx-common (1.22.1-9+deb12u12 Debian-Security:12/oldstable-security [all])',
    ].join('\n');
    expect(simulatedInstalls(out)).toEqual(['nginx-common', 'libssl3', 'nginx']);
  });

  it('refuses what is not a package name, and a directory that is not a Debian root, before touching anything', async () => {
    await expect(installedFacts(tree(), ['nginx', 'rm -rf /'], { suite: 'bookworm' })).rejects.toThrow("not a package name: 'rm -rf /'");
    const root = tree();
    await expect(installedFacts(root, ['nginx'], { suite: 'bookworm' })).rejects.toThrow(`${root} is not a Debian root (no var/lib/dpkg/status)`);
  });
});
