// Shared by the VM tests of the packer and cloud-init targets: the gate, the
// source disk they all boot (fixtures/source.ts, built once per test file),
// the build's key pair, a hook server on 127.0.0.1, the accelerator, and what
// must be left behind (no QEMU, no mount, no seed ISO).
import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cannotBuild, imgcRun, outDir } from '../build/helpers.js';
import { buildKey } from '../compilers/packer-support.js';
import { withImageRoot } from '../../src/verify/index.js';
import { chooseAccel } from '../../src/verify/boot.js';
import { mountsContaining, tempDir } from '../helpers/temp.js';
import { repoRoot } from '../helpers/cli.js';

const tools: [string, string][] = [
  ['/usr/bin/qemu-system-x86_64', 'qemu-system-x86'],
  ['/usr/share/ovmf/OVMF.fd', 'ovmf'],
  ['/usr/bin/packer', 'packer'],
  ['/usr/bin/xorriso', 'xorriso'],
  ['/usr/bin/cloud-localds', 'cloud-image-utils'],
];

const missing = tools.filter(([f]) => !existsSync(f)).map(([, p]) => p);

/** Every VM test's gate beside its tools: `npm run test:vm` sets IMGC_VM_TESTS=1; `npm test` leaves them out for now (CI's time). */
export const vmOptIn: string | undefined =
  process.env['IMGC_VM_TESTS'] !== '1' ? 'the VM tests are opt-in for now (CI time under TCG): npm run test:vm' : undefined;

/** Why the VM tests of the packer and cloud-init targets cannot run here, or undefined. */
export const cannotVm: string | undefined =
  cannotBuild ??
  (missing.length
    ? `${missing.join(', ')} not installed (apt-get install ${missing.join(' ')})`
    : vmOptIn);

if (cannotVm) console.warn(`VM tests skipped: ${cannotVm}`);

/** The accelerator imgc verify --boot would use (IMGC_QEMU_ACCEL, else kvm when /dev/kvm opens, else tcg), for Packer's accelerator variable. */
export const accelerator = (): 'kvm' | 'tcg' => chooseAccel(process.env).accel;

export interface SourceDisk {
  readonly file: string;
  readonly sha256: string;
}

/** imgc build of fixtures/source.ts: the bootable qcow2 with cloud-init and sshd every VM test starts from. */
export const buildSourceDisk = async (): Promise<SourceDisk> => {
  const out = outDir('vm-source');
  const b = await imgcRun(['build', 'test/vm/fixtures/source.ts', '--no-typecheck', '--out', out]);
  if (b.exitCode !== 0) throw new Error(`imgc build of the source disk failed:\n${b.all}`);
  const file = path.join(out, 'disk.qcow2');
  const sha256 = (await execa('sha256sum', [file])).stdout.split(' ')[0]!;
  return { file, sha256 };
};

export interface HookRequest {
  readonly path: string;
  readonly body: Record<string, unknown>;
}

