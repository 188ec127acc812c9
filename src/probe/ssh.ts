// Probing a live host over SSH: one `ssh` session runs a read-only POSIX
// script that prints what the root readers need (file contents of the system
// databases, type/owner/mode of the paths they list, the executables on PATH),
// and this side lays it out as a skeleton root in a scratch directory, so that
// the SAME readers as `imgc probe --root` (src/probe/probe.ts) derive the
// contract. The host is never written to.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { modulesLoadDirs, pathDirs, sysctlDirs } from '../core/root.js';
import { DirView, type EntryType, type Meta } from '../verify/rootview.js';
import type { Contract, ContractFact } from '../contract/contract.js';
import { probeRoot, type ProbeOptions } from './probe.js';

export interface SshTarget {
  /** user@host (or host). */
  target: string;
  port?: number | undefined;
  identity?: string | undefined;
  /** A known_hosts file: the host key is checked strictly against it. */
  knownHosts?: string | undefined;
  /** More `-o KEY=VALUE` options for ssh (a ProxyCommand, a jump host). */
  options?: readonly string[] | undefined;
  /** Seconds the whole session may take (default 300). */
  timeout?: number | undefined;
}

/** A probe that could not run: what happened, and what to do about it. */
export class SshProbeError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

const unitDirs = ['/etc/systemd/system', '/run/systemd/system', '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system'];
/** Directories whose entries the readers list (unit files, SysV scripts, apt sources, sysctl.d, modules-load.d). */
const listedDirs = ['/etc', ...unitDirs, '/etc/init.d', '/etc/apt/sources.list.d', ...sysctlDirs, ...modulesLoadDirs];

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The script the host runs (POSIX sh; find, xargs and awk as Debian's
 * essential packages have them). Sections start with a line `MARK kind arg`;
 * a file's content ends with a newline and `MARK end`. Reads only.
 */
export const probeScript = (mark: string, expectPaths: readonly string[] = []): string => `# imgc probe --ssh: reads the host, writes nothing.
export LC_ALL=C
m=${q(mark)}
P='%y %m %U %G %p\\t%l\\n'
if [ ! -f /var/lib/dpkg/status ]; then
  # shellcheck source=/dev/null
  id=$( (. /etc/os-release 2>/dev/null || . /usr/lib/os-release 2>/dev/null; printf '%s' "\${PRETTY_NAME:-\${ID:-}}") 2>/dev/null)
  printf '%s not-debian %s\\n' "$m" "\${id:-$(uname -s)}"
  exit 3
fi
send() {
  for f in "$@"; do
    if [ -f "$f" ] && [ ! -L "$f" ] && [ -r "$f" ]; then
      printf '%s file %s\\n' "$m" "$f"; cat "$f"; printf '\\n%s end\\n' "$m"
    fi
  done
}
send /etc/passwd /etc/group /var/lib/dpkg/status /etc/os-release /usr/lib/os-release /etc/sysctl.conf /etc/modules /var/lib/dpkg/info/*.list /etc/apt/sources.list.d/*
for d in ${[...sysctlDirs, ...modulesLoadDirs].join(' ')}; do send "$d"/*.conf; done
printf '%s meta\\n' "$m"
find / -maxdepth 3 \\( -path /proc -o -path /sys -o -path /dev -o -path /run \\) -prune -o \\( -type d -o -type l \\) -printf "$P" 2>/dev/null
for d in ${listedDirs.join(' ')}; do
  if [ -d "$d" ]; then find "$d" -mindepth 1 -maxdepth 1 -printf "$P" 2>/dev/null; fi
done
if [ -d /etc/systemd/system ]; then find /etc/systemd/system -mindepth 2 -printf "$P" 2>/dev/null; fi
# The directories dpkg lists that a contract names (near the top, or under /etc and /var), and the conffiles.
# shellcheck disable=SC2016 # find's format is the inner shell's $0
stat_dirs() { xargs -r -d '\\n' sh -c 'exec find "$@" -maxdepth 0 -type d -printf "$0" 2>/dev/null' "$P"; }
# shellcheck disable=SC2016
stat_paths() { xargs -r -d '\\n' sh -c 'exec find "$@" -maxdepth 0 -printf "$0" 2>/dev/null' "$P"; }
cat /var/lib/dpkg/info/*.list 2>/dev/null | grep -E '^/([^/]*(/[^/]*)?(/[^/]*)?|(etc|var)/.*)$' | stat_dirs
awk '/^Conffiles:/ { c = 1; next } /^[^ ]/ { c = 0 } c && $1 ~ /^\\// { print $1 }' /var/lib/dpkg/status | stat_paths
${expectPaths.length ? `find ${expectPaths.map(q).join(' ')} -maxdepth 0 -printf "$P" 2>/dev/null\n` : ''}for d in ${pathDirs.join(' ')}; do
  if [ -d "$d" ] && [ ! -L "$d" ]; then
    printf '%s cmd %s\\n' "$m" "$d"
    find -L "$d" -mindepth 1 -maxdepth 1 -type f -perm /111 -printf '%f\\n' 2>/dev/null
  fi
done
printf '%s done\\n' "$m"
`;

