#!/usr/bin/env node
// npm run gen:packages: writes what every package of Debian 12's archive
// brings (stdlib/archive/debian-12.ts), read from this machine's apt mirror:
// the suite's signed InRelease (checked with gpgv against Debian's archive
// keyring), then the Contents and Packages indexes it lists, each checked
// against its SHA256 there. For the packages the typed catalog covers (the
// stdlib's, the examples', and a few the docs name), what a real install
// into the base root adds is merged in: users, groups, empty directories and
// what maintainer scripts write (src/build/installed-facts.ts).
// Needs `npm run build` first (npm run gen:packages does it), and root for the install.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(path.join(repo, 'dist', p));
const { hostMirror } = await dist('src/host/mirror.js');
const { addContentsLine, archiveEntries, entryOf, isTableWord, parsePackages, tableLine } = await dist('src/build/archive-facts.js');
const { typedPackages } = await dist('stdlib/archive/typed-packages.js');
const { debian12 } = await dist('stdlib/bases.js');

// --installed FILE keeps what the install found (JSON) in FILE, and installs only the typed packages it does not hold yet: the install takes minutes.
const { values } = parseArgs({ options: { 'no-install': { type: 'boolean' }, installed: { type: 'string' } } });
const keyring = '/usr/share/keyrings/debian-archive-keyring.gpg';
const fail = (msg) => {
  console.error(`gen:packages: ${msg}`);
  process.exit(1);
};
if (!existsSync(keyring)) fail(`${keyring} is missing: apt-get install debian-archive-keyring`);

const base = debian12().ir;
const arch = 'amd64';
const component = 'main';
const mirror = hostMirror();
const dists = `${mirror.uri}/dists/${base.suite}`;

