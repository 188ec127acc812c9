// Downloads in a real chroot build (shell target): imgc fetches each file on
// the build machine through its cache and hands it to the phase script, so
// the root never fetches (the server sees each file asked for once, by imgc),
// and a wrong sum fails the build at the step, naming both sums. The files
// are made here and served from 127.0.0.1: no upstream host is reachable.
import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { serveFiles, type FileServer } from '../helpers/file-server.js';
import { tempDir } from '../helpers/temp.js';
import { cannotBuild, imgcRun, outDir, privateCache, read } from './helpers.js';

const fixture = path.join(repoRoot, 'test/build/fixtures/downloads.ts');

describe.skipIf(cannotBuild)('imgc build with downloads and archives', () => {
  let server: FileServer;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    const src = tempDir('downloads-build-src');
    mkdirSync(src, { recursive: true });
    writeFileSync(path.join(src, 'crictl'), '#!/bin/sh\necho crictl\n', { mode: 0o755 });
    await execa('tar', ['-czf', 'crictl.tar.gz', 'crictl'], { cwd: src });
    server = await serveFiles({ kubectl: '#!/bin/sh\necho kubectl\n', 'crictl.tar.gz': readFileSync(path.join(src, 'crictl.tar.gz')) });
    env['IMGC_CACHE'] = privateCache('downloads-build');
  });
  afterAll(() => server?.close());

  const vars = (crictlSum = server.sha256Of('crictl.tar.gz')) => ['--var', `files_url=${server.url}`, '--var', `kubectl_sha256=${server.sha256Of('kubectl')}`, '--var', `crictl_sha256=${crictlSum}`];

  it('builds: the files are fetched once, by imgc, and verify passes', async () => {
    const out = outDir('downloads-build');
    const b = await imgcRun(['build', fixture, '--no-typecheck', '--target', 'shell', '--out', out, ...vars()], { env });
    expect(b.exitCode, b.all).toBe(0);
    expect(read(path.join(out, 'rootfs/usr/local/bin/kubectl'))).toBe('#!/bin/sh\necho kubectl\n');
    expect(statSync(path.join(out, 'rootfs/usr/local/bin/kubectl')).mode & 0o777).toBe(0o755);
    expect(read(path.join(out, 'rootfs/usr/local/bin/crictl'))).toBe('#!/bin/sh\necho crictl\n');
    expect(read(path.join(out, 'rootfs/etc/systemd/system/kubelet.service.d/10-imgc.conf'))).toBe('[Service]\nEnvironment=IMGC=1\n');
    // Once each, from imgc on this machine: the phase script took the staged files (it has curl, and did not use it).
    expect([...server.requests].sort()).toEqual(['/crictl.tar.gz', '/kubectl']);
    for (const f of ['kubectl', 'crictl.tar.gz']) expect(existsSync(path.join(env['IMGC_CACHE']!, 'downloads', server.sha256Of(f))), f).toBe(true);
    expect(existsSync(path.join(out, 'rootfs/run/imgc-downloads'))).toBe(false);
    const log = readdirSync(path.join(out, 'logs')).find((f) => /-provision\.log$/.test(f))!;
    expect(read(path.join(out, 'logs', log))).toContain(`imgc: download ${server.url}/kubectl (sha256 ${server.sha256Of('kubectl')}) for step provision.2.download`);
    const verified = await imgcRun(['verify', fixture, '--no-typecheck', '--root', path.join(out, 'rootfs'), ...vars()], { env });
    expect(verified.exitCode, verified.all).toBe(0);
  }, 900_000);

  it('fails at the step on a wrong sum, naming both sums', async () => {
    const out = outDir('downloads-build-wrong');
    const wrong = 'e'.repeat(64);
    const b = await imgcRun(['build', fixture, '--no-typecheck', '--target', 'shell', '--out', out, ...vars(wrong)], { env });
    expect(b.exitCode).not.toBe(0);
    expect(b.all).toContain('provision.3.archive');
    expect(b.all).toContain(`sha256 mismatch: expected ${wrong}, got ${server.sha256Of('crictl.tar.gz')}`);
  }, 900_000);
});
