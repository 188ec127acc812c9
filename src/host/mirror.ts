// The apt mirror this machine already uses, read from its apt configuration
// (deb822 *.sources files and one-line sources.list), so that debootstrap and
// the root's own apt sources use it too. No host name is ever written here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDeb822Sources, parseOneLineSources, type AptSource } from '../core/apt.js';

/** What a build needs: the main archive, and its updates/security companions if the host has them. */
export interface AptMirror {
  /** The Debian main archive (e.g. an http URI ending in /debian). */
  uri: string;
  components: string[];
  /** The host also lists `<suite>-updates` at the same archive. */
  updates: boolean;
  /** The security archive, when the host lists one. */
  securityUri?: string;
  from: string;
}

const debianCodenames = new Set(['buster', 'bullseye', 'bookworm', 'trixie', 'forky', 'duke', 'sid', 'stable', 'testing', 'unstable', 'oldstable', 'oldoldstable', 'experimental']);
const isSecurity = (s: AptSource) => s.uris.some((u) => /security/i.test(u)) || s.suites.some((x) => /[-/]security$|\/updates$/.test(x));
/** A Debian main archive entry: binary, has `main`, a plain Debian suite (not -updates/-security/-backports). */
const isMainArchive = (s: AptSource) =>
  s.enabled && s.types.includes('deb') && s.components.includes('main') && !isSecurity(s) && s.suites.some((x) => debianCodenames.has(x));

/** Every source entry of an apt configuration directory (default /etc/apt), in apt's reading order. */
export const readAptSources = (etcApt = '/etc/apt'): AptSource[] => {
  const out: AptSource[] = [];
  const list = path.join(etcApt, 'sources.list');
  if (existsSync(list)) out.push(...parseOneLineSources(readFileSync(list, 'utf8'), list));
  const dir = path.join(etcApt, 'sources.list.d');
  if (existsSync(dir)) {
    for (const f of readdirSync(dir).sort()) {
      const file = path.join(dir, f);
      if (f.endsWith('.sources')) out.push(...parseDeb822Sources(readFileSync(file, 'utf8'), file));
      else if (f.endsWith('.list')) out.push(...parseOneLineSources(readFileSync(file, 'utf8'), file));
    }
  }
  return out;
};

export class MirrorError extends Error {
  override name = 'MirrorError';
}

/**
 * The host's Debian mirror: the first main archive entry (not security or
 * updates). `IMGC_MIRROR` overrides the URI (for machines whose apt points elsewhere).
 */
export const hostMirror = (opts: { etcApt?: string; env?: NodeJS.ProcessEnv } = {}): AptMirror => {
  const env = opts.env ?? process.env;
  const sources = readAptSources(opts.etcApt);
  const override = env['IMGC_MIRROR'];
  const main = sources.find(isMainArchive);
  if (!main && !override) {
    throw new MirrorError(
      `no Debian main archive found in ${opts.etcApt ?? '/etc/apt'} (sources.list, sources.list.d/*.sources|*.list); ` +
        'set IMGC_MIRROR to the archive URI, or pass --from-tar/--from-dir',
    );
  }
  const uri = (override ?? main!.uris[0]!).replace(/\/+$/, '');
  const same = (u: string) => u.replace(/\/+$/, '') === uri;
  const updates = sources.some((s) => s.enabled && s.types.includes('deb') && s.uris.some(same) && s.suites.some((x) => /-updates$/.test(x)));
  const security = sources.find((s) => s.enabled && s.types.includes('deb') && isSecurity(s) && s.suites.some((x) => /-security$/.test(x)));
  return {
    uri,
    components: main ? main.components.filter((c) => ['main', 'contrib', 'non-free', 'non-free-firmware'].includes(c)) : ['main'],
    updates,
    ...(security ? { securityUri: security.uris[0]!.replace(/\/+$/, '') } : {}),
    from: override ? 'IMGC_MIRROR' : main!.from,
  };
};

/** The root's /etc/apt/sources.list: the host's mirror, for the image's suite. */
export const rootSourcesList = (mirror: AptMirror, suite: string): string => {
  const comps = mirror.components.join(' ') || 'main';
  // Unstable and experimental have no -updates or -security suites.
  const rolling = ['sid', 'unstable', 'experimental'].includes(suite);
  const lines = [
    '# Written by imgc build: the archive the image was built from.',
    `deb ${mirror.uri} ${suite} ${comps}`,
    ...(mirror.updates && !rolling ? [`deb ${mirror.uri} ${suite}-updates ${comps}`] : []),
    ...(mirror.securityUri && !rolling ? [`deb ${mirror.securityUri} ${suite}-security ${comps}`] : []),
  ];
  return `${lines.join('\n')}\n`;
};
