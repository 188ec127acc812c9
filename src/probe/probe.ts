// The contract of a real root: what it has, read as files by the same reader
// that derives the stdlib's base facts (src/build/base-facts.ts: users,
// groups, packages with versions, bounded paths, unit files, commands on
// PATH), plus sysctl.d and modules-load.d entries, apt sources and os-release.
// Paths carry their type, owner, group and mode; packages their version. Facts of
// an expected contract that the bounded listing leaves out (a file deep under
// /etc) are checked one by one and added when they hold, so that
// `imgc contract diff EXPECTED PROBE` names exactly what the root lacks. The
// files a bootable disk is made from are always looked for, so a probe of a
// built node holds what its artifact phase requires.
import { idNames, pathDetails, readBaseFacts } from '../build/base-facts.js';
import { configLines, modulesLoadDirs, serviceEnabled, readDpkg, sysctlDirs, sysctlSettings } from '../core/root.js';
import { factCheck, RootFacts } from '../verify/expectations.js';
import type { RootView } from '../verify/rootview.js';
import { CONTRACT_VERSION, contractSchemaId, sortFacts, type Contract, type ContractFact } from '../contract/contract.js';
import { factId } from '../core/facts.js';
import { bootFiles } from '../core/boot.js';
import { arches } from '../core/arch.js';

export interface ProbeOptions {
  /** What the contract calls the probed root (default: what was read). */
  name?: string;
  /** The phase after which the root is (default 'base'): `imgc check --against` checks the phases after it. */
  phase?: string;
  /** Facts to look for beyond the bounded listing. */
  expect?: readonly ContractFact[];
  /** Paths left out beyond the default ones (defaultExcludes), as patterns (pathPatternError). */
  exclude?: readonly string[];
  /** Paths kept although a pattern of exclude or the defaults leaves them out. */
  include?: readonly string[];
}

/**
 * What a probe leaves out by default: what a running host changes on its own
 * (temporary files, the kernel filesystems' contents, logs, caches) and what
 * is the machine's or its users' own (home directories' contents). Two probes
 * of an unchanged host are then the same file, and a contract diff of them
 * says nothing changed. A pattern is an absolute path; `*` stands for one
 * name; it covers the path and everything under it.
 */
export const defaultExcludes: readonly string[] = ['/tmp/*', '/var/tmp/*', '/run/*', '/proc/*', '/sys/*', '/dev/*', '/root/*', '/home/*/*', '/var/log/*', '/var/cache/*'];

/** Why `p` is not a path pattern, or undefined. */
export const pathPatternError = (p: string): string | undefined =>
  !p.startsWith('/') ? 'not an absolute path' : p.split('/').slice(1).some((n) => n === '' || n === '.' || n === '..') && p !== '/' ? 'has an empty, . or .. name' : undefined;

/** Whether pattern `pat` covers path `p` (p is it, or under it; `*` one name). */
const covers = (pat: string, p: string): boolean => {
  const want = pat === '/' ? [] : pat.split('/').slice(1);
  const have = p === '/' ? [] : p.split('/').slice(1);
  return want.length <= have.length && want.every((n, i) => n === '*' || n === have[i]);
};

/** Whether the probe keeps path `p` under these options. */
export const pathKept = (p: string, opts: Pick<ProbeOptions, 'exclude' | 'include'>): boolean =>
  (opts.include ?? []).some((pat) => covers(pat, p)) || ![...defaultExcludes, ...(opts.exclude ?? [])].some((pat) => covers(pat, p));

/** KEY=value lines of os-release. */
const osRelease = (view: RootView): Record<string, string> => {
  const text = (view.readFile('/etc/os-release') ?? view.readFile('/usr/lib/os-release'))?.toString('utf8') ?? '';
  const out: Record<string, string> = {};
  for (const l of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(l.trim());
    if (m) out[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  return out;
};

const confFiles = (view: RootView, dirs: readonly string[]): string[] =>
  dirs.flatMap((d) => view.readdir(d).filter((f) => f.endsWith('.conf')).map((f) => `${d}/${f}`));

/** The contract of the root at `dir` (on this machine), read through `view` (which knows exact modes of an image's files). */
export const probeRoot = (dir: string, view: RootView, opts: ProbeOptions = {}): Contract => {
  const base = readBaseFacts(dir);
  const ids = idNames(view);
  // Looked for one by one: the expected facts, and the files a bootable disk takes from the root (src/core/boot.ts), which no bounded listing reaches.
  const wanted: ContractFact[] = [...(opts.expect ?? []), ...[...new Set(arches.flatMap((a) => Object.values(bootFiles(a))))].map((key) => ({ kind: 'path' as const, key }))];
  view.preloadMeta?.([...base.paths, ...wanted.filter((f) => f.kind === 'path').map((f) => f.key)]);
  const facts = new Map<string, ContractFact>();
  const add = (f: ContractFact) => facts.set(factId(f), f);
  for (const k of base.users) add({ kind: 'user', key: k });
  for (const k of base.groups) add({ kind: 'group', key: k });
  for (const [k, version] of Object.entries(base.packages)) add({ kind: 'package', key: k, version });
  // Not what a running host changes on its own, unless asked (the expected facts below are looked up whatever the patterns).
  for (const k of base.paths) if (pathKept(k, opts)) add({ kind: 'path', key: k, ...pathDetails(view, k, ids) });
  for (const k of base.services) add({ kind: 'service', key: k, enabled: serviceEnabled(view, k) });
  for (const k of base.commands) add({ kind: 'command', key: k });
  for (const file of ['/etc/sysctl.conf', ...confFiles(view, sysctlDirs)]) for (const k of sysctlSettings(view, file).keys()) add({ kind: 'sysctl', key: k });
  for (const file of ['/etc/modules', ...confFiles(view, modulesLoadDirs)]) for (const k of configLines(view, file)) add({ kind: 'kernelModule', key: k });
  for (const f of view.readdir('/etc/apt/sources.list.d')) {
    const m = /^(.+)\.(sources|list)$/.exec(f);
    if (m) add({ kind: 'repo', key: m[1]! });
  }
  // What the listing leaves out: the expected facts that are there, with the root's own details (a different mode is a change, not an absence).
  const r = new RootFacts(view);
  const dpkg = readDpkg(view);
  for (const f of wanted) {
    if (facts.has(factId(f)) || factCheck(f)?.(r) !== undefined) continue;
    const version = f.kind === 'package' ? dpkg.get(f.key)?.version : undefined;
    add({ kind: f.kind, key: f.key, ...(f.kind === 'path' ? pathDetails(view, f.key, ids) : {}), ...(version ? { version } : {}), ...(f.kind === 'service' ? { enabled: serviceEnabled(view, f.key) } : {}) });
  }
  const os = osRelease(view);
  const distro = os['ID'] ?? 'unknown';
  const release = os['VERSION_ID'] ?? 'unknown';
  return {
    $schema: contractSchemaId,
    contract: CONTRACT_VERSION,
    image: opts.name ?? view.label,
    phase: opts.phase ?? 'base',
    base: { name: `${distro}-${release}`, distro, release, suite: os['VERSION_CODENAME'] ?? 'unknown' },
    facts: sortFacts([...facts.values()]),
  };
};
