// `imgc verify --boot DISK` and `v.boot()`: boots a bootable disk in QEMU
// (UEFI: OVMF; serial console; a NIC on QEMU's user network, restricted: the
// guest gets DHCP from QEMU and reaches nothing else) and checks on the running node what
// the definition promised: services active, kernel modules loaded, sysctls
// applied, swap off, users and groups, commands that run.
//
// The user's disk is never written: it is converted to a temporary raw copy,
// into whose root partition `debugfs -w` writes a one-shot unit (enabled in
// multi-user.target.wants) and the generated check script. The unit waits for
// the boot to finish, prints one machine-readable line per check on a port of
// its own (a file on the host: the second serial port, ttyS1, of an amd64 node;
// a virtio serial port of an arm64 one, whose virt machine has one UART) and
// powers the node off. An arm64 disk boots under qemu-system-aarch64 with
// AAVMF, under TCG on an amd64 host. QEMU runs
// under `timeout` in a process group of its own, killed on every exit path
// (timeout, Ctrl-C, SIGTERM, an exception, process exit).
import { execa } from 'execa';
import { runsUnder, valuesOf } from '../core/conditions.js';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Image, SourceLocation, Step } from '../ir/schema.js';
import { word } from '../emit/shell/quote.js';
import { imageView, phaseKind } from '../ir/phases.js';
import { kindOf } from '../steps/index.js';
import { rootPartitionOffset } from '../host/gpt.js';
import { run, SYSTEM_PATH } from '../host/exec.js';
import type { VerifyFailure, VerifyResult } from './index.js';
import { archInfo, archOf, type Arch } from '../core/arch.js';
import { isForeign } from '../host/binfmt.js';

/** One runtime check: a shell snippet that exits 0 when it holds and prints why when not. */
export interface BootCheck {
  subject: string;
  what: string;
  stepId: string;
  loc?: SourceLocation;
  script: string;
}

/** Commands checked by running them (a version query), rather than by being on PATH. */
const commandProbes: Readonly<Record<string, string>> = {
  ctr: 'ctr version',
  kubeadm: 'kubeadm version',
  kubectl: 'kubectl version --client',
  kubelet: 'kubelet --version',
  containerd: 'containerd --version',
  runc: 'runc --version',
};

const q = word;

/** The runtime checks a definition's steps promise, the last step about a subject winning (as in expectationsOf). */
export const bootChecksOf = (ir: Image): BootCheck[] => {
  const bySubject = new Map<string, BootCheck>();
  const put = (s: Step, subject: string, what: string, script: string) => {
    bySubject.delete(subject);
    bySubject.set(subject, { subject, what, stepId: s.id, ...(s.loc ? { loc: s.loc } : {}), script });
  };
  const values = valuesOf(ir.variables);
  for (const phase of imageView(ir).phases) {
    if (phaseKind(phase) !== 'root') continue;
    for (const s of [...phase.pre, ...phase.steps, ...phase.post]) {
      if (!runsUnder(s.conditions, values)) continue; // a step the variables' values do not take
      for (const f of s.removes) bySubject.delete(`${f.kind}:${f.key}`);
      for (const b of kindOf(s).verify.boot?.(s) ?? []) put(s, b.subject, b.what, b.script);
      for (const f of s.provides) {
        if (f.kind === 'user') put(s, `user:${f.key}`, `user '${f.key}'`, `getent passwd ${q(f.key)} >/dev/null || { echo "getent passwd finds no '${f.key}'"; exit 1; }`);
        else if (f.kind === 'group') put(s, `group:${f.key}`, `group '${f.key}'`, `getent group ${q(f.key)} >/dev/null || { echo "getent group finds no '${f.key}'"; exit 1; }`);
        else if (f.kind === 'command') {
          const probe = commandProbes[f.key];
          put(
            s,
            `command:${f.key}`,
            probe ? `command '${probe}' runs` : `command '${f.key}'`,
            probe ? `out=$(${probe} 2>&1) || { echo "failed: $(echo "$out" | tail -n 3 | tr '\\n' ' ')"; exit 1; }` : `command -v ${q(f.key)} >/dev/null || { echo "not found on PATH"; exit 1; }`,
          );
        }
      }
    }
  }
  return [...bySubject.values()];
};

