// The archive kind: a tar or zip archive by URL with its sha256, unpacked into
// a directory with the paths it creates declared. Outputs for every target;
// the checker's reading; the shell rendering run for real on archives this
// test makes with tar and zip and serves from a local HTTP server (no upstream
// host is reachable here).
import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { image } from '../../src/index.js';
import { Image } from '../../src/ir/schema.js';
import { debian12 } from '../../stdlib/bases.js';
import { serveFiles, type FileServer } from '../helpers/file-server.js';
import { tempDir } from '../helpers/temp.js';
import { outcomes, parseProgress } from '../compilers/shell-support.js';
import { outputTests, write } from './support.js';

const SUM = 'c'.repeat(64);
const ir = image('archive-test')
  .base(debian12())
  .provision((p) =>
    p
      .packages(['curl'])
      .archive('https://downloads.example.org/crictl-v1.31.1-linux-amd64.tar.gz', '/usr/local/bin', { sha256: SUM, creates: ['/usr/local/bin/crictl'] })
      .directory('/opt/cni', { mode: '0755' })
      .archive('https://downloads.example.org/cni-plugins.tgz', '/opt/cni/bin', { sha256: SUM, strip: 1, mode: '0755', owner: 'root', group: 'root', creates: ['/opt/cni/bin/bridge', '/opt/cni/bin/loopback'] }),
  )
  .toIR('archive-test.ts');

describe('archive: an archive by URL, unpacked, its paths declared', () => {
  it('checks clean', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('needs the unpacker in the root: xz for a .tar.xz, unzip for a .zip', () => {
    const bare = image('x')
      .base(debian12())
      .provision((p) =>
        p.packages(['curl']).archive('https://downloads.example.org/a.tar.xz', '/opt/a', { sha256: SUM, creates: ['/opt/a/x'] }).archive('https://downloads.example.org/b.zip', '/opt/b', { sha256: SUM, creates: ['/opt/b/y'] }),
      )
      .toIR('x.ts');
    expect(checkImage(bare).map((d) => `${d.code} ${d.message}`)).toEqual([
      "IMGC0001 archive into '/opt/a' requires command 'xz', which no step or the base provides",
      "IMGC0001 archive into '/opt/b' requires command 'unzip', which no step or the base provides",
    ]);
  });

  it('refuses what it cannot do, with the reason', () => {
    expect(() => image('x').base(debian12()).provision((p) => p.archive('https://downloads.example.org/tool', '/opt/t', { sha256: SUM, creates: ['/opt/t/x'] }))).toThrow(
      /archive https:\/\/downloads\.example\.org\/tool: its format does not show in the URL; say it: \{ format: 'tar\.gz' \| 'tar\.xz' \| 'tar\.zst' \| 'zip' \}/,
    );
    const noPaths = image('x').base(debian12()).provision((p) => p.packages(['curl', 'unzip']).archive('https://downloads.example.org/b.zip', '/opt/b', { sha256: SUM, strip: 1, creates: [] })).toIR('x.ts');
    expect(Image.safeParse(noPaths).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'phases.0.steps.1.creates: an archive declares at least one path it creates (the checker cannot see into it)',
      'phases.0.steps.1.strip: strip applies to tar archives only (unzip has no --strip-components)',
    ]);
  });

  it('decommission removes the declared paths, and the directory when empty', () => {
    const sh = compilers.shell.compile(ir, { decommission: true })['decommission.sh']!;
    // In reverse order of creation; /usr/local/bin is the base's, not the archive's to remove.
    const at = (p: string) => sh.indexOf(`imgc_undo_path ${p}\n`);
    expect(at('/opt/cni/bin/loopback')).toBeGreaterThan(0);
    expect(at('/opt/cni/bin/bridge')).toBeGreaterThan(at('/opt/cni/bin/loopback'));
    expect(at('/opt/cni/bin')).toBeGreaterThan(at('/opt/cni/bin/bridge'));
    expect(sh).toContain('imgc_undo_path /usr/local/bin/crictl');
    expect(sh).not.toContain('imgc_undo_path /usr/local/bin\n');
    const yml = compilers.ansible.compile(ir, { decommission: true })['decommission.yml']!;
    expect(yml).toContain("Undo: remove directory /opt/cni/bin when empty");
  });

  outputTests(ir, 'steps-archive');
});

