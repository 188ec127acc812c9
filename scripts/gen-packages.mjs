#!/usr/bin/env node
// npm run gen:packages: writes what every package of Debian 12's archive
// brings (stdlib/archive/debian-12.ts), read from this machine's apt mirror:
// the suite's signed InRelease (checked with gpgv against Debian's archive
// keyring), then the Contents and Packages indexes it lists, each checked
// against its SHA256 there. For the packages the typed catalog covers (the
// stdlib's, the examples', and a few the docs name), what a real install
// into the base root adds is merged in: users, groups, empty directories and
// what maintainer scripts write (src/build/installed-facts.ts).
// The arm64 archive is written as a delta against the amd64 table
// (stdlib/archive/debian-12-arm64.txt, docs/packages.md): the lines that
// differ, and a removal line for each amd64 name arm64 does not have. Its
// typed packages get the amd64 install's facts: nothing is installed for arm64.
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

// Contents-all (the Architecture: all packages' files) is the same for every architecture: read once.
const contentsAll = (await indexFile(`${component}/Contents-all.gz`)).split('\n');
const { debian12Facts } = await dist('stdlib/bases/debian-12.js');
const entriesOf = async (a) => {
  const contents = new Map();
  for (const line of (await indexFile(`${component}/Contents-${a}.gz`)).split('\n')) addContentsLine(contents, line);
  for (const line of contentsAll) addContentsLine(contents, line);
  const entries = archiveEntries(parsePackages(await indexFile(`${component}/binary-${a}/Packages.gz`)), contents);
  // A dependency the base already has brings nothing new on it (apt-transport-https pulls in apt): left out,
  // or an install would provide the base's facts again and seem to touch what the base's steps touch.
  for (const e of entries.values()) for (const d of [...e.deps]) if (d in debian12Facts.packages) e.deps.delete(d);
  return entries;
};
const entries = await entriesOf(arch);
const arm64 = await entriesOf('arm64');

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
  // arm64's typed packages get the amd64 install's facts too (users, maintainer scripts' files do not differ by architecture).
  for (const [name, got] of Object.entries(installed))
    for (const e of [entries.get(name), arm64.get(name)]) {
      if (!e) continue;
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
const asciiOnly = (text) => {
  const nonAscii = /[^\x00-\x7f]/.exec(text);
  if (nonAscii) fail(`a name or path holds a non-ASCII character: ${JSON.stringify(text.slice(Math.max(0, nonAscii.index - 40), nonAscii.index + 40))}`);
};
asciiOnly(table);

// arm64 as a delta against amd64's table (what catalog.ts's overlayArchive reads): its line where it differs, a removal line where it has none.
const { removedLine } = await dist('src/core/catalog.js');
const amd64Lines = new Map(table.split('\n').map((l, i) => [names[i], l]));
const delta = [...new Set([...names, ...arm64.keys()])]
  .sort()
  .flatMap((n) => {
    const mine = arm64.has(n) ? tableLine(n, entryOf(arm64.get(n))) : removedLine(n);
    return mine === (amd64Lines.get(n) ?? removedLine(n)) ? [] : [mine];
  })
  .join('\n');
asciiOnly(delta);
const removed = [...amd64Lines.keys()].filter((n) => !arm64.has(n)).length;
const added = [...arm64.keys()].filter((n) => !amd64Lines.has(n)).length;
const absentTyped = typedPackages.filter((p) => !arm64.has(p));

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
writeFileSync(path.join(repo, 'stdlib/archive/debian-12-arm64.txt'), `${delta}\n`);
const lines = delta.split('\n').length;
console.log(
  `wrote stdlib/archive/debian-12-arm64.txt: ${arm64.size} packages as ${lines} lines, ${delta.length + 1} bytes against amd64 (${added} added, ${removed} removed, ${lines - added - removed} changed)` +
    `; typed packages not on arm64: ${absentTyped.join(', ') || 'none'}`,
);
