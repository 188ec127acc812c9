// The apt source file every backend writes for an apt repository step: one
// definition of its path, its key's path and its deb822 text; and apt's two
// source formats read back (verify, the build's mirror).
import type { RootView } from './root.js';

/** The fields of an apt repository step the apt files are made of. */
export interface AptSourceFields {
  readonly name: string;
  readonly uri: string;
  readonly suites: readonly string[];
  readonly components: readonly string[];
  readonly key?: string | undefined;
  readonly keyUrl?: string | undefined;
  readonly keyPath?: string | undefined;
}

export const aptSourcesPath = (name: string): string => `/etc/apt/sources.list.d/${name}.sources`;

/** Where the step's signing key lives, or undefined for an unsigned source. */
export const aptKeyPath = (s: AptSourceFields): string | undefined =>
  s.key !== undefined || s.keyUrl !== undefined || s.keyPath !== undefined ? (s.keyPath ?? `/etc/apt/keyrings/${s.name}.asc`) : undefined;

/** The deb822 text of an apt source. */
export const debSources = (s: AptSourceFields): string => {
  const keyPath = aptKeyPath(s);
  return [
    'Types: deb',
    `URIs: ${s.uri}`,
    `Suites: ${s.suites.join(' ')}`,
    ...(s.components.length ? [`Components: ${s.components.join(' ')}`] : []),
    ...(keyPath ? [`Signed-By: ${keyPath}`] : []),
    '',
  ].join('\n');
};

/** One apt source entry, whichever format it came from. */
export interface AptSource {
  types: string[];
  uris: string[];
  suites: string[];
  components: string[];
  signedBy?: string;
  enabled: boolean;
  /** Where it was read, for messages. */
  from: string;
}

/** Parses deb822 `.sources` text: paragraphs separated by blank lines, `Field: value`, continuation lines. */
export const parseDeb822Sources = (text: string, from = '<deb822>'): AptSource[] => {
  const out: AptSource[] = [];
  const paragraphs: Array<Map<string, string>> = [];
  let cur = new Map<string, string>();
  let lastKey: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (raw.startsWith('#')) continue;
    if (raw.trim() === '') {
      if (cur.size) paragraphs.push(cur);
      cur = new Map();
      lastKey = undefined;
      continue;
    }
    if (/^\s/.test(raw) && lastKey) {
      cur.set(lastKey, `${cur.get(lastKey) ?? ''}\n${raw.trim()}`);
      continue;
    }
    const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(raw);
    if (!m) continue;
    lastKey = m[1]!.toLowerCase();
    cur.set(lastKey, m[2]!.trim());
  }
  if (cur.size) paragraphs.push(cur);
  const words = (v: string | undefined) => (v ?? '').split(/\s+/).filter(Boolean);
  for (const p of paragraphs) {
    const signedBy = p.get('signed-by');
    out.push({
      types: words(p.get('types')),
      uris: words(p.get('uris')),
      suites: words(p.get('suites')),
      components: words(p.get('components')),
      ...(signedBy && !signedBy.includes('\n') ? { signedBy } : {}),
      enabled: !/^(no|false|0)$/i.test(p.get('enabled') ?? 'yes'),
      from,
    });
  }
  return out;
};

/** Parses one-line `sources.list` text: `deb [opts] URI SUITE COMPONENT...`. */
export const parseOneLineSources = (text: string, from = '<sources.list>'): AptSource[] => {
  const out: AptSource[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const m = /^(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const opts = Object.fromEntries(
      (m[2] ?? '')
        .split(/\s+/)
        .filter((o) => o.includes('='))
        .map((o) => [o.slice(0, o.indexOf('=')).toLowerCase(), o.slice(o.indexOf('=') + 1)]),
    );
    out.push({
      types: [m[1]!],
      uris: [m[3]!],
      suites: [m[4]!],
      components: (m[5] ?? '').split(/\s+/).filter(Boolean),
      ...(opts['signed-by'] ? { signedBy: opts['signed-by'] } : {}),
      enabled: true,
      from,
    });
  }
  return out;
};

/** apt sources of the root: `sources.list.d/<name>.sources` (deb822) or `.list`. */
export const readRepo = (view: RootView, name: string): { file: string; sources: AptSource[] } | undefined => {
  for (const [file, parse] of [
    [`/etc/apt/sources.list.d/${name}.sources`, parseDeb822Sources],
    [`/etc/apt/sources.list.d/${name}.list`, parseOneLineSources],
  ] as const) {
    const text = view.readFile(file)?.toString('utf8');
    if (text !== undefined) return { file, sources: parse(text, file) };
  }
  return undefined;
};
