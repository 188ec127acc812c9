// A local apt repository on a test host (a bed host has only its own
// loopback: no mirror): two tiny packages built here with dpkg-deb,
// imgc-demo-tool depending on imgc-demo-lib, in a flat repository under
// /srv/imgc-repo, which becomes the host's only apt source (the others are
// moved aside until restore()).
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const packages = [
  { name: 'imgc-demo-lib', depends: undefined, file: '/usr/share/imgc-demo-lib/README', text: 'the demo library\n' },
  { name: 'imgc-demo-tool', depends: 'imgc-demo-lib', file: '/usr/share/imgc-demo-tool/README', text: 'the demo tool\n' },
];

/** Lays the repository down in `root` and makes it the only source; returns what puts the sources back. */
export const localAptRepo = async (root: string, scratch: string): Promise<{ restore: () => void }> => {
  const repo = path.join(root, 'srv/imgc-repo');
  mkdirSync(repo, { recursive: true });
  const index: string[] = [];
  for (const p of packages) {
    const dir = path.join(scratch, p.name);
    mkdirSync(path.join(dir, 'DEBIAN'), { recursive: true });
    mkdirSync(path.join(dir, path.dirname(p.file)), { recursive: true });
    writeFileSync(path.join(dir, p.file), p.text);
    const control = [`Package: ${p.name}`, 'Version: 1.0', 'Architecture: all', 'Maintainer: imgc tests <tests@localhost>', ...(p.depends ? [`Depends: ${p.depends}`] : []), 'Description: imgc test package', ''].join('\n');
    writeFileSync(path.join(dir, 'DEBIAN/control'), control);
    const deb = path.join(repo, `${p.name}_1.0_all.deb`);
    await execa('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', dir, deb]);
    const bytes = readFileSync(deb);
    index.push(`${control.trimEnd()}\nFilename: ./${path.basename(deb)}\nSize: ${bytes.length}\nSHA256: ${createHash('sha256').update(bytes).digest('hex')}\n`);
  }
  writeFileSync(path.join(repo, 'Packages'), `${index.join('\n')}`);
  // The other sources go aside (their mirror is out of reach); the local one is the only one.
  const aside = path.join(root, 'srv/imgc-apt-aside');
  mkdirSync(aside, { recursive: true });
  const moved: [string, string][] = [];
  const move = (from: string, to: string) => {
    renameSync(from, to);
    moved.push([from, to]);
  };
  const sources = path.join(root, 'etc/apt/sources.list');
  try {
    move(sources, path.join(aside, 'sources.list'));
  } catch {
    // no sources.list: the deb822 files below are the sources
  }
  for (const f of readdirSync(path.join(root, 'etc/apt/sources.list.d'))) move(path.join(root, 'etc/apt/sources.list.d', f), path.join(aside, f));
  writeFileSync(sources, 'deb [trusted=yes] file:/srv/imgc-repo ./\n');
  return {
    restore: () => {
      rmSync(sources, { force: true });
      for (const [from, to] of moved.reverse()) renameSync(to, from);
      rmSync(aside, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
    },
  };
};