describe('archive: the shell rendering, run on real archives from a local HTTP server', () => {
  let server: FileServer;
  beforeAll(async () => {
    // Release tarballs' layouts: crictl at the top; CNI plugins under one directory (strip 1 takes it off).
    const src = tempDir('archive-src');
    mkdirSync(path.join(src, 'cni-plugins'), { recursive: true });
    writeFileSync(path.join(src, 'crictl'), '#!/bin/sh\necho crictl\n', { mode: 0o755 });
    for (const p of ['bridge', 'loopback']) writeFileSync(path.join(src, 'cni-plugins', p), `#!/bin/sh\necho ${p}\n`, { mode: 0o755 });
    await execa('tar', ['-czf', 'crictl.tar.gz', 'crictl'], { cwd: src });
    await execa('tar', ['-czf', 'cni.tgz', 'cni-plugins'], { cwd: src });
    server = await serveFiles({ 'crictl.tar.gz': readFileSync(path.join(src, 'crictl.tar.gz')), 'cni.tgz': readFileSync(path.join(src, 'cni.tgz')) });
  });
  afterAll(() => server?.close());

  const scriptOf = (build: (dir: string) => Image): string => {
    const dir = tempDir('archive-run');
    write(dir, compilers.shell.compile(build(dir), {}));
    const script = path.join(dir, 'phases/01-provision.sh');
    // Only the archives: the package install is the base's business here.
    writeFileSync(script, readFileSync(script, 'utf8').replace(/^imgc_run provision\.1\.packages.*$/m, ''));
    return script;
  };

  it('unpacks (strip taken off), owns what it unpacked, and a second run changes nothing', async () => {
    const root = tempDir('archive-dest');
    const script = scriptOf(() =>
      image('run')
        .base(debian12())
        .provision((p) =>
          p
            .packages(['curl'])
            .archive(server.urlOf('crictl.tar.gz'), `${root}/bin` as '/x', { sha256: server.sha256Of('crictl.tar.gz'), format: 'tar.gz', creates: [`${root}/bin/crictl` as '/x'] })
            .archive(server.urlOf('cni.tgz'), `${root}/cni` as '/y', { sha256: server.sha256Of('cni.tgz'), format: 'tar.gz', strip: 1, mode: '0750', owner: 'nobody', creates: [`${root}/cni/bridge` as '/y'] }),
        )
        .toIR('run.ts'),
    );
    const first = await execa('/bin/sh', [script], { reject: false });
    expect(first.exitCode, first.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${first.stdout}\n`))].map(([, o]) => o)).toEqual(['changed', 'changed']);
    expect(readFileSync(path.join(root, 'bin/crictl'), 'utf8')).toBe('#!/bin/sh\necho crictl\n');
    expect(readdirSync(path.join(root, 'cni')).sort()).toEqual(['bridge', 'loopback']);
    expect(statSync(path.join(root, 'cni')).mode & 0o7777).toBe(0o750);
    const nobody = Number((await execa('id', ['-u', 'nobody'])).stdout);
    expect(statSync(path.join(root, 'cni/bridge')).uid).toBe(nobody);
    const second = await execa('/bin/sh', [script], { reject: false });
    expect(second.exitCode, second.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${second.stdout}\n`))].map(([, o]) => o)).toEqual(['unchanged', 'unchanged']);
  });

  it('fails when a declared path is not in the archive, and on a wrong sum with both sums', async () => {
    const root = tempDir('archive-dest');
    const missing = scriptOf(() =>
      image('run').base(debian12()).provision((p) => p.packages(['curl']).archive(server.urlOf('cni.tgz'), `${root}/cni` as '/y', { sha256: server.sha256Of('cni.tgz'), format: 'tar.gz', creates: [`${root}/cni/bridge` as '/y'] })).toIR('run.ts'),
    );
    const r = await execa('/bin/sh', [missing], { reject: false });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(`imgc: ${root}/cni/bridge: the archive from ${server.urlOf('cni.tgz')} did not hold it (check strip and the declared paths)`);
    const wrongSum = 'd'.repeat(64);
    const wrong = scriptOf(() =>
      image('run').base(debian12()).provision((p) => p.packages(['curl']).archive(server.urlOf('crictl.tar.gz'), `${root}/w` as '/y', { sha256: wrongSum, format: 'tar.gz', creates: [`${root}/w/crictl` as '/y'] })).toIR('run.ts'),
    );
    const w = await execa('/bin/sh', [wrong], { reject: false });
    expect(w.exitCode).not.toBe(0);
    expect(w.stderr).toContain(`sha256 mismatch: expected ${wrongSum}, got ${server.sha256Of('crictl.tar.gz')}`);
    expect(existsSync(path.join(root, 'w/crictl'))).toBe(false);
  });
});
