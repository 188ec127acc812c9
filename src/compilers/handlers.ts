// Live-host handlers of the runtime outputs, backend-neutral and pure: what a
// host must do after a runtime step changed something so that the change
// takes effect now, not at the next boot. Keyed on the FACTS the changed step
// provides, never on its kind:
//   sysctl fact, or a path under a sysctl.d directory   → sysctl --system
//   kernelModule fact                                   → modprobe MODULE
//   a path under a modules-load.d directory (no module) → restart systemd-modules-load
//   a path under a systemd unit directory               → systemctl daemon-reload,
//                                                         and try-restart of that unit
//   a path under a service's own path (one step provides
//   both the service and that path, e.g. containerd's
//   package and /etc/containerd)                        → try-restart of the service
//   a boot-time path (kernel command line, initramfs,
//   /boot) or a kernel package                          → "reboot required", nothing run
// Image builds run none of this: the outputs of `imgc build` have no handlers.
import type { Fact, Image, Phase, Step } from '../ir/schema.js';
import { unitOf } from './runtime.js';

export type Handler =
  | { readonly kind: 'daemon-reload' }
  | { readonly kind: 'sysctl' }
  | { readonly kind: 'modprobe'; readonly module: string }
  | { readonly kind: 'modules-load' }
  | { readonly kind: 'restart'; readonly unit: string }
  | { readonly kind: 'reboot'; readonly why: string };

/** The order handlers run in, whatever order they were notified: units are reloaded before anything restarts. */
const rank: Record<Handler['kind'], number> = { 'daemon-reload': 0, sysctl: 1, modprobe: 2, 'modules-load': 3, restart: 4, reboot: 5 };

/** The command a handler runs (a reboot runs nothing). */
export const handlerCommand = (h: Exclude<Handler, { kind: 'reboot' }>): string[] => {
  switch (h.kind) {
    case 'daemon-reload':
      return ['systemctl', 'daemon-reload'];
    case 'sysctl':
      return ['sysctl', '--system'];
    case 'modprobe':
      return ['modprobe', h.module];
    case 'modules-load':
      return ['systemctl', 'restart', 'systemd-modules-load.service'];
    case 'restart':
      return ['systemctl', 'try-restart', h.unit];
  }
};

/** One name per handler: what the outputs print and how Ansible's notify finds it. */
export const handlerName = (h: Handler): string => (h.kind === 'reboot' ? `reboot required: ${h.why}` : handlerCommand(h).join(' '));

/** Whether a handler needs a running systemd (a booted host), rather than only the kernel. */
export const needsSystemd = (h: Handler): boolean => h.kind === 'daemon-reload' || h.kind === 'restart' || h.kind === 'modules-load';

const unitDirs = ['/etc/systemd/system', '/run/systemd/system', '/usr/local/lib/systemd/system', '/lib/systemd/system', '/usr/lib/systemd/system'];
const sysctlDirs = ['/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d', '/lib/sysctl.d', '/etc/sysctl.conf'];
const modulesDirs = ['/etc/modules-load.d', '/run/modules-load.d', '/usr/local/lib/modules-load.d', '/usr/lib/modules-load.d', '/lib/modules-load.d', '/etc/modules'];
const bootPaths = ['/etc/default/grub', '/etc/default/grub.d', '/etc/kernel/cmdline', '/etc/initramfs-tools', '/boot'];

const under = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);
const underAny = (p: string, dirs: readonly string[]): string | undefined => dirs.find((d) => under(p, d));

/** The unit a path in a unit directory belongs to: `x.service` itself, or the unit of a `x.service.d/` drop-in. */
const unitOfPath = (p: string, dir: string): string | undefined => {
  const first = p.slice(dir.length + 1).split('/')[0] ?? '';
  const m = /^(.+\.(?:service|socket|timer|path|mount))(?:\.d)?$/.exec(first);
  // A template's drop-in (sshd-keygen@.service.d) is read by its instances; the template itself never runs.
  return m && !m[1]!.includes('@.') ? m[1] : undefined;
};

/**
 * Whether a service reads `path`, as far as its name tells: a part of the path
 * is the service's name (/etc/containerd, /etc/default/ssh), or that name
 * without systemd's prefix and with a suffix (/etc/systemd/networkd.conf for
 * systemd-networkd). A package brings many paths besides (/etc/default,
 * /etc/logrotate.d/x, its other units' files): restarting its every service
 * on a change to one of them would restart what reads none of it.
 */