/** Where the node writes its results, and the QEMU arguments that make that a file on the host. */
const resultsPort: Readonly<Record<Arch, { guest: string; qemu: (file: string) => string[] }>> = {
  amd64: { guest: '/dev/ttyS1', qemu: (file) => ['-serial', `file:${file}`] },
  arm64: {
    guest: '/dev/virtio-ports/imgc.results',
    qemu: (file) => ['-device', 'virtio-serial-pci', '-chardev', `file,id=results,path=${file.replace(/,/g, ',,')}`, '-device', 'virtserialport,chardev=results,name=imgc.results'],
  },
};

/** Marks on the results port: one line per check, then the end (anything else there is ignored). */
const MARK = 'imgc-boot';

/** The script the booted node runs: wait for the boot to finish, run each check, report, power off. */
export const bootScript = (checks: readonly BootCheck[], arch: Arch = 'amd64'): string => {
  const lines = [
    '#!/bin/sh',
    '# Written by imgc verify --boot into a temporary copy of the disk.',
    '# Each check is one single-quoted word that check() evaluates: its $ expands then.',
    '# shellcheck disable=SC2016',
    `out=${resultsPort[arch].guest}`,
    'stty -F "$out" raw -echo 2>/dev/null || true',
    'state=$(systemctl is-system-running --wait 2>&1)',
    `echo "${MARK} state $state" >"$out"`,
    `echo "${MARK} failed-units $(systemctl --failed --no-legend --plain 2>/dev/null | awk '{print $1}' | tr '\\n' ' ')" >"$out"`,
    'check() {',
    '  n=$1; shift',
    '  if r=$( ( eval "$1" ) 2>&1 ); then echo "' + MARK + ' $n ok $(printf %s "$r" | tr -d \'\\r\' | tr \'\\n\' \' \' | cut -c1-400)" >"$out"; else echo "' + MARK + ' $n fail $(printf %s "$r" | tr -d \'\\r\' | tr \'\\n\' \' \' | cut -c1-400)" >"$out"; fi',
    '}',
    ...checks.map((c, i) => `check ${i} ${q(c.script)}`),
    `echo "${MARK} end" >"$out"`,
    'sync',
    'systemctl poweroff --no-block',
    '',
  ];
  return lines.join('\n');
};

const UNIT = [
  '[Unit]',
  'Description=imgc verify --boot: check the promised facts on the running node',
  'After=basic.target',
  '',
  '[Service]',
  // simple: the unit is started at once, so `systemctl is-system-running --wait` in it does not wait for itself.
  'Type=simple',
  'ExecStart=/bin/sh /etc/imgc-boot-check.sh',
  'StandardOutput=journal+console',
  '',
].join('\n');

export interface BootOptions {
  /** Seconds to wait for the node to boot, check and power off. */
  timeoutSeconds: number;
  /**
   * Where the node's serial console goes, with what it reported beside it
   * (NAME-results.txt for NAME-console.log, else CONSOLE.results.txt).
   * Without it both are kept only when a check fails, in a folder of their
   * own under `scratch` ({@link BootResult.console}).
   */
  consoleLog?: string;
  /** A directory for the temporary disk copy (room for the disk's data). */
  scratch: string;
  /** Aborting stops the VM at once (Ctrl-C of a build). */
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Progress lines ("booting with TCG"). */
  onInfo?: (line: string) => void;
  /** A NoCloud seed (an ISO or FAT image labelled cidata), attached read-only as a second disk. */
  seed?: string;
  /** Checks run after the definition's, as the caller wrote them. */
  checks?: readonly BootCheck[];
  /**
   * Boot `disk` itself (raw, a copy the caller owns) instead of a temporary
   * copy: what the node writes stays on it, for another boot.
   */
  inPlace?: boolean;
  /** Guest addresses (`10.0.2.100:80`) forwarded to ports on the host's 127.0.0.1: all the restricted network reaches. */
  forwards?: readonly { guest: string; port: number }[];
  /**
   * QEMU's user network without restrict=on: the guest reaches what the host
   * reaches (the apt mirror; the host's loopback as 10.0.2.2). For a first
   * boot whose seed installs packages.
   */
  openNetwork?: boolean;
}

