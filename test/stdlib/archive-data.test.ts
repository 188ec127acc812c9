// Debian 12's package data (stdlib/archive/, npm run gen:packages): the typed
// catalog covers every package the stdlib and the examples install and agrees
// with the archive's table, and the checker reads the table for the rest.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { packageFacts, removedLine, type PackageCatalog } from '../../src/core/catalog.js';
import { image } from '../../src/index.js';
import { loadDefinition } from '../../src/load/index.js';
import type { Image } from '../../src/ir/types.js';
import { debian12Archive, debian12Typed } from '../../stdlib/archive/debian-12.js';
import { debian12Arm64Archive } from '../../stdlib/archive/debian-12-arm64.js';
import { typedPackages } from '../../stdlib/archive/typed-packages.js';
import { debian12 } from '../../stdlib/bases.js';
import { aptCatalog, aptCatalogArm64 } from '../../stdlib/catalog.js';
import { bootable, cloudInit, containerd, journald, network, sshHardening, sysprep } from '../../stdlib/modules.js';
import { repoRoot } from '../helpers/cli.js';

const installs = (ir: Image): string[] =>
  ir.phases.flatMap((ph) => ph.steps).flatMap((s) => (s.kind === 'packages' && s.action === 'install' ? s.names.map((n) => n.split(/[=:]/)[0]!) : []));

const base = debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'iproute2'] });

describe("Debian 12's package data", () => {
  it('the table is sorted, ASCII, one package a line', () => {
    const text = readFileSync(path.join(repoRoot, 'stdlib/archive/debian-12.txt'), 'latin1');
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    const names = text.trimEnd().split('\n').map((l) => l.split('\t', 1)[0]!);
    expect(names.length).toBeGreaterThan(60_000);
    expect(names.every((n, i) => i === 0 || names[i - 1]! < n)).toBe(true);
  });

  it('every package a stdlib module or an example installs is typed, and its typed facts are what the archive says', async () => {
    // Each architecture's installs against its own catalog (an arm64 image's kernel is linux-image-arm64).
    const named = { amd64: new Set<string>(), arm64: new Set<string>() };
    const add = (ir: Image) => installs(ir).forEach((n) => named[ir.base.arch ?? 'amd64'].add(n));
    add(image('all').base(base).provision((p) => p.use(sshHardening()).use(containerd()).use(bootable()).use(network()).use(cloudInit()).use(sysprep()).use(journald())).toIR('all.ts'));
    add(image('arm').base(debian12({ arch: 'arm64' })).provision((p) => p.use(bootable({ arch: 'arm64' }))).toIR('arm.ts'));
    for (const f of readdirSync(path.join(repoRoot, 'examples')).filter((f) => f.endsWith('.ts'))) {
      const loaded = await loadDefinition(path.join(repoRoot, 'examples', f), { typecheck: false });
      for (const ir of [loaded.ir, ...(loaded.variants ?? []).map((v) => v.ir)]) if (ir) add(ir);
    }
    const catalogs = { amd64: aptCatalog as PackageCatalog, arm64: aptCatalogArm64 as PackageCatalog };
    for (const arch of ['amd64', 'arm64'] as const) expect({ arch, untyped: [...named[arch]].filter((n) => !(n in catalogs[arch])).sort() }).toEqual({ arch, untyped: [] });
    for (const name of typedPackages) {
      const typed = packageFacts(debian12Typed as PackageCatalog, name).map((f) => `${f.kind}:${f.key}`);
      const archive = packageFacts({}, name, 'apt', debian12Archive).map((f) => `${f.kind}:${f.key}`);
      expect({ name, missing: archive.filter((f) => !typed.includes(f)) }).toEqual({ name, missing: [] });
    }
  }, 120_000);

  it('packages the stdlib never names bring their services, commands and config paths from the archive', () => {
    const ir = image('t')
      .base(base)
      .provision((p) =>
        p
          // haproxy: not typed, from the table; the others typed, generated from the archive and a real install.
          .packages(['nginx', 'chrony', 'prometheus-node-exporter', 'openssh-server', 'haproxy'])
          .enableService('nginx')
          .enableService('haproxy')
          .lineInFile('/etc/haproxy/haproxy.cfg', { line: '    maxconn 4096' })
          .file('/etc/nginx/conf.d/status.conf', { content: 'server { listen 127.0.0.1:8080; }\n' })
          .enableService('chrony')
          .enableService('prometheus-node-exporter')
          .lineInFile('/etc/nginx/nginx.conf', { line: 'worker_processes 2;' })
          .lineInFile('/etc/default/prometheus-node-exporter', { line: 'ARGS="--collector.systemd"' })
          .lineInFile('/etc/ssh/sshd_config', { line: 'PermitRootLogin no' })
          .file('/etc/chrony/conf.d/pool.conf', { content: 'pool 127.0.0.1 iburst\n' })
          .command('chronyc tracking; nginx -t; haproxy -c -f /etc/haproxy/haproxy.cfg', { requires: { command: ['chronyc', 'nginx', 'haproxy'] } }),
      )
      .toIR('t.ts');
    expect(checkImage(ir)).toEqual([]);
  });

  it('a package the archive does not have is IMGC0017, with the closest name; after an apt repository it may come from there', () => {
    const bad = image('t').base(base).provision((p) => p.packages(['ngnix', 'no-such-package-here'])).toIR('t.ts');
    expect(checkImage(bad).map((d) => [d.code, d.message, d.hint])).toEqual([
      ['IMGC0017', `package 'ngnix' is not in Debian 12 "bookworm" main (amd64)`, "did you mean 'nginx'?"],
      ['IMGC0017', `package 'no-such-package-here' is not in Debian 12 "bookworm" main (amd64)`, expect.stringContaining('aptRepository')],
    ]);
    const declared = image('t').base(base).provision((p) => p.packages(['vendor-agent'], { provides: { service: ['vendor-agent'] } }).enableService('vendor-agent')).toIR('t.ts');
    expect(checkImage(declared)).toEqual([]);
    // A name the archive lacks may come from a repository added before it; one added only after does not count.
    const repo = { uri: 'https://pkgs.example.test/deb/', suites: ['/'], keyUrl: 'https://pkgs.example.test/deb/Release.key' };
    const fromRepo = image('t').base(debian12({ include: ['curl', 'ca-certificates'] })).provision((p) => p.aptRepository('vendor', repo).packages(['vendor-agent'])).toIR('t.ts');
    expect(checkImage(fromRepo).filter((d) => d.code === 'IMGC0017')).toEqual([]);
    const repoAfter = image('t').base(debian12({ include: ['curl', 'ca-certificates'] })).provision((p) => p.packages(['vendor-agent']).aptRepository('vendor', repo)).toIR('t.ts');
    expect(checkImage(repoAfter).map((d) => d.code)).toContain('IMGC0017');
  });
});

