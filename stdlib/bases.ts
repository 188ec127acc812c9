// Base images (phase 0). Each declares the facts a fresh root of it provides,
// so a definition may rely on them and `imgc verify` can check them. Debian
// 12's are read from a real `debootstrap --variant=minbase` root
// (./bases/debian-12.ts, `npm run gen:bases`); the Ubuntu bases' are listed by
// hand until a root of one can be made here (no Ubuntu mirror is reachable),
// as what a minbase root of Debian has that Ubuntu's has too.
import type { Base } from '../src/ir/types.js';
import { asOwnFacts, fact, uniqueFacts, type FactDetails } from '../src/core/facts.js';
import type { BaseImage } from '../src/dsl/image.js';
import type { Facts, WithPackages } from '../src/dsl/types.js';
import { packageFacts } from '../src/core/catalog.js';
import { aptCatalog, aptCatalogArm64, ubuntuCatalog } from './catalog.js';
import { debian12Archive } from './archive/debian-12.js';
import { debian12Arm64Archive } from './archive/debian-12-arm64.js';
import type { PackageArchive, PackageCatalog } from '../src/core/catalog.js';
import { debian12Facts } from './bases/debian-12.js';
import { debian12Arm64Facts } from './bases/debian-12-arm64.js';
import type { Arch } from '../src/core/arch.js';

/** The facts of a base as lists: what ./bases/*.ts hold. */
interface BaseFactLists {
  readonly users: readonly string[];
  readonly groups: readonly string[];
  readonly packages: readonly string[];
  readonly paths: readonly string[];
  readonly services: readonly string[];
  readonly commands: readonly string[];
  /** By fact id, where the data knows them (src/ir/schema.ts, Base.details). */
  readonly details?: Record<string, FactDetails>;
}

/** The IR's `details` of generated base data: its paths' type, owner, group and mode, its packages' versions. */
const detailsOf = (data: { readonly packages: Readonly<Record<string, string>>; readonly pathDetails: Readonly<Record<string, FactDetails>> }): Record<string, FactDetails> => ({
  ...Object.fromEntries(Object.entries(data.pathDetails).map(([p, d]) => [`path:${p}`, { ...d }])),
  ...Object.fromEntries(Object.entries(data.packages).map(([p, version]) => [`package:${p}`, { version }])),
});