export interface BootResult extends VerifyResult {
  accel: 'kvm' | 'tcg';
  /** From starting QEMU to the node's last report. */
  bootMs: number;
  state?: string;
  /** What each check that held printed (its subject → the output, one line), for the caller's own comparisons. */
  printed: Record<string, string>;
  /** Where the node's console log is: the caller's consoleLog, or the folder it was kept in because a check failed. */
  console?: string;
}

/** Whether a guest under KVM runs here: /dev/kvm usable, unless IMGC_QEMU_ACCEL says which. A guest of another architecture is emulated (TCG). */
export const chooseAccel = (env: NodeJS.ProcessEnv, guest: Arch = 'amd64'): { accel: 'kvm' | 'tcg'; probe: boolean } => {
  if (isForeign(guest)) return { accel: 'tcg', probe: false };
  const want = env['IMGC_QEMU_ACCEL'];
  if (want === 'kvm' || want === 'tcg') return { accel: want, probe: false };
  if (want) throw new Error(`IMGC_QEMU_ACCEL must be kvm or tcg (got '${want}')`);
  try {
    readFileSync('/dev/kvm', { flag: 'r' });
  } catch (e) {
    // EINVAL on read means the device opened: KVM is there (reads are not how it is used).
    if ((e as NodeJS.ErrnoException).code !== 'EINVAL') return { accel: 'tcg', probe: false };
  }
  return { accel: 'kvm', probe: true };
};

/** QEMU itself failed (not the node): the boot check could not run. */
export class QemuFailed extends Error {}

/** Seconds KVM gets to show the kernel's first console line before TCG is used instead (guests can hang under nested KVM). */
const KVM_PROBE_SECONDS = 20;

