#!/usr/bin/env node
// npm run gen:bases [-- --arch amd64|arm64] [-- --from-tar ROOT.tar | --from-dir ROOT]:
// writes the stdlib's base facts (stdlib/bases/debian-12.ts, and
// debian-12-arm64.ts for an arm64 root) from a real root of the base. Without
// a root given, it lays one down as `imgc build` does: the cached base tarball
// (IMGC_CACHE), or debootstrap from this machine's apt mirror (an arm64 root
// through qemu-user-static). Needs `npm run build` first (npm run gen:bases does it).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { layBase, resolveBase } = await import(path.join(repo, 'dist/src/build/base.js'));
const { cacheDir, RootCache } = await import(path.join(repo, 'dist/src/build/cache.js'));
const { readBaseFacts, renderBaseFacts } = await import(path.join(repo, 'dist/src/build/base-facts.js'));
const { debian12 } = await import(path.join(repo, 'dist/stdlib/bases.js'));

const { values } = parseArgs({ options: { arch: { type: 'string' }, 'from-tar': { type: 'string' }, 'from-dir': { type: 'string' } } });
// Only Debian 12 can be laid down here; Ubuntu bases stay hand-listed (stdlib/bases.ts) until a root of one is.
// The arm64 base's IR is amd64's with its architecture: its own facts are what this writes.
const all = [
  { base: debian12().ir, file: 'stdlib/bases/debian-12.ts', exportName: 'debian12Facts' },
  { base: { ...debian12().ir, arch: 'arm64' }, file: 'stdlib/bases/debian-12-arm64.ts', exportName: 'debian12Arm64Facts' },
];
const archOf = (b) => b.arch ?? 'amd64';
if (values.arch && !all.some((b) => archOf(b.base) === values.arch)) {
  console.error(`gen:bases: --arch is one of ${all.map((b) => archOf(b.base)).join(', ')}`);
  process.exit(2);
}
if ((values['from-tar'] || values['from-dir']) && !values.arch) {
  console.error('gen:bases: a root given with --from-tar/--from-dir is of one architecture: say which with --arch');
  process.exit(2);
}
const bases = all.filter((b) => !values.arch || archOf(b.base) === values.arch);

for (const { base, file, exportName } of bases) {
  const src = await resolveBase(base, { fromTar: values['from-tar'], fromDir: values['from-dir'] });
  const work = mkdtempSync(path.join(os.tmpdir(), 'imgc-gen-bases-'));
  try {
    let root = path.join(work, 'root');
    if (src.kind === 'dir') root = src.dir;
    else {
      const { mkdirSync } = await import('node:fs');
      mkdirSync(root);
      await layBase(base, src, root, { cache: new RootCache(cacheDir()), run: {} });
    }
    const describe = src.kind === 'debootstrap' ? `a debootstrap --variant=${base.variant} root of ${base.distro} ${base.release} "${base.suite}"${base.arch ? ` ${base.arch}` : ''}` : `a root of ${base.name}, ${src.describe}`;
    writeFileSync(path.join(repo, file), renderBaseFacts(base.name, exportName, describe, readBaseFacts(root)));
    console.log(`wrote ${file} (${src.describe})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