const ubuntuHandListed = {
  users: ['root', 'daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'uucp', 'proxy', 'www-data', 'backup', 'list', 'irc', '_apt', 'nobody'],
  groups: [
    'root', 'daemon', 'bin', 'sys', 'adm', 'tty', 'disk', 'lp', 'mail', 'news', 'uucp', 'man', 'proxy', 'kmem', 'dialout', 'fax', 'voice', 'cdrom', 'floppy', 'tape',
    'sudo', 'audio', 'dip', 'www-data', 'backup', 'operator', 'list', 'irc', 'src', 'shadow', 'utmp', 'video', 'sasl', 'plugdev', 'staff', 'games', 'users', 'nogroup',
  ],
  packages: [
    'apt', 'base-files', 'base-passwd', 'bash', 'bsdutils', 'coreutils', 'dash', 'debconf', 'debianutils', 'diffutils', 'dpkg', 'findutils', 'grep', 'gzip',
    'hostname', 'init-system-helpers', 'libc-bin', 'login', 'mawk', 'mount', 'ncurses-base', 'ncurses-bin', 'passwd', 'perl-base', 'sed', 'sysvinit-utils', 'tar',
    'util-linux',
  ],
  paths: [
    '/', '/etc', '/etc/apt', '/etc/apt/sources.list.d', '/etc/apt/keyrings', '/etc/apt/trusted.gpg.d', '/etc/default', '/etc/profile.d', '/etc/fstab', '/etc/passwd',
    '/etc/group', '/home', '/root', '/tmp', '/opt', '/srv', '/usr', '/usr/bin', '/usr/sbin', '/usr/lib', '/usr/local', '/usr/local/bin', '/usr/local/sbin', '/var',
    '/var/lib', '/var/log',
  ],
  services: [],
  commands: ['sh', 'bash', 'apt-get', 'dpkg', 'useradd', 'groupadd', 'usermod', 'getent', 'chown', 'chmod', 'mkdir', 'ln', 'sed', 'grep', 'tar'],
} as const;

/** A generated base's lists: its packages' names, and the details of its paths and packages. */
const listsOf = <D extends { readonly packages: Readonly<Record<string, string>>; readonly pathDetails: Readonly<Record<string, FactDetails>> }>(data: D) => ({
  ...data,
  packages: Object.keys(data.packages) as (keyof D['packages'])[],
  details: detailsOf(data),
});
const debian12Lists = listsOf(debian12Facts);
const debian12Arm64Lists = listsOf(debian12Arm64Facts);

/** The facts record of a base's lists, for the builder's types. */
type FactsOfLists<L extends BaseFactLists> = {
  user: L['users'][number];
  group: L['groups'][number];
  package: L['packages'][number];
  path: L['paths'][number];
  service: L['services'][number];
  command: L['commands'][number];
};

export interface AptBaseOptions<I extends string> {
  /** Extra packages laid down with the base (debootstrap --include), e.g. systemd. */
  include?: readonly I[];
  variant?: Base['variant'];
}

const aptBase = <L extends BaseFactLists, C extends PackageCatalog, I extends string>(
  ir: Pick<Base, 'name' | 'distro' | 'release' | 'suite' | 'arch'>,
  lists: L,
  packages: { catalog: C; archive?: PackageArchive },
  opts: AptBaseOptions<I>,
): BaseImage<WithPackages<FactsOfLists<L>, C, I>, C> => {
  const include = [...(opts.include ?? [])].sort();
  const provides = uniqueFacts([
    ...lists.users.map((k) => fact('user', k)),
    ...lists.groups.map((k) => fact('group', k)),
    ...lists.paths.map((k) => fact('path', k)),
    ...lists.services.map((k) => fact('service', k)),
    ...lists.commands.map((k) => fact('command', k)),
    // The base's own packages' facts are the root's, read above; an included one's are the archive's.
    ...lists.packages.flatMap((p) => packageFacts(packages.catalog, p)),
    ...include.flatMap((p) => packageFacts(packages.catalog, p, 'apt', packages.archive)),
  ]);
  return {
    ir: { ...ir, variant: opts.variant ?? 'minbase', packageManager: 'apt', include, provides: asOwnFacts(provides), ...(lists.details ? { details: asOwnFacts(lists.details) } : {}) },
    ...packages,
  };
};

export interface Debian12Options<I extends string> extends AptBaseOptions<I> {
  /**
   * The root's architecture (default amd64). An arm64 root on an amd64 host
   * is debootstrapped in two stages, the second through qemu-user-static,
   * and its steps run the same way (docs/arm64.md); its facts and kernel
   * package are arm64's.
   */
  arch?: Arch;
}

const debian12Ir = { name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm' } as const;

/**
 * What the types know of a Debian 12 root: the facts a root of every
 * architecture has (an arm64 root has no /usr/lib64, amd64's no
 * /usr/lib/aarch64-linux-gnu), so one definition serves both and a matrix
 * over `arch` type-checks once. The checker knows the exact architecture's.
 */
type AnyArch<K extends keyof FactsOfLists<typeof debian12Lists>> = Extract<FactsOfLists<typeof debian12Lists>[K], FactsOfLists<typeof debian12Arm64Lists>[K]>;
type Debian12Facts = { [K in keyof FactsOfLists<typeof debian12Lists>]: AnyArch<K> };
/** The typed packages of every architecture; each one's kernel and loader are known to the checker through its own catalog. */
type Debian12Catalog = Omit<typeof aptCatalog, 'linux-image-amd64' | 'systemd-boot-efi'>;

/** Debian 12 "bookworm", amd64 (the default) or arm64. */
export const debian12 = <const I extends string = never>(opts: Debian12Options<I> = {}): BaseImage<WithPackages<Debian12Facts, Debian12Catalog, I>, Debian12Catalog> => {
  const { arch, ...rest } = opts;
  return (
    arch === 'arm64'
      ? aptBase({ ...debian12Ir, arch }, debian12Arm64Lists, { catalog: aptCatalogArm64, archive: debian12Arm64Archive }, rest)
      : aptBase(debian12Ir, debian12Lists, { catalog: aptCatalog, archive: debian12Archive }, rest)
  ) as unknown as BaseImage<WithPackages<Debian12Facts, Debian12Catalog, I>, Debian12Catalog>;
};

/** Ubuntu 22.04 LTS "jammy". */
export const ubuntu2204 = <const I extends string = never>(opts: AptBaseOptions<I> = {}) =>
  aptBase({ name: 'ubuntu-22.04', distro: 'ubuntu', release: '22.04', suite: 'jammy' }, ubuntuHandListed, { catalog: ubuntuCatalog }, opts);

/** Ubuntu 24.04 LTS "noble". */
export const ubuntu2404 = <const I extends string = never>(opts: AptBaseOptions<I> = {}) =>
  aptBase({ name: 'ubuntu-24.04', distro: 'ubuntu', release: '24.04', suite: 'noble' }, ubuntuHandListed, { catalog: ubuntuCatalog }, opts);