/** Boots `disk` (raw or qcow2) and checks `ir`'s runtime facts on it. */
export const verifyBoot = async (ir: Image, disk: string, opts: BootOptions): Promise<BootResult> => {
  const env = opts.env ?? process.env;
  const arch = archOf(ir.base);
  const info = archInfo[arch];
  let { accel, probe } = chooseAccel(env, arch);
  const checks = [...bootChecksOf(ir), ...(opts.checks ?? [])];
  const firmware = info.firmware.code.find((f) => existsSync(f));
  if (!firmware) throw new Error(`no UEFI firmware for QEMU's ${arch} machine: apt-get install ${info.firmwarePackage}`);
  const vars = firmware.replace('CODE', 'VARS');
  mkdirSync(opts.scratch, { recursive: true });
  const tmp = mkdtempSync(path.join(opts.scratch, '.imgc-boot-'));
  try {
    const fmt = /\.qcow2$/i.test(disk) ? 'qcow2' : 'raw';
    if (opts.inPlace && fmt !== 'raw') throw new Error(`${disk}: booting a disk in place needs a raw disk`);
    const raw = opts.inPlace ? disk : path.join(tmp, 'disk.raw');
    if (!opts.inPlace) await run('qemu-img', ['convert', '-f', fmt, '-O', 'raw', disk, raw]);
    const offset = await rootPartitionOffset(raw);
    if (offset === undefined) throw new Error(`${disk} has no partition table: it is not a bootable disk (raw/qcow2 with { bootable: true })`);
    const script = path.join(tmp, 'check.sh');
    const unit = path.join(tmp, 'check.service');
    writeFileSync(script, bootScript(checks, arch));
    writeFileSync(unit, UNIT);
    const cmds = [
      // A disk booted in place may hold an earlier boot's check: replaced.
      ...(opts.inPlace ? ['rm /etc/imgc-boot-check.sh', 'rm /etc/systemd/system/imgc-boot-check.service', 'rm /etc/systemd/system/multi-user.target.wants/imgc-boot-check.service'] : []),
      'cd /etc/systemd/system',
      'mkdir multi-user.target.wants',
      `write ${unit} imgc-boot-check.service`,
      `write ${script} /etc/imgc-boot-check.sh`,
      'cd /etc/systemd/system/multi-user.target.wants',
      'symlink imgc-boot-check.service /etc/systemd/system/imgc-boot-check.service',
      '',
    ].join('\n');
    const w = await run('debugfs', ['-w', '-f', '-', `${raw}?offset=${offset}`], { input: cmds, check: false });
    if (w.exitCode !== 0 || /Filesystem not open|Bad magic|Allocate inode/i.test(w.output)) throw new Error(`could not write the check into ${disk}'s root: ${w.output.trim()}`);
    copyFileSync(vars, path.join(tmp, 'vars.fd'));
    // A node with cloud-init finds no datasource in QEMU and would stay without it: an empty NoCloud seed lets it run as on a cloud.
    const seed = opts.seed ?? (checks.some((c) => c.subject === 'service:cloud-init') ? await emptySeed(tmp) : undefined);
    const results = path.join(tmp, 'results.txt');
    const consoleLog = opts.consoleLog ?? path.join(tmp, 'boot-console.log');
    mkdirSync(path.dirname(consoleLog), { recursive: true });

    const started = Date.now();
    const qemu = { arch, tmp, firmware, raw, results, consoleLog, timeoutSeconds: opts.timeoutSeconds, forwards: opts.forwards ?? [], open: opts.openNetwork === true, ...(seed ? { seed } : {}), ...(opts.signal ? { signal: opts.signal } : {}) };
    let outcome = await runQemu({ ...qemu, accel, probeSeconds: probe ? KVM_PROBE_SECONDS : 0 });
    if (typeof outcome === 'object') {
      opts.onInfo?.(`${outcome.kvmFailed}: booting with TCG instead`);
      accel = 'tcg';
      copyFileSync(vars, path.join(tmp, 'vars.fd'));
      outcome = await runQemu({ ...qemu, accel, probeSeconds: 0 });
    }
    const bootMs = Date.now() - started;
    const result = readResults(ir, checks, { disk, results, outcome, accel, bootMs, timeoutSeconds: opts.timeoutSeconds, consoleLog });
    // Kept beside the console log: what the node reported, line by line. Without a place for
    // them, both are worth keeping only when something failed (the caller says where they are).
    const keep = opts.consoleLog ?? (result.failures.length ? path.join(mkdtempSync(path.join(opts.scratch, 'imgc-verify-console-')), 'boot-console.log') : undefined);
    if (keep) {
      if (keep !== consoleLog && existsSync(consoleLog)) copyFileSync(consoleLog, keep);
      if (existsSync(results)) copyFileSync(results, /console\.log$/.test(keep) ? keep.replace(/console\.log$/, 'results.txt') : `${keep}.results.txt`);
    }
    return { ...result, ...(keep ? { console: keep } : {}) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
};

/** A NoCloud seed with no configuration: a FAT image labelled CIDATA (mkfs.fat and mtools, as the ESP is made). */
const emptySeed = async (dir: string): Promise<string> => {
  const seed = path.join(dir, 'seed.img');
  const env = { MTOOLS_SKIP_CHECK: '1' };
  writeFileSync(path.join(dir, 'user-data'), '#cloud-config\n');
  writeFileSync(path.join(dir, 'meta-data'), 'instance-id: imgc-verify-boot\n');
  await run('mkfs.fat', ['-C', '-n', 'CIDATA', seed, '1024'], { env });
  await run('mcopy', ['-i', seed, path.join(dir, 'user-data'), path.join(dir, 'meta-data'), '::/'], { env });
  return seed;
};

/**
 * The command QEMU's guestfwd runs for each connection the guest opens,
 * joining it to a port on the host's 127.0.0.1 (a chardev would be one
 * connection for the life of the VM).
 */
const loopbackBridge = (port: number): string =>
  `${process.execPath} -e "const s = require('node:net').connect(${port}, '127.0.0.1'); process.stdin.pipe(s).pipe(process.stdout)"`;

/** How QEMU ended; `kvmFailed`: KVM, being probed, is unusable here (why), so TCG is tried. */
type QemuOutcome = 'exited' | 'timeout' | { kvmFailed: string };

/**
 * Runs QEMU to completion. It runs detached (a process group of its own)
 * under `timeout`; the group is killed on abort, on SIGINT/SIGTERM (which are
 * then re-raised to the caller's handlers) and on process exit.
 */
const runQemu = async (o: {
  arch: Arch;
  accel: 'kvm' | 'tcg';
  tmp: string;
  firmware: string;
  raw: string;
  results: string;
  consoleLog: string;
  timeoutSeconds: number;
  probeSeconds: number;
  seed?: string;
  forwards: readonly { guest: string; port: number }[];
  open: boolean;
  signal?: AbortSignal;
}): Promise<QemuOutcome> => {
  rmSync(o.results, { force: true });
  rmSync(o.consoleLog, { force: true });
  const args = [
    '-k', '5', String(o.timeoutSeconds),
    archInfo[o.arch].qemuSystem,
    '-machine', `${archInfo[o.arch].qemuMachine},accel=${o.accel}`,
    // Under TCG, arm64 gets a Cortex-A72: virt's default is a 32-bit CPU, and `max` emulates pointer authentication, which costs much time.
    ...(o.accel === 'kvm' ? ['-cpu', 'host'] : o.arch === 'arm64' ? ['-cpu', 'cortex-a72'] : []),
    '-m', '1024',
    '-smp', '2',
    '-nodefaults',
    '-display', 'none',
    '-no-reboot',
    // restrict=on: QEMU's DHCP and nothing beyond the guest, but the forwards to the host's loopback.
    '-nic', ['user', 'model=virtio-net-pci', ...(o.open ? [] : ['restrict=on']), ...o.forwards.map((f) => `guestfwd=tcp:${f.guest}-cmd:${loopbackBridge(f.port).replace(/,/g, ',,')}`)].join(','),
    '-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${o.firmware}`,
    '-drive', `if=pflash,format=raw,unit=1,file=${path.join(o.tmp, 'vars.fd')}`,
    '-drive', `if=virtio,format=raw,file=${o.raw}`,
    ...(o.seed ? ['-drive', `if=virtio,format=raw,readonly=on,file=${o.seed}`] : []),
    '-serial', `file:${o.consoleLog}`,
    ...resultsPort[o.arch].qemu(o.results),
  ];
  const sub = execa('timeout', args, { env: { PATH: SYSTEM_PATH }, extendEnv: true, detached: true, stdin: 'ignore', reject: false, all: true, buffer: true });
  const kill = () => {
    try {
      if (sub.pid) process.kill(-sub.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  };
  // Exiting on a signal or process.exit skips the caller's finally: the disk copy (as large as the disk) goes here too.
  const killAndClean = () => {
    kill();
    rmSync(o.tmp, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    killAndClean();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // No other handler: behave as the signal would have (the exit code of a signal).
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
  };
  const hasOwnHandlers = process.listenerCount('SIGINT') > 0;
  if (!hasOwnHandlers) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  process.on('exit', killAndClean);
  o.signal?.addEventListener('abort', kill);
  let probeFailed = false;
  const probe =
    o.probeSeconds > 0
      ? setTimeout(() => {
          let text = '';
          try {
            text = readFileSync(o.consoleLog, 'utf8');
          } catch {
            /* nothing yet */
          }
          if (!/Linux version|systemd\[1\]|Welcome to/.test(text)) {
            probeFailed = true;
            kill();
          }
        }, o.probeSeconds * 1000)
      : undefined;
  try {
    const r = await sub;
    if (o.signal?.aborted) throw new Error('interrupted');
    if (probeFailed) return { kvmFailed: `no console output under KVM within ${o.probeSeconds}s` };
    if (r.exitCode === 124 || r.exitCode === 137) return 'timeout';
    const said = String(r.all ?? '').trim().split('\n').slice(-5).join('\n');
    const how = r.exitCode === undefined ? `killed by ${r.signal ?? 'a signal'}` : `exit ${r.exitCode}`;
    // Nested KVM can also make QEMU abort (an MSR it cannot set): while KVM is being probed, that means TCG.
    if (r.exitCode !== 0 && o.probeSeconds > 0) return { kvmFailed: `QEMU failed under KVM (${how}: ${said.split('\n')[0] ?? ''})` };
    if (r.exitCode !== 0) throw new QemuFailed(`${archInfo[o.arch].qemuSystem} failed (${how}): ${said}`);
    return 'exited';
  } finally {
    if (probe) clearTimeout(probe);
    kill(); // the group: nothing QEMU started outlives it
    process.off('exit', killAndClean);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    o.signal?.removeEventListener('abort', kill);
  }
};

const readResults = (
  ir: Image,
  checks: readonly BootCheck[],
  o: { disk: string; results: string; outcome: QemuOutcome; accel: 'kvm' | 'tcg'; bootMs: number; timeoutSeconds: number; consoleLog: string },
): BootResult => {
  const text = existsSync(o.results) ? readFileSync(o.results, 'utf8').replace(/\r/g, '') : '';
  const lines = text.split('\n').filter((l) => l.startsWith(`${MARK} `)).map((l) => l.slice(MARK.length + 1));
  const failures: VerifyFailure[] = [];
  const seen = new Set<number>();
  let state: string | undefined;
  let failedUnits = '';
  const printed: Record<string, string> = {};
  for (const l of lines) {
    const m = /^(\d+) (ok|fail)(?: (.*))?$/.exec(l);
    if (m) {
      const c = checks[Number(m[1])];
      if (!c) continue;
      seen.add(Number(m[1]));
      if (m[2] === 'ok' && m[3]?.trim()) printed[c.subject] = m[3].trim();
      if (m[2] === 'fail') failures.push({ what: c.what, reason: (m[3] ?? '').trim() || 'failed', stepId: c.stepId, ...(c.loc ? { loc: c.loc } : {}) });
    } else if (l.startsWith('state ')) state = l.slice(6).trim();
    else if (l.startsWith('failed-units ')) failedUnits = l.slice(13).trim();
  }
  const ended = lines.includes('end');
  const baseLoc = ir.base.loc;
  if (!ended) {
    const tail = existsSync(o.consoleLog) ? readFileSync(o.consoleLog, 'utf8').replace(/\r/g, '').trimEnd().split('\n').slice(-3).join(' | ') : '';
    const why = o.outcome === 'timeout' ? `did not finish within ${o.timeoutSeconds}s` : 'powered off before reporting';
    failures.push({ what: 'the node boots to multi-user', reason: `${why}${state ? ` (system ${state})` : ''}; console: ${path.basename(o.consoleLog)}${tail ? `: ${tail}` : ''}`, stepId: 'base', ...(baseLoc ? { loc: baseLoc } : {}) });
  } else if (state !== 'running' && failedUnits) {
    // A unit that failed and that no step promised is still worth a line: the node is degraded.
    const promised = new Set(checks.filter((c) => c.subject.startsWith('service:')).map((c) => `${c.subject.slice(8).replace(/\.service$/, '')}.service`));
    for (const u of failedUnits.split(/\s+/)) {
      if (u && !promised.has(u)) failures.push({ what: `unit ${u}`, reason: 'failed at boot (the system is degraded)', stepId: 'base', ...(baseLoc ? { loc: baseLoc } : {}) });
    }
  }
  return { target: o.disk, checked: checks.length + 1, failures, accel: o.accel, bootMs: o.bootMs, printed, ...(state ? { state } : {}) };
};
