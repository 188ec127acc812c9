// Shared by the node VM tests: booting clones of the reference node's disk
// with a NoCloud seed, and serving a .deb to a booted node from 127.0.0.1.
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, createReadStream } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { cannotBuild } from '../build/helpers.js';
import { vmOptIn } from './packer-support.js';
import type { BootCheck } from '../../src/verify/boot.js';

/** Why the node VM tests cannot run here, or undefined when they can. */
export const cannotBootNode: string | undefined =
  cannotBuild ??
  (!['/usr/bin/qemu-system-x86_64', '/usr/share/OVMF/OVMF_CODE.fd'].every(existsSync)
    ? 'qemu-system-x86 and ovmf are not installed'
    : !existsSync('/usr/bin/cloud-localds')
      ? 'cloud-localds is not installed (apt-get install cloud-image-utils): it makes the NoCloud seeds'
      : vmOptIn);

/** A check the test adds to the boot: it holds when `script` exits 0; what it prints comes back in `printed[subject]`. */
export const probe = (subject: string, script: string): BootCheck => ({ subject, what: subject, stepId: 'test', script });

/** A raw copy of `disk` (qcow2 or raw) grown to `size` with `qemu-img resize`: a clone's disk. */
export const cloneDisk = async (disk: string, file: string, size: string): Promise<void> => {
  await execa('qemu-img', ['convert', '-f', /\.qcow2$/.test(disk) ? 'qcow2' : 'raw', '-O', 'raw', disk, file]);
  await execa('qemu-img', ['resize', '-f', 'raw', file, size]);
};

/** A NoCloud seed (cloud-localds: an ISO labelled cidata) giving the node its hostname and a user with an authorized key. */
export const seedIso = async (dir: string, o: { hostname: string; user: string; key: string }): Promise<string> => {
  const userData = path.join(dir, `${o.hostname}-user-data`);
  const metaData = path.join(dir, `${o.hostname}-meta-data`);
  writeFileSync(userData, ['#cloud-config', 'users:', `  - name: ${o.user}`, '    shell: /bin/bash', '    ssh_authorized_keys:', `      - ${o.key}`, ''].join('\n'));
  writeFileSync(metaData, `instance-id: ${o.hostname}\nlocal-hostname: ${o.hostname}\n`);
  const iso = path.join(dir, `${o.hostname}-seed.iso`);
  await execa('cloud-localds', [iso, userData, metaData]);
  return iso;
};

/** The version dpkg's status in `root` records for `pkg`. */
export const installedVersion = (root: string, pkg: string): string | undefined =>
  new RegExp(`^Package: ${pkg.replace(/[.+]/g, '\\$&')}\\n(?:[^\\n]+\\n)*?Version: (\\S+)$`, 'm').exec(readFileSync(path.join(root, 'var/lib/dpkg/status'), 'utf8'))?.[1];

/**
 * A flat apt repository of the .deb files in `dir` (its Packages index: each
 * package's control fields, file name, size and sha256), served over HTTP on
 * 127.0.0.1. Close it with `server.close()`.
 */
export const serveDebs = async (dir: string): Promise<{ server: Server; port: number }> => {
  const stanzas: string[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.deb')).sort()) {
    const file = path.join(dir, f);
    const control = (await execa('dpkg-deb', ['-f', file])).stdout.trimEnd();
    const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
    stanzas.push(`${control}\nFilename: ./${f}\nSize: ${statSync(file).size}\nSHA256: ${sha256}\n`);
  }
  writeFileSync(path.join(dir, 'Packages'), stanzas.join('\n'));
  const server = createServer((req, res) => {
    const name = path.basename(decodeURIComponent((req.url ?? '/').split('?')[0]!));
    const file = path.join(dir, name);
    if (!name || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
};
