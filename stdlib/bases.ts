// Base images (phase 0). Each declares the facts a fresh root of it provides;
// the lists are what `debootstrap --variant=minbase` lays down, so a definition
// may rely on them and `imgc verify` can check them.
import type { Base } from '../src/ir/types.js';
import { fact, uniqueFacts } from '../src/ir/facts.js';
import type { BaseImage } from '../src/dsl/builder.js';
import type { WithPackages } from '../src/dsl/types.js';
import { packageFacts } from '../src/dsl/catalog.js';
import { aptCatalog, type AptCatalog } from './catalog.js';

const debianUsers = ['root', 'daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'uucp', 'proxy', 'www-data', 'backup', 'list', 'irc', '_apt', 'nobody'] as const;
const debianGroups = [
  'root', 'daemon', 'bin', 'sys', 'adm', 'tty', 'disk', 'lp', 'mail', 'news', 'uucp', 'man', 'proxy', 'kmem', 'dialout', 'fax', 'voice', 'cdrom', 'floppy', 'tape',
  'sudo', 'audio', 'dip', 'www-data', 'backup', 'operator', 'list', 'irc', 'src', 'shadow', 'utmp', 'video', 'sasl', 'plugdev', 'staff', 'games', 'users', 'nogroup',
] as const;
const aptMinbasePackages = [
  'apt', 'base-files', 'base-passwd', 'bash', 'bsdutils', 'coreutils', 'dash', 'debconf', 'debianutils', 'diffutils', 'dpkg', 'findutils', 'grep', 'gzip',
  'hostname', 'init-system-helpers', 'libc-bin', 'login', 'mawk', 'mount', 'ncurses-base', 'ncurses-bin', 'passwd', 'perl-base', 'sed', 'sysvinit-utils', 'tar',
  'util-linux',
] as const;
const aptMinbasePaths = [
  '/', '/etc', '/etc/apt', '/etc/apt/sources.list.d', '/etc/apt/keyrings', '/etc/apt/trusted.gpg.d', '/etc/default', '/etc/profile.d', '/etc/fstab', '/etc/passwd',
  '/etc/group', '/home', '/root', '/tmp', '/opt', '/srv', '/usr', '/usr/bin', '/usr/sbin', '/usr/lib', '/usr/local', '/usr/local/bin', '/usr/local/sbin', '/var',
  '/var/lib', '/var/log',
] as const;
const aptMinbaseCommands = ['sh', 'bash', 'apt-get', 'dpkg', 'useradd', 'groupadd', 'usermod', 'getent', 'chown', 'chmod', 'mkdir', 'ln', 'sed', 'grep', 'tar'] as const;

type AptBaseFacts = {
  user: (typeof debianUsers)[number];
  group: (typeof debianGroups)[number];
  package: (typeof aptMinbasePackages)[number];
  path: (typeof aptMinbasePaths)[number];
  service: never;
  command: (typeof aptMinbaseCommands)[number];
};

export interface AptBaseOptions<I extends string> {
  /** Extra packages laid down with the base (debootstrap --include), e.g. systemd. */
  include?: readonly I[];
  variant?: Base['variant'];
}

const aptBase = <I extends string>(
  ir: Pick<Base, 'name' | 'distro' | 'release' | 'suite'>,
  opts: AptBaseOptions<I>,
): BaseImage<WithPackages<AptBaseFacts, AptCatalog, I>, AptCatalog> => {
  const include = [...(opts.include ?? [])].sort();
  const provides = uniqueFacts([
    ...debianUsers.map((k) => fact('user', k)),
    ...debianGroups.map((k) => fact('group', k)),
    ...aptMinbasePaths.map((k) => fact('path', k)),
    ...aptMinbaseCommands.map((k) => fact('command', k)),
    ...[...aptMinbasePackages, ...include].flatMap((p) => packageFacts(aptCatalog, p)),
  ]);
  return {
    ir: { ...ir, variant: opts.variant ?? 'minbase', packageManager: 'apt', include, provides },
    catalog: aptCatalog,
  };
};

/** Debian 12 "bookworm". */
export const debian12 = <const I extends string = never>(opts: AptBaseOptions<I> = {}) =>
  aptBase({ name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm' }, opts);

/** Ubuntu 22.04 LTS "jammy". */
export const ubuntu2204 = <const I extends string = never>(opts: AptBaseOptions<I> = {}) =>
  aptBase({ name: 'ubuntu-22.04', distro: 'ubuntu', release: '22.04', suite: 'jammy' }, opts);

/** Ubuntu 24.04 LTS "noble". */
export const ubuntu2404 = <const I extends string = never>(opts: AptBaseOptions<I> = {}) =>
  aptBase({ name: 'ubuntu-24.04', distro: 'ubuntu', release: '24.04', suite: 'noble' }, opts);