interface Listed {
  path: string;
  meta: Meta;
  link: string;
}

export interface ProbeOutput {
  files: Map<string, string>;
  listed: Listed[];
  commands: Map<string, string[]>;
}

const types: Record<string, EntryType> = { d: 'dir', f: 'file', l: 'symlink' };

/** The script's output, by section; throws when it did not run to its end. */
export const parseProbeOutput = (out: string, mark: string): ProbeOutput => {
  const files = new Map<string, string>();
  const listed: Listed[] = [];
  const commands = new Map<string, string[]>();
  const head = `${mark} `;
  let section = '';
  let arg = '';
  let done = false;
  let i = 0;
  while (i < out.length) {
    if (section === 'file') {
      const end = out.indexOf(`\n${mark} end\n`, i);
      if (end < 0) break;
      files.set(arg, out.slice(i, end));
      i = end + mark.length + 6;
      section = '';
      continue;
    }
    const nl = out.indexOf('\n', i);
    const line = out.slice(i, nl < 0 ? out.length : nl);
    i = nl < 0 ? out.length : nl + 1;
    if (line.startsWith(head)) {
      const rest = line.slice(head.length);
      const sp = rest.indexOf(' ');
      section = sp < 0 ? rest : rest.slice(0, sp);
      arg = sp < 0 ? '' : rest.slice(sp + 1);
      if (section === 'done') done = true;
      if (section === 'cmd') commands.set(arg, []);
      continue;
    }
    if (section === 'meta') {
      const m = /^(\S) ([0-7]+) (\d+) (\d+) (\/[^\t]*)\t(.*)$/.exec(line);
      if (m) listed.push({ path: path.posix.normalize(m[5]!), meta: { type: types[m[1]!] ?? 'other', mode: parseInt(m[2]!, 8) & 0o7777, uid: Number(m[3]), gid: Number(m[4]) }, link: m[6]! });
    } else if (section === 'cmd' && line && !line.includes('/')) commands.get(arg)!.push(line);
  }
  if (!done) throw new Error('the probe script stopped before its end (its output was cut)');
  return { files, listed, commands };
};

/**
 * A skeleton root laid out from the script's output: the listed directories
 * and links as they are on the host, files with their content where it was
 * sent (empty otherwise), the commands as executables. Owners and modes are
 * the host's, from the listing.
 */
export class SkeletonView extends DirView {
  private readonly metas = new Map<string, Meta>();
  private readonly links = new Map<string, string>();

  constructor(dir: string, label: string, out: ProbeOutput) {
    super(dir, label);
    // Shallow first, so that a link in a path is made before the paths under it.
    const depth = (p: string) => p.split('/').length;
    for (const e of [...out.listed].sort((a, b) => depth(a.path) - depth(b.path))) {
      const h = this.place(e.path);
      if (h === undefined) continue;
      this.metas.set(h, e.meta);
      // What is directly on PATH comes from the command lists below: a link there may point outside the skeleton.
      if (this.exists(h) || (e.meta.type !== 'dir' && pathDirs.some((d) => path.posix.dirname(e.path) === d))) continue;
      if (e.meta.type === 'dir') mkdirSync(h);
      else if (e.meta.type === 'symlink') {
        // Made relative and kept inside the skeleton (the host's links are its own: the readers that follow links
        // with this machine's filesystem must not be led out of it); readlink answers the host's target.
        const target = path.posix.resolve(`/${path.relative(this.root, path.dirname(h))}`, e.link);
        symlinkSync(path.relative(path.dirname(h), path.join(this.root, target)) || '.', h);
        this.links.set(h, e.link);
      }
      else writeFileSync(h, '');
    }
    for (const [p, text] of out.files) {
      const h = this.place(p);
      if (h !== undefined) writeFileSync(h, text);
    }
    for (const [d, names] of out.commands) {
      for (const n of names) {
        const h = this.place(`${d}/${n}`);
        if (h === undefined) continue;
        rmSync(h, { force: true });
        writeFileSync(h, '', { mode: 0o755 });
      }
    }
  }

  /**
   * Where image path `p` goes in the skeleton, its parent directory made:
   * links in the path resolved inside the skeleton (never a path outside it).
   */
  private place(p: string): string | undefined {
    const h = this.resolve(p, false);
    const inside = (x: string | undefined): x is string => x !== undefined && (x === this.root || x.startsWith(`${this.root}/`));
    if (h !== undefined) {
      if (!inside(h)) return undefined;
      mkdirSync(path.dirname(h), { recursive: true });
      return h;
    }
    const up = path.posix.dirname(p);
    const parent = up === p ? undefined : (this.resolve(up, true) ?? this.place(up));
    if (!inside(parent)) return undefined;
    mkdirSync(parent, { recursive: true });
    return path.join(parent, path.posix.basename(p));
  }

  private exists(h: string): boolean {
    try {
      lstatSync(h);
      return true;
    } catch {
      return false;
    }
  }