const namesService = (path: string, service: string): boolean => {
  const name = service.replace(/\.service$/, '');
  const bare = name.replace(/^systemd-/, '');
  // A daemon's name is often its configuration's with a d (auditd reads /etc/audit, systemd-udevd /etc/udev).
  const names = [...new Set([name, bare, bare.replace(/(.)d$/, '$1')])];
  return path
    .split('/')
    .slice(2)
    .some((part) => names.some((n) => part === n || part.startsWith(`${n}.`)));
};

/**
 * Paths each service owns: a step that provides both a service and paths
 * (containerd's package: service containerd, path /etc/containerd) says the
 * service reads those of them its name names. Only services: a socket or a
 * timer reads no configuration of the daemon. Unit directories and / are nobody's.
 */
export const servicePaths = (ir: Image): ReadonlyMap<string, readonly string[]> => {
  const out = new Map<string, string[]>();
  for (const p of ir.phases)
    for (const s of [...p.pre, ...p.steps, ...p.post]) {
      const services = s.provides.filter((f) => f.kind === 'service').map((f) => unitOf(f.key)).filter((u) => u.endsWith('.service'));
      if (!services.length) continue;
      for (const f of s.provides)
        if (f.kind === 'path' && f.key !== '/' && !underAny(f.key, unitDirs))
          for (const u of services) if (namesService(f.key, u)) out.set(u, [...(out.get(u) ?? []), f.key]);
    }
  return out;
};

/** The handlers a change by `step` notifies. */
export const handlersOf = (step: Step, owners: ReadonlyMap<string, readonly string[]>): Handler[] => {
  const out: Handler[] = [];
  const own = new Set(step.provides.filter((f) => f.kind === 'service').map((f) => unitOf(f.key)));
  const modules = step.provides.some((f) => f.kind === 'kernelModule');
  const byFact = (f: Fact): Handler[] => {
    switch (f.kind) {
      case 'sysctl':
        return [{ kind: 'sysctl' }];
      case 'kernelModule':
        return [{ kind: 'modprobe', module: f.key }];
      case 'package':
        return /^linux-image-/.test(f.key) ? [{ kind: 'reboot', why: `kernel package ${f.key} installed` }] : [];
      case 'path': {
        const p = f.key;
        const hs: Handler[] = [];
        const unitDir = underAny(p, unitDirs);
        if (unitDir !== undefined && p !== unitDir) {
          hs.push({ kind: 'daemon-reload' });
          const unit = unitOfPath(p, unitDir);
          if (unit !== undefined && !own.has(unit)) hs.push({ kind: 'restart', unit });
        }
        if (underAny(p, sysctlDirs) !== undefined) hs.push({ kind: 'sysctl' });
        if (!modules && underAny(p, modulesDirs) !== undefined) hs.push({ kind: 'modules-load' });
        if (underAny(p, bootPaths) !== undefined) hs.push({ kind: 'reboot', why: `${p} is read at boot only` });
        for (const [unit, paths] of owners) if (!own.has(unit) && paths.some((d) => under(p, d))) hs.push({ kind: 'restart', unit });
        return hs;
      }
      default:
        return [];
    }
  };
  for (const f of step.provides) for (const h of byFact(f)) if (!out.some((x) => handlerName(x) === handlerName(h))) out.push(h);
  return out;
};

export interface PhaseHandlers {
  /** Every handler of the phase, in the order they run. */
  readonly handlers: readonly Handler[];
  /** Step id → the handlers (indexes into `handlers`) it notifies when it changed something. */
  readonly notifies: ReadonlyMap<string, readonly number[]>;
}

/** The handlers of one runtime phase. */
export const phaseHandlers = (ir: Image, phase: Phase, owners = servicePaths(ir)): PhaseHandlers => {
  const steps = [...phase.pre, ...phase.steps, ...phase.post];
  const all: Handler[] = [];
  for (const s of steps) for (const h of handlersOf(s, owners)) if (!all.some((x) => handlerName(x) === handlerName(h))) all.push(h);
  all.sort((a, b) => rank[a.kind] - rank[b.kind]);
  const names = all.map(handlerName);
  const notifies = new Map<string, number[]>();
  for (const s of steps) {
    const hs = handlersOf(s, owners).map((h) => names.indexOf(handlerName(h)));
    if (hs.length) notifies.set(s.id, hs.sort((a, b) => a - b));
  }
  return { handlers: all, notifies };
};