describe("Debian 12's arm64 package data, a delta against amd64's", () => {
  it('the delta is small, sorted, ASCII: a line only where arm64 differs, a removal line for a package only amd64 has', () => {
    const text = readFileSync(path.join(repoRoot, 'stdlib/archive/debian-12-arm64.txt'), 'latin1');
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    const amd64Text = readFileSync(path.join(repoRoot, 'stdlib/archive/debian-12.txt'), 'latin1');
    // Not a second table: 236 kB against 4 MB when generated.
    expect(text.length).toBeLessThan(amd64Text.length / 10);
    const amd64 = amd64Text.trimEnd().split('\n');
    const amd64Line = new Map(amd64.map((l) => [l.split('\t', 1)[0]!, l]));
    const lines = text.trimEnd().split('\n');
    const names = lines.map((l) => l.split('\t', 1)[0]!);
    expect(names.every((n, i) => i === 0 || names[i - 1]! < n)).toBe(true);
    for (const [i, line] of lines.entries()) {
      const name = names[i]!;
      if (line === removedLine(name)) expect({ name, inAmd64: amd64Line.has(name) }).toEqual({ name, inAmd64: true });
      else expect({ name, same: amd64Line.get(name) === line }).toEqual({ name, same: false });
    }
  });

  it('each architecture knows its own kernel and loader, and shares the rest', () => {
    const known = (name: string) => [debian12Archive.entry(name) !== undefined, debian12Arm64Archive.entry(name) !== undefined];
    expect(known('linux-image-arm64')).toEqual([false, true]);
    expect(known('linux-image-amd64')).toEqual([true, false]);
    expect(known('grub-pc')).toEqual([true, false]);
    expect(known('grub-efi-arm64')).toEqual([false, true]);
    for (const name of ['nginx', 'curl', 'openssh-server']) expect(debian12Arm64Archive.entry(name)).toEqual(debian12Archive.entry(name));
    expect(debian12Arm64Archive.entry('nginx')?.deps).toEqual(['nginx-common']);
    const arm = debian12Arm64Archive.names();
    expect(arm).toContain('linux-image-arm64');
    expect(arm).not.toContain('grub-pc');
    expect(arm.length).toBeGreaterThan(60_000);
    expect([arm.includes(''), debian12Archive.names().includes('')]).toEqual([false, false]);
    expect(debian12Arm64Archive.describe).toBe('Debian 12 "bookworm" main (arm64)');
  });
});
