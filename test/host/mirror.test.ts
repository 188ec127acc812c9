// The host mirror reader: deb822 and one-line formats, what counts as the
// Debian main archive, and the sources.list it writes into the root.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tempDir } from '../helpers/temp.js';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDeb822Sources, parseOneLineSources } from '../../src/core/apt.js';
import { hostMirror, MirrorError, readAptSources, rootSourcesList } from '../../src/host/mirror.js';

// Host names here are placeholders in the reserved .example domain.
const etcApt = (files: Record<string, string>): string => {
  const dir = tempDir('apt');
  mkdirSync(path.join(dir, 'sources.list.d'));
  for (const [rel, text] of Object.entries(files)) writeFileSync(path.join(dir, rel), text);
  return dir;
};

const deb822 = `Types: deb
# a comment inside the paragraph
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`;

describe('parseDeb822Sources', () => {
  it('reads paragraphs, multi-value fields, comments and Signed-By', () => {
    const s = parseDeb822Sources(deb822);
    expect(s).toHaveLength(2);
    expect(s[0]).toMatchObject({ types: ['deb'], uris: ['http://mirror.example/debian'], suites: ['bookworm', 'bookworm-updates'], components: ['main', 'contrib'], signedBy: '/usr/share/keyrings/debian-archive-keyring.gpg', enabled: true });
    expect(s[1]!.suites).toEqual(['bookworm-security']);
  });

  it('honours Enabled: no and ignores an inline armored key', () => {
    const s = parseDeb822Sources('Types: deb\nURIs: http://a.example/debian\nSuites: sid\nComponents: main\nEnabled: no\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n -----END PGP PUBLIC KEY BLOCK-----\n');
    expect(s[0]!.enabled).toBe(false);
    expect(s[0]!.signedBy).toBeUndefined();
  });
});

describe('parseOneLineSources', () => {
  it('reads deb lines with options, skips deb-src-only and comments', () => {
    const s = parseOneLineSources('# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main non-free-firmware\ndeb-src http://mirror.example/debian bookworm main\n\ndeb http://mirror.example/debian bookworm-updates main # trailing\n');
    expect(s).toHaveLength(3);
    expect(s[0]).toMatchObject({ types: ['deb'], uris: ['http://mirror.example/debian'], suites: ['bookworm'], components: ['main', 'non-free-firmware'], signedBy: '/k.gpg' });
    expect(s[1]!.types).toEqual(['deb-src']);
    expect(s[2]!.components).toEqual(['main']);
  });
});

describe('hostMirror', () => {
  it('takes the first Debian main archive from deb822 files, not security or updates', () => {
    const dir = etcApt({ 'sources.list.d/debian.sources': deb822 });
    const m = hostMirror({ etcApt: dir, env: {} });
    expect(m).toMatchObject({ uri: 'http://mirror.example/debian', components: ['main', 'contrib'], updates: true, securityUri: 'http://security.example/debian-security' });
  });

  it('reads one-line sources.list before sources.list.d, and skips third-party and security entries', () => {
    const dir = etcApt({
      'sources.list': 'deb http://security.example/debian-security bookworm-security main\ndeb http://mirror.example/debian/ bookworm main\n',
      'sources.list.d/nodesource.sources': 'Types: deb\nURIs: https://third.example/node_20.x\nSuites: nodistro\nComponents: main\n',
      'sources.list.d/other.sources': 'Types: deb\nURIs: http://second.example/debian\nSuites: bookworm\nComponents: main\n',
    });
    const m = hostMirror({ etcApt: dir, env: {} });
    expect(m.uri).toBe('http://mirror.example/debian');
    expect(m.updates).toBe(false);
    expect(m.securityUri).toBe('http://security.example/debian-security');
    expect(readAptSources(dir).map((s) => s.uris[0])).toEqual([
      'http://security.example/debian-security',
      'http://mirror.example/debian/',
      'https://third.example/node_20.x',
      'http://second.example/debian',
    ]);
  });

  it('ignores disabled files and entries', () => {
    const dir = etcApt({
      'sources.list.d/a.sources.disabled': 'Types: deb\nURIs: http://no.example/debian\nSuites: bookworm\nComponents: main\n',
      'sources.list.d/b.sources': 'Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n\nTypes: deb\nURIs: http://on.example/debian\nSuites: trixie\nComponents: main\n',
    });
    expect(hostMirror({ etcApt: dir, env: {} }).uri).toBe('http://on.example/debian');
  });

  it('fails clearly when there is no Debian archive, unless IMGC_MIRROR names one', () => {
    const dir = etcApt({ 'sources.list.d/x.sources': 'Types: deb\nURIs: https://third.example/x\nSuites: nodistro\nComponents: main\n' });
    expect(() => hostMirror({ etcApt: dir, env: {} })).toThrow(MirrorError);
    expect(() => hostMirror({ etcApt: dir, env: {} })).toThrow(/IMGC_MIRROR/);
    expect(hostMirror({ etcApt: dir, env: { IMGC_MIRROR: 'http://set.example/debian/' } }).uri).toBe('http://set.example/debian');
  });

  it('reads this machine\'s own configuration', () => {
    const m = hostMirror({ env: {} });
    expect(m.uri).toMatch(/^(https?|file):\/\//);
  });
});

describe('rootSourcesList', () => {
  it('points the root at the same archive, with updates and security when the host has them', () => {
    const text = rootSourcesList({ uri: 'http://mirror.example/debian', components: ['main'], updates: true, securityUri: 'http://security.example/debian-security', from: 'x' }, 'bookworm');
    expect(text.split('\n').filter((l) => l.startsWith('deb '))).toEqual([
      'deb http://mirror.example/debian bookworm main',
      'deb http://mirror.example/debian bookworm-updates main',
      'deb http://security.example/debian-security bookworm-security main',
    ]);
  });

  it('adds no -updates or -security suites for unstable', () => {
    const text = rootSourcesList({ uri: 'http://mirror.example/debian', components: ['main'], updates: true, securityUri: 'http://s.example/x', from: 'x' }, 'sid');
    expect(text.split('\n').filter((l) => l.startsWith('deb '))).toEqual(['deb http://mirror.example/debian sid main']);
  });
});