  private listedAt(p: string, follow: boolean): Meta | undefined {
    const h = this.resolve(p, follow);
    const m = h === undefined ? undefined : this.metas.get(h);
    // A command laid out as a file where the host has a link: what it points to is an executable, as the file says.
    return follow && m?.type === 'symlink' ? undefined : m;
  }

  override lstat(p: string): Meta | undefined {
    return this.listedAt(p, false) ?? super.lstat(p);
  }

  override stat(p: string): Meta | undefined {
    return this.listedAt(p, true) ?? super.stat(p);
  }

  override readlink(p: string): string | undefined {
    const h = this.resolve(p, false);
    return (h !== undefined ? this.links.get(h) : undefined) ?? super.readlink(p);
  }

  override meta(p: string): Meta | undefined {
    return this.lstat(p);
  }
}

/** The ssh command line that runs the script on the target. */
export const sshArgs = (t: SshTarget): string[] => [
  '-o', 'BatchMode=yes',
  '-o', 'ConnectTimeout=15',
  ...(t.port !== undefined ? ['-p', String(t.port)] : []),
  ...(t.identity !== undefined ? ['-i', t.identity, '-o', 'IdentitiesOnly=yes'] : []),
  ...(t.knownHosts !== undefined ? ['-o', `UserKnownHostsFile=${t.knownHosts}`, '-o', 'StrictHostKeyChecking=yes'] : []),
  ...(t.options ?? []).flatMap((o) => ['-o', o]),
  '--', t.target, 'sh -s',
];

/** Why ssh (exit 255) failed, as a diagnostic. */
const sshFailure = (t: SshTarget, stderr: string): SshProbeError => {
  const last = stderr.trim().split('\n').filter(Boolean).pop() ?? 'no message';
  const at = `${t.target}${t.port !== undefined ? ` port ${t.port}` : ''}`;
  if (/Permission denied|Too many authentication failures/i.test(stderr)) {
    return new SshProbeError(`ssh could not log in to ${at}: ${last}`, 'give the key with --identity FILE (its public half in the host\'s authorized_keys); the probe never asks for a password (BatchMode)');
  }
  if (/Host key verification failed|host key .*(changed|not known)|No .* host key is known/i.test(stderr)) {
    return new SshProbeError(`the host key of ${at} is not known or changed: ${last}`, 'give a known_hosts file holding its key with --known-hosts FILE (ssh-keyscan writes one; compare the fingerprint out of band)');
  }
  if (/Connection refused|timed out|No route to host|Could not resolve|Name or service not known|Network is unreachable|Connection closed|Connection reset|kex_exchange/i.test(stderr)) {
    return new SshProbeError(`cannot reach ${at}: ${last}`, 'check the host name, --port and that sshd runs there');
  }
  return new SshProbeError(`ssh to ${at} failed: ${last}`, 'run the same ssh by hand (-o BatchMode=yes) to see why');
};

const runSsh = (t: SshTarget, script: string): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> =>
  new Promise((resolve, reject) => {
    const child = spawn('ssh', sshArgs(t), { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
    }, (t.timeout ?? 300) * 1000);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new SshProbeError(`could not run ssh: ${e.message}`, 'install the OpenSSH client (openssh-client)'));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    });
    child.stdin.on('error', () => undefined); // ssh gone before it read the script: its exit says why
    child.stdin.end(script);
  });

/** The contract of the host `t` reaches, read over one ssh session; `scratch` holds the skeleton root meanwhile. */
export const probeSsh = async (t: SshTarget, scratch: string, opts: ProbeOptions = {}): Promise<Contract> => {
  const mark = `@@imgc-probe-${randomBytes(8).toString('hex')}@@`;
  const expectPaths = (opts.expect ?? []).filter((f: ContractFact) => f.kind === 'path').map((f) => f.key);
  const r = await runSsh(t, probeScript(mark, expectPaths));
  if (r.timedOut) throw new SshProbeError(`the probe of ${t.target} took longer than ${t.timeout ?? 300} s and was stopped`, 'check that the host answers; a very slow link needs a larger --timeout');
  if (r.code === 255) throw sshFailure(t, r.stderr);
  const nd = new RegExp(`^${mark} not-debian (.*)$`, 'm').exec(r.stdout);
  if (nd) throw new SshProbeError(`${t.target} is not a Debian host (no /var/lib/dpkg/status; it runs ${nd[1]!.trim() || 'something else'})`, 'imgc probes dpkg-based roots (Debian and its derivatives)');
  if (r.code !== 0) throw new SshProbeError(`the probe script failed on ${t.target} (exit ${r.code}): ${r.stderr.trim().split('\n').pop() ?? ''}`, 'the host\'s shell must be POSIX sh with find, xargs and awk (Debian has them)');
  const parsed = parseProbeOutput(r.stdout, mark);
  mkdirSync(scratch, { recursive: true });
  const tmp = mkdtempSync(path.join(scratch, '.imgc-probe-ssh-'));
  try {
    const dir = path.join(tmp, 'root');
    mkdirSync(dir);
    const view = new SkeletonView(dir, t.target, parsed);
    return probeRoot(dir, view, { ...opts, name: opts.name ?? t.target.replace(/^.*@/, '') });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
};