/** An HTTP server on 127.0.0.1 that records each POST's JSON and answers 200. */
export const hookServer = async (): Promise<{ url: (p: string) => string; port: number; requests: HookRequest[]; close: () => Promise<void> }> => {
  const requests: HookRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      try {
        requests.push({ path: req.url ?? '', body: JSON.parse(body) as Record<string, unknown> });
      } catch {
        requests.push({ path: req.url ?? '', body: { unparsed: body } });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: (p) => `http://127.0.0.1:${port}${p}`, port, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
};

/** A definition file calling a fixture's function: the fixtures take the test's URLs. */
export const definitionFile = (dir: string, name: string, code: string): string => {
  const file = path.join(dir, `${name}.ts`);
  writeFileSync(file, code);
  return file;
};

export const fixture = (name: string): string => path.join(repoRoot, 'test', 'vm', 'fixtures', name);

export interface PackerRun {
  readonly code: number;
  readonly out: string;
  /** Wall seconds of the run. */
  readonly wall: number;
  /** CPU seconds (user + system) of packer and what it waited for (its plugins, QEMU), as bash's `times` counts children. */
  readonly cpu: number;
}

/**
 * Packer 1.6.6 with its home and temp dir of its own (so its seed ISOs can be
 * counted), no checkpoint calls; `only`: its -only builds. It runs under bash,
 * which reports the CPU time of packer and its children when packer exits
 * (and hands on SIGTERM to it: a Ctrl-C of the test reaches packer).
 */
export const packerBuild = async (dir: string, vars: Record<string, string>, tmp: string, opts: { signal?: AbortSignal; only?: string } = {}): Promise<PackerRun> => {
  const args = ['build', ...(opts.only ? [`-only=${opts.only}`] : []), ...Object.entries(vars).flatMap(([k, v]) => ['-var', `${k}=${v}`]), '.'];
  const times = path.join(tmp, 'times');
  const started = Date.now();
  const r = await execa('bash', ['-c', 'trap \'kill -TERM "$pid" 2>/dev/null\' TERM INT; packer "$@" & pid=$!; wait "$pid"; rc=$?; [ $rc -lt 128 ] || wait "$pid"; rc=$?; times > "$IMGC_TIMES"; exit $rc', 'packer', ...args], {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: tmp, TMPDIR: tmp, CHECKPOINT_DISABLE: '1', PACKER_CACHE_DIR: path.join(tmp, 'cache'), IMGC_TIMES: times },
    extendEnv: false,
    reject: false,
    all: true,
    ...(opts.signal ? { cancelSignal: opts.signal, killSignal: 'SIGTERM' as const } : {}),
  });
  // `times`: the shell's user and system times, then its children's ("0m12.345s 0m1.234s").
  const children = existsSync(times) ? (readFileSync(times, 'utf8').split('\n')[1] ?? '') : '';
  const cpu = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
  return { code: r.exitCode ?? -1, out: r.all ?? '', wall: (Date.now() - started) / 1000, cpu };
};

/** The variables a seeded qemu source named `prefix` takes, for a disk on this machine. */
export const seedVars = (prefix: string, disk: SourceDisk): Record<string, string> => ({
  [`${prefix}_iso_url`]: disk.file,
  [`${prefix}_iso_checksum`]: `sha256:${disk.sha256}`,
  [`${prefix}_ssh_private_key_file`]: buildKey(),
  [`${prefix}_accelerator`]: accelerator(),
});

/**
 * QEMU processes running now whose command line names one of `needles` (a
 * test's own directories): the other VM test files boot theirs at the same time.
 */
export const qemusUsing = async (...needles: string[]): Promise<string[]> =>
  (await execa('pgrep', ['-a', '-f', 'qemu-system-x86_64'], { reject: false })).stdout
    .split('\n')
    .filter((l) => l && needles.some((n) => l.includes(n)))
    .map((l) => l.split(' ')[0]!);

/** Seed ISOs Packer left in its temp dir (packer*.iso). */
export const isosIn = (tmp: string): string[] => (existsSync(tmp) ? readdirSync(tmp).filter((f) => /\.iso$/.test(f)) : []);

/** Files of a disk's root, read without booting it. */
export const readFromImage = (image: string, files: readonly string[]): Promise<Record<string, string | undefined>> =>
  withImageRoot(image, tempDir('vm-read', tmpdir()), (_view, dir) =>
    Object.fromEntries(files.map((f) => [f, existsSync(path.join(dir, f)) ? readFileSync(path.join(dir, f), 'utf8') : undefined])),
  );

/** Whether a directory exists in a disk's root, and what it holds. */
export const listInImage = (image: string, dirs: readonly string[]): Promise<Record<string, string[] | undefined>> =>
  withImageRoot(image, tempDir('vm-list', tmpdir()), (_view, root) =>
    Object.fromEntries(dirs.map((d) => [d, existsSync(path.join(root, d)) ? readdirSync(path.join(root, d)) : undefined])),
  );

export { imgcRun, mountsContaining, tempDir };
