// How `packer build` gets into a qemu source's VM and what it leaves behind
// (docs/packer.md): a NoCloud seed (cd_files, label cidata) whose user-data
// makes a temporary user with passwordless sudo and no password, authorized
// for the public half of a key pair made for this build only; the template's
// last provisioner and shutdown command remove it all again.
import type { Image } from '../../ir/schema.js';

/** The temporary user Packer logs in as. */
export const BUILD_USER = 'imgc-build';

/**
 * Where the phase scripts and their helpers go in the target: not /tmp, which
 * the stdlib's sysprep() empties and a reboot may, while later phases still
 * source helpers.sh from there. Removed by the template's last provisioner.
 */
export const BUILD_DIR = '/var/lib/imgc-build';

/** What the seed needs on the disk it boots: cloud-init reads it, sshd lets Packer in. */
export const WAY_IN_PACKAGES = ['cloud-init', 'openssh-server'] as const;

/** The seed's files, under seed/ beside the template. */
export const SEED_DIR = 'seed';

/** The sudoers drop-in cloud-init writes for a user with `sudo`. */
const CLOUD_INIT_SUDOERS = '/etc/sudoers.d/90-cloud-init-users';

/**
 * The seed's user-data. The public key is no part of it (the template is the
 * same for every build): cd_files puts the key file given with -var on the
 * same disc, and runcmd reads it from there.
 */
export const userData = (): string =>
  [
    '#cloud-config',
    '# imgc: the way in for packer build. A temporary user with passwordless sudo and no',
    "# password; its authorized key is the .pub file on this disc (the build's own key pair).",
    '# The template removes the user, its home and sudoers entry, and cloud-init\'s state and logs.',
    'users:',
    `  - name: ${BUILD_USER}`,
    '    gecos: imgc packer build (removed at the end of the build)',
    '    lock_passwd: true',
    '    shell: /bin/sh',
    "    sudo: 'ALL=(ALL) NOPASSWD:ALL'",
    'ssh_pwauth: false',
    'runcmd:',
    '  - - sh',
    '    - -c',
    '    - |',
    '      set -eu',
    '      disc=$(mktemp -d)',
    '      mount -o ro LABEL=cidata "$disc"',
    `      install -d -m 0700 -o ${BUILD_USER} -g ${BUILD_USER} ~${BUILD_USER}/.ssh`,
    `      cat "$disc"/*.pub > ~${BUILD_USER}/.ssh/authorized_keys`,
    '      umount "$disc"',
    '      rmdir "$disc"',
    `      chown ${BUILD_USER}:${BUILD_USER} ~${BUILD_USER}/.ssh/authorized_keys`,
    `      chmod 0600 ~${BUILD_USER}/.ssh/authorized_keys`,
    '',
  ].join('\n');

export const metaData = (imageName: string): string => `instance-id: imgc-build-${imageName}\n`;

/** Run as root by the last provisioner of a VM the seed let in: cloud-init's state (the seed it read, the instance it made) and logs. */
export const seedCleanup: readonly string[] = ['rm -rf /var/lib/cloud /var/log/cloud-init.log /var/log/cloud-init-output.log'];

/** A path a single-quoted `sh -c '…'` carries as it is (a glob's * ? [ ] included). */
const plainPath = /^\/[A-Za-z0-9_./*?[\]+@%:,=-]+$/;

/**
 * The image's clean steps under /var/log once more, then a tmpfs over
 * /var/log: a running VM writes there after them (journald, the logins of
 * the later provisioners, the shutdown's own wtmp record), and what they
 * promise of the image (sysprep(): no journal, an empty wtmp) must hold in the
 * disk Packer writes. When they clean the journal, journald is first told to
 * keep to /run (the tmpfs alone did not stop it writing the build VM's journal
 * into the image, seen in the VM test). Nothing when no clean step touches /var/log, or a later
 * step writes where it cleaned.
 */
export const logSettling = (ir: Image): string[] => {
  const steps = ir.phases.flatMap((p) => [...p.pre, ...p.steps, ...p.post]);
  const commands = steps.flatMap((s, i) => {
    if (s.kind !== 'clean') return [];
    const later = steps.slice(i + 1).flatMap((t) => t.provides.filter((f) => f.kind === 'path').map((f) => f.key));
    const paths = s.paths.filter((p) => p.startsWith('/var/log/') && plainPath.test(p) && !later.some((l) => l.startsWith(p.slice(0, p.lastIndexOf('/') + 1))));
    if (!paths.length) return [];
    return [s.action === 'remove' ? `rm -rf -- ${paths.join(' ')}` : `for f in ${paths.join(' ')}; do if [ -f "$f" ]; then : > "$f"; fi; done`];
  });
  if (!commands.length) return [];
  // journald writes to /run from here on, never again to /var/log/journal (whatever the mounts do at shutdown).
  const journal = steps.some((s) => s.kind === 'clean' && s.paths.some((p) => p.startsWith('/var/log/journal')));
  return [...(journal ? ['journalctl --relinquish-var'] : []), ...commands, 'mount -t tmpfs -o mode=0755 imgc-shutdown /var/log'];
};

/**
 * The shutdown command of a VM the seed let in: the build user's own session
 * runs it, so the user goes only now (userdel -f: its session is still open),
 * with its home, key and sudoers entry; then the logs are settled
 * ({@link logSettling}) and the machine powers off.
 */
export const seedShutdown = (settle: readonly string[]): string =>
  `sudo sh -c 'userdel -f -r ${BUILD_USER}; rm -f ${CLOUD_INIT_SUDOERS}; ${[...settle, 'shutdown -P now'].join('; ')}'`;