const get = async (url) => {
  const res = await fetch(url).catch((e) => fail(`${url}: ${e.cause?.message ?? e.message}`));
  if (!res.ok) fail(`${url}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
};

// The Release text, only as gpgv passes it: a bad or missing signature stops here.
const inRelease = await get(`${dists}/InRelease`);
let release;
try {
  release = execFileSync('gpgv', ['--keyring', keyring, '--output', '-', '-'], { input: inRelease, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
} catch (e) {
  fail(`${dists}/InRelease: the signature does not verify against ${keyring}:\n${e.stderr}`);
}
const sums = new Map();
for (const m of release.split(/^SHA256:$/m)[1]?.split(/\n(?=\S)/)[0]?.matchAll(/^ ([0-9a-f]{64})\s+\d+\s+(\S+)$/gm) ?? []) sums.set(m[2], m[1]);
const date = /^Date: (.*)$/m.exec(release)?.[1] ?? 'an unknown date';

const indexFile = async (name) => {
  const want = sums.get(name);
  if (!want) fail(`${name} is not listed in ${dists}/InRelease`);
  const data = await get(`${dists}/${name}`);
  const got = createHash('sha256').update(data).digest('hex');
  if (got !== want) fail(`${dists}/${name}: SHA256 ${got}, InRelease says ${want}`);
  return gunzipSync(data).toString();
};

const contents = new Map();
for (const name of [`${component}/Contents-${arch}.gz`, `${component}/Contents-all.gz`]) {
  const text = await indexFile(name);
  for (const line of text.split('\n')) addContentsLine(contents, line);
}
const entries = archiveEntries(parsePackages(await indexFile(`${component}/binary-${arch}/Packages.gz`)), contents);

// A dependency the base already has brings nothing new on it (apt-transport-https pulls in apt): left out,
// or an install would provide the base's facts again and seem to touch what the base's steps touch.
const { debian12Facts } = await dist('stdlib/bases/debian-12.js');
for (const e of entries.values()) for (const d of [...e.deps]) if (d in debian12Facts.packages) e.deps.delete(d);

const missing = typedPackages.filter((p) => !entries.has(p));
if (missing.length) fail(`typed packages not in ${base.suite} ${component}: ${missing.join(', ')}`);

if (!values['no-install']) {
  const { installedFacts, reliedOn } = await dist('src/build/installed-facts.js');
  const { layBase, resolveBase } = await dist('src/build/base.js');
  const { cacheDir, RootCache } = await dist('src/build/cache.js');
  // A package the base already has: its facts are the base's, read from a real root (npm run gen:bases).
  const typedToInstall = typedPackages.filter((p) => !(p in debian12Facts.packages));
  const install = async (names) => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'imgc-gen-packages-'));
    try {
      const root = path.join(work, 'root');
      mkdirSync(root);
      await layBase(base, await resolveBase(base, {}), root, { cache: new RootCache(cacheDir()), run: {} });
      return await installedFacts(root, names, { suite: base.suite, workParent: work, progress: (line) => console.log(line) });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  };
  // Kept facts of packages no longer typed are dropped; only the typed packages not kept yet are installed.
  const kept = values.installed && existsSync(values.installed) ? JSON.parse(readFileSync(values.installed, 'utf8')) : {};
  const toInstall = typedToInstall.filter((p) => !(p in kept));
  const installed = { ...Object.fromEntries(typedToInstall.filter((p) => p in kept).map((p) => [p, kept[p]])), ...(toInstall.length ? await install(toInstall) : {}) };
  if (values.installed) writeFileSync(values.installed, JSON.stringify(installed));
  for (const [name, got] of Object.entries(installed)) {
    const e = entries.get(name);
    for (const u of got.users.filter(isTableWord)) e.users.add(u);
    for (const g of got.groups.filter(isTableWord)) e.groups.add(g);
    // What installedFacts keeps (reliedOn), applied again to facts an --installed file kept from before.
    for (const p of reliedOn(got.paths).filter(isTableWord)) e.paths.add(p);
  }
}

const describe = `Debian ${base.release} "${base.suite}" ${component} (${arch})`;
const names = [...entries.keys()].sort();
const table = names.map((n) => tableLine(n, entryOf(entries.get(n)))).join('\n');
// Read back as latin1, the cheapest decoding: only ASCII may be in it.
const nonAscii = /[^\x00-\x7f]/.exec(table);
if (nonAscii) fail(`a name or path holds a non-ASCII character: ${JSON.stringify(table.slice(Math.max(0, nonAscii.index - 40), nonAscii.index + 40))}`);

// The typed catalog: each typed package's facts with those of its source's packages it pulls in, as the checker reads them.
const { tableArchive, packageFacts } = await dist('src/core/catalog.js');
const archive = tableArchive(describe, () => table);
const typed = {};
for (const name of [...typedPackages].sort()) {
  const facts = packageFacts({}, name, 'apt', archive);
  const of = (kind) => facts.filter((f) => f.kind === kind).map((f) => f.key).sort();
  const entry = { services: of('service'), commands: of('command'), paths: of('path'), users: of('user'), groups: of('group') };
  typed[name] = Object.fromEntries(Object.entries(entry).filter(([, v]) => v.length));
}

const header = [
  `// Generated by \`npm run gen:packages\` (scripts/gen-packages.mjs) from ${describe}, the Release of ${date}: do not edit.`,
  '// Regenerate with `npm run gen:packages` (reads the apt mirror of this machine; installs the typed packages into the base root).',
];
const typedText = JSON.stringify(typed, null, 1).replace(/\n\s*/g, ' ');
writeFileSync(
  path.join(repo, 'stdlib/archive/debian-12.ts'),
  [
    ...header,
    "import { readFileSync } from 'node:fs';",
    "import path from 'node:path';",
    "import { tableArchive } from '../../src/core/catalog.js';",
    "import { packageRoot } from '../../src/util/package-root.js';",
    '',
    `/** What installing each package the stdlib, the examples and the docs name brings (itself and the packages of its source it pulls in), for the builder's types. */`,
    `export const debian12Typed = ${typedText} as const;`,
    '',
    `/** Every package of ${describe}, one line each in ./debian-12.txt: what each brings, for the checker. */`,
    `export const debian12Archive = tableArchive(${JSON.stringify(describe)}, () => readFileSync(path.join(packageRoot, 'stdlib', 'archive', 'debian-12.txt'), 'latin1'));`,
    '',
  ].join('\n'),
);
writeFileSync(path.join(repo, 'stdlib/archive/debian-12.txt'), `${table}\n`);
console.log(`wrote stdlib/archive/debian-12.ts and debian-12.txt: ${names.length} packages, ${(table.length / 1e6).toFixed(2)} MB (${describe})`);
