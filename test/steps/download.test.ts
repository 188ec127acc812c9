// The download kind: a file fetched by URL with a required sha256. Outputs for
// every target; the checker's reading (curl is needed in the root); the shell
// rendering run for real against a local HTTP server (test/helpers/file-server.ts:
// no upstream host is reachable here), including a wrong sum and a file the
// build staged (a chroot build fetches on the build machine).
import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { image, variable, z } from '../../src/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { Image } from '../../src/ir/schema.js';
import { serveFiles, type FileServer } from '../helpers/file-server.js';
import { tempDir } from '../helpers/temp.js';
import { outcomes, parseProgress } from '../compilers/shell-support.js';
import { outputTests, write } from './support.js';

const SUM = 'a'.repeat(64);
const crictlUrl = variable('crictl_url', z.string(), { default: 'https://downloads.example.org/crictl-v1.31.1-linux-amd64.tar.gz' });
const crictlSum = variable('crictl_sha256', z.string(), { default: 'b'.repeat(64) });
const built = image('download-test')
  .base(debian12())
  .provision((p) =>
    p
      .packages(['curl'])
      .user('kube', { system: true })
      .directory('/opt/tools', { mode: '0755' })
      .download('https://downloads.example.org/kubectl', '/usr/local/bin/kubectl', { sha256: SUM, mode: '0755' })
      .download(`${crictlUrl}`, '/opt/tools/crictl.tar.gz', { sha256: `${crictlSum}`, owner: 'kube', group: 'kube', mode: '0640' }),
  )
  .toIR('download-test.ts');
// What the loader adds for the variables the steps use (src/load/variables.ts).
const ir = {
  ...built,
  variables: [
    { name: 'crictl_url', type: 'string' as const, sensitive: false, value: 'https://downloads.example.org/crictl-v1.31.1-linux-amd64.tar.gz' },
    { name: 'crictl_sha256', type: 'string' as const, sensitive: false, value: 'b'.repeat(64) },
  ],
};

describe('download: a file by URL with its sha256', () => {
  it('checks clean', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('needs curl in the root, and says so when nothing installs it', () => {
    const bare = image('x').base(debian12()).provision((p) => p.download('https://downloads.example.org/kubectl', '/usr/local/bin/kubectl', { sha256: SUM })).toIR('x.ts');
    expect(checkImage(bare).map((d) => `${d.code} ${d.message}`)).toEqual([expect.stringMatching(/^IMGC0001 download '\/usr\/local\/bin\/kubectl' requires command 'curl'/)]);
  });

  it('refuses a sha256 that is not 64 hex digits when the definition is loaded', () => {
    const bad = image('x').base(debian12()).provision((p) => p.packages(['curl']).download('https://downloads.example.org/k', '/usr/local/bin/k', { sha256: 'abc' })).toIR('x.ts');
    expect(Image.safeParse(bad).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual(['phases.0.steps.1.sha256: a sha256 is 64 lower-case hex digits, or a variable holding them']);
  });

  it('decommission removes the file it fetched', () => {
    const sh = compilers.shell.compile(ir, { decommission: true })['decommission.sh']!;
    expect(sh).toContain('imgc_undo_path /usr/local/bin/kubectl');
    expect(sh).toContain('imgc_undo_path /opt/tools/crictl.tar.gz');
  });

  outputTests(ir, 'steps-download');
});

describe('download: the shell rendering, run against a local HTTP server', () => {
  let server: FileServer;
  const body = Buffer.from('#!/bin/sh\necho kubectl\n');
  beforeAll(async () => {
    server = await serveFiles({ kubectl: body, other: 'other bytes\n' });
  });
  afterAll(() => server.close());

  const scriptFor = (url: string, sha256: string, dest: string): string => {
    const run = image('run').base(debian12()).provision((p) => p.packages(['curl']).download(url, dest as `/${string}`, { sha256, mode: '0755' })).toIR('run.ts');
    const dir = tempDir('download-run');
    const files = compilers.shell.compile(run, {});
    write(dir, files);
    // Only the download: the package install is the base's business here.
    const script = path.join(dir, 'phases/01-provision.sh');
    writeFileSync(script, readFileSync(script, 'utf8').replace(/^imgc_run provision\.1\.packages.*$/m, ''));
    return script;
  };

  it('fetches, checks and places the file; a second run changes nothing', async () => {
    const dest = path.join(tempDir('download-dest'), 'bin/kubectl');
    const script = scriptFor(server.urlOf('kubectl'), server.sha256Of('kubectl'), dest);
    const first = await execa('/bin/sh', [script], { reject: false });
    expect(first.exitCode, first.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${first.stdout}\n`))].map(([, o]) => o)).toEqual(['changed']);
    expect(readFileSync(dest)).toEqual(body);
    expect(statSync(dest).mode & 0o7777).toBe(0o755);
    const second = await execa('/bin/sh', [script], { reject: false });
    expect(second.exitCode, second.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${second.stdout}\n`))].map(([, o]) => o)).toEqual(['unchanged']);
  });

  it('a wrong sum fails the step with both sums and leaves nothing behind', async () => {
    const dir = tempDir('download-wrong');
    const dest = path.join(dir, 'kubectl');
    const want = server.sha256Of('kubectl');
    const script = scriptFor(server.urlOf('other'), want, dest);
    const r = await execa('/bin/sh', [script], { reject: false });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(`${server.urlOf('other')}: sha256 mismatch: expected ${want}, got ${server.sha256Of('other')}`);
    expect(r.stdout).toMatch(/imgc-step provision\.2\.download failed/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('takes a file the build staged by its sum instead of fetching (no network needed)', async () => {
    const staged = tempDir('download-staged');
    const sum = server.sha256Of('kubectl');
    writeFileSync(path.join(staged, sum), body);
    const dest = path.join(tempDir('download-dest'), 'kubectl');
    const before = server.requests.length;
    // A closed port: any fetch would fail.
    const script = scriptFor('http://127.0.0.1:9/kubectl', sum, dest);
    const r = await execa('/bin/sh', [script], { reject: false, env: { IMGC_DOWNLOADS: staged } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(dest)).toEqual(body);
    expect(server.requests.length).toBe(before);
    expect(existsSync(path.join(staged, sum))).toBe(true);
  });
});
