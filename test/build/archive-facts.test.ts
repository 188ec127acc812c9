// Reading a Debian archive's indexes into package facts (src/build/archive-facts.ts)
// and looking them up again (src/core/catalog.ts): on index text of the real
// formats, small enough to read.
import { describe, expect, it } from 'vitest';
import { addContentsLine, archiveEntries, entryOf, parsePackages, tableLine, type Collected } from '../../src/build/archive-facts.js';
import { overlayArchive, packageFacts, removedLine, tableArchive } from '../../src/core/catalog.js';

const contents = [
  'etc/nginx/nginx.conf                                    httpd/nginx-common',
  'etc/nginx/sites-available/default                       httpd/nginx-common',
  'lib/systemd/system/nginx.service                        httpd/nginx-common',
  'usr/sbin/nginx                                          httpd/nginx',
  'usr/share/doc/nginx/copyright                           httpd/nginx',
  'lib/systemd/system/getty@.service                       admin/systemd',
  'lib/systemd/system/fstrim.timer                         admin/util-linux',
  'bin/my tool                                             utils/spaced',
  'usr/bin/tool                                            utils/a,net/b',
  'opt/vendor/bin/run                                      non-free/vendor',
].join('\n');

const packages = `Package: nginx
Source: nginx (1.22.1-9)
Version: 1.22.1-9
Depends: nginx-common (= 1.22.1-9), libc6 (>= 2.34), libssl3 (>= 3.0.0)
Provides: httpd, httpd-cgi, nginx-abi-1.22.1-7

Package: nginx-common
Source: nginx
Depends: lsb-base (>= 3.0-6)
Provides: httpd

Package: libc6
Source: glibc
Depends: libgcc-s1

Package: a
Depends: b | c

Package: b

Package: spaced

Package: vendor

Package: util-linux
Pre-Depends: libc6 (>= 2.34),
 libblkid1 (>= 2.37.2)
`;

const collect = (): Map<string, Collected> => {
  const into = new Map<string, Collected>();
  for (const line of contents.split('\n')) addContentsLine(into, line);
  return archiveEntries(parsePackages(packages), into);
};

describe('archive facts', () => {
  it('reads commands, units (not templates), /etc and /opt paths with their parents, and same-source dependencies', () => {
    const all = collect();
    expect(entryOf(all.get('nginx-common')!)).toEqual({
      deps: [],
      services: ['nginx'],
      commands: [],
      paths: ['/etc/nginx', '/etc/nginx/nginx.conf', '/etc/nginx/sites-available', '/etc/nginx/sites-available/default'],
      users: [],
      groups: [],
    });
    // libc6 and libssl3 come from other sources; nginx-common from nginx's own.
    expect(entryOf(all.get('nginx')!)).toMatchObject({ deps: ['nginx-common'], commands: ['nginx'] });
    expect(entryOf(all.get('util-linux')!).services).toEqual(['fstrim.timer']);
    // The table's words are space-separated: a name with white space is left out.
    expect(entryOf(all.get('spaced')!).commands).toEqual([]);
    expect([entryOf(all.get('a')!).commands, entryOf(all.get('b')!).commands]).toEqual([['tool'], ['tool']]);
    expect(entryOf(all.get('vendor')!).paths).toEqual(['/opt/vendor', '/opt/vendor/bin', '/opt/vendor/bin/run']);
    // A virtual name one package provides stands for it; one several provide (httpd) is no package.
    expect(entryOf(all.get('nginx-abi-1.22.1-7')!).deps).toEqual(['nginx']);
    expect(all.has('httpd')).toBe(false);
    // Only what the Packages index has is a package: a Contents line of another is not enough.
    expect(all.has('systemd')).toBe(false);
  });

  it('the table reads back: binary search on the sorted text, facts through the source closure', () => {
    const all = collect();
    const text = [...all.keys()].sort().map((n) => tableLine(n, entryOf(all.get(n)!))).join('\n');
    let reads = 0;
    const archive = tableArchive('test archive', () => (reads++, text));
    expect(reads).toBe(0);
    for (const name of all.keys()) expect(archive.entry(name)).toEqual(entryOf(all.get(name)!));
    for (const missing of ['', 'aa', 'nginx-', 'zzz', '0', 'nginx common']) expect(archive.entry(missing)).toBeUndefined();
    expect(reads).toBe(1);
    const facts = packageFacts({}, 'nginx=1.22.1-9', 'apt', archive).map((f) => `${f.kind}:${f.key}`);
    expect(facts).toEqual(expect.arrayContaining(['package:nginx', 'service:nginx', 'command:nginx', 'path:/etc/nginx/nginx.conf']));
    // The typed catalog's entry wins over the archive: it already holds what the archive says.
    expect(packageFacts({ nginx: { commands: ['nginx'] } }, 'nginx', 'apt', archive).map((f) => f.key)).toEqual(['nginx', 'nginx']);
    expect(archive.names()).toEqual([...all.keys()].sort());
  });

  it("an overlay's line wins, its removal line hides the base's, and every other name is the base's", () => {
    const base = tableArchive('base', () => ['a\tb', 'b\t\tb', 'grub\t\t\tgrub-install', 'nginx\tnginx-common', 'nginx-common\t\tnginx'].join('\n'));
    // Sorted by name as the base is: a removal line sits where the name would.
    const delta = ['grub\t-', 'kernel-arm\t\t\t\t/etc/kernel', 'nginx\t\t\tnginx', ''].join('\n');
    expect(removedLine('grub')).toBe('grub\t-');
    let reads = 0;
    const arm = overlayArchive('arm', base, () => (reads++, delta));
    expect([arm.describe, reads]).toEqual(['arm', 0]);
    expect(arm.entry('grub')).toBeUndefined();
    expect(arm.entry('kernel-arm')).toEqual({ deps: [], services: [], commands: [], paths: ['/etc/kernel'], users: [], groups: [] });
    expect(arm.entry('nginx')).toEqual({ deps: [], services: [], commands: ['nginx'], paths: [], users: [], groups: [] });
    expect(arm.entry('nginx-common')).toEqual(base.entry('nginx-common'));
    expect([arm.entry('zzz'), arm.entry('-'), arm.entry('')]).toEqual([undefined, undefined, undefined]);
    expect(arm.names()).toEqual(['a', 'b', 'kernel-arm', 'nginx', 'nginx-common']);
    expect(reads).toBe(1);
    // The base itself is untouched, and the facts read through the overlay's own entries.
    expect(base.entry('grub')?.commands).toEqual(['grub-install']);
    expect(packageFacts({}, 'nginx', 'apt', arm).map((f) => `${f.kind}:${f.key}`)).toEqual(['package:nginx', 'command:nginx']);
  });

  it('a name an object inherits is no catalog entry', () => {
    expect(packageFacts({}, 'constructor').map((f) => `${f.kind}:${f.key}`)).toEqual(['package:constructor']);
  });
});
