// Running another architecture's binaries in a root: the kernel's binfmt_misc
// hands them to qemu-user-static's emulator. Debian's qemu-user-static ships
// the registrations (/usr/lib/binfmt.d, flag F: the emulator is opened when
// registered, so it works inside a chroot without a copy there) but a machine
// without systemd-binfmt, such as a container, has not loaded them: imgc
// mounts binfmt_misc and registers the one it needs, as root.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { archInfo, type Arch } from '../core/arch.js';
import { run } from './exec.js';

const MOUNT = '/proc/sys/fs/binfmt_misc';
const CONF_DIRS = ['/usr/lib/binfmt.d', '/lib/binfmt.d', '/etc/binfmt.d'];

/** Node's names of the architectures bases have, as Debian names them. */
const debianArch: Readonly<Partial<Record<string, Arch>>> = { x64: 'amd64', arm64: 'arm64' };

/** This machine's architecture, as Debian names it; undefined for one no base has. */
export const hostArch = (): Arch | undefined => debianArch[process.arch];

/** Whether a root of `arch` runs its binaries here only through an emulator. */
export const isForeign = (arch: Arch): boolean => hostArch() !== arch;

/** The user-mode emulator qemu-user-static installs for `arch` (its binfmt registration runs it), for the build's tool check. */
export const emulatorCommand = (arch: Arch): string => `${archInfo[arch].binfmt}-static`;

export class ForeignArchError extends Error {
  override name = 'ForeignArchError';
}

/** The registration binfmt_misc holds for `name`: enabled and with the fix-binary flag, or why not. */
const registered = (name: string): { ok: true } | { ok: false; why: string } | undefined => {
  const file = `${MOUNT}/${name}`;
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  if (!/^enabled$/m.test(text)) return { ok: false, why: `${file} is disabled (echo 1 > ${file})` };
  const flags = /^flags: (\S*)$/m.exec(text)?.[1] ?? '';
  if (!flags.includes('F')) return { ok: false, why: `${file} is registered without the F (fix-binary) flag, so its emulator is not found inside a chroot: Debian's qemu-user-static registers it with F` };
  return { ok: true };
};

/**
 * Makes sure binaries of `arch` run here, for laying down and building a root
 * of it. Mounts binfmt_misc and registers qemu-user-static's emulator when
 * they are not; throws a message naming the package or step when it cannot.
 */
export const ensureForeignArch = async (arch: Arch): Promise<void> => {
  const name = archInfo[arch].binfmt;
  if (!existsSync(`${MOUNT}/status`)) {
    const r = await run('mount', ['-t', 'binfmt_misc', 'binfmt_misc', MOUNT], { check: false });
    if (r.exitCode !== 0) throw new ForeignArchError(`an ${arch} root needs binfmt_misc to run its binaries, and mounting it on ${MOUNT} failed (as root: mount -t binfmt_misc binfmt_misc ${MOUNT}): ${r.output.trim()}`);
  }
  let state = registered(name);
  if (state === undefined) {
    const conf = CONF_DIRS.map((d) => `${d}/${name}.conf`).find(existsSync);
    if (!conf) throw new ForeignArchError(`an ${arch} root runs its binaries through qemu-user-static, which is not installed (apt-get install qemu-user-static)`);
    try {
      writeFileSync(`${MOUNT}/register`, readFileSync(conf, 'utf8').trim());
    } catch (e) {
      // Another build may have registered it meanwhile (EEXIST): what counts is what is there now.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new ForeignArchError(`registering ${conf} with binfmt_misc failed (as root: cat ${conf} > ${MOUNT}/register): ${(e as Error).message}`);
    }
    state = registered(name) ?? { ok: false, why: `${conf} was written to ${MOUNT}/register, but ${MOUNT}/${name} did not appear` };
  }
  if (!state.ok) throw new ForeignArchError(`an ${arch} root cannot run its binaries here: ${state.why}`);
};
