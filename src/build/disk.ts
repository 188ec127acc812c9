// Bootable disks, made without loop devices or mounts (so they work in
// containers and CI): the file is partitioned by `sfdisk` (GPT: an EFI system
// partition and a root partition), the root filesystem is written into its
// partition by `mkfs.ext4 -E offset=… -d ROOT`, and the ESP by `mkfs.fat
// --offset` and mtools (`mcopy -i disk@@offset`). UEFI only: systemd-boot is
// the removable-media loader (EFI/BOOT/BOOTX64.EFI) with one loader entry
// that boots the root's kernel and initramfs with root=PARTUUID=….
// Every identifier (disk GUID, partition GUIDs, filesystem UUIDs, FAT volume
// id, ext4 hash seed) is derived from the image and output names, so the same
// definition gives the same disk.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, lutimesSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bootFiles, ESP_LABEL, espFiles, loaderEntry } from '../core/boot.js';
import { archInfo, type Arch } from '../core/arch.js';
import { capture, run, type RunOptions } from '../host/exec.js';
import { GPT_TYPE, SECTOR } from '../host/gpt.js';

const MiB = 1024 * 1024;
/** Room for a Debian kernel and a MODULES=most initramfs (~50 MB), and a second pair. */
const ESP_BYTES = 256 * MiB;
/** GPT: partitions start at 1 MiB; the backup table takes the last 33 sectors. */
const FIRST_LBA = MiB / SECTOR;
const GPT_TAIL_SECTORS = 33;

/** A UUID derived from `parts` (name-based, RFC 4122 version 5 bits on a sha256). */
export const derivedUuid = (...parts: string[]): string => {
  const b = createHash('sha256').update(parts.join('\0')).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** "4G" → bytes. */
export const sizeBytes = (size: string): number => {
  const m = /^(\d+)([MG])$/.exec(size);
  if (!m) throw new Error(`artifact size '${size}' is not N[MG]`);
  return Number(m[1]) * (m[2] === 'G' ? 1024 : 1) * MiB;
};

export interface DiskLayout {
  bytes: number;
  diskGuid: string;
  esp: { start: number; sectors: number; partUuid: string; volumeId: string };
  root: { start: number; sectors: number; partUuid: string; fsUuid: string };
}

/** Where the partitions go on a disk of `size` and what they are called, for image `image`'s output `output`. */
export const diskLayout = (image: string, output: string, size: string): DiskLayout => {
  const bytes = sizeBytes(size);
  const total = bytes / SECTOR;
  const espSectors = ESP_BYTES / SECTOR;
  const rootStart = FIRST_LBA + espSectors;
  // The root ends on a 1 MiB boundary before the backup GPT.
  const rootSectors = Math.floor((total - GPT_TAIL_SECTORS - rootStart) / FIRST_LBA) * FIRST_LBA;
  if (rootSectors * SECTOR < 256 * MiB) throw new Error(`a bootable disk of ${size} leaves no room for the root: give at least ${(ESP_BYTES + 512 * MiB) / MiB}M`);
  const id = (role: string) => derivedUuid('imgc-disk', image, output, role);
  return {
    bytes,
    diskGuid: id('disk'),
    esp: { start: FIRST_LBA, sectors: espSectors, partUuid: id('esp-part'), volumeId: id('esp-fs').replace(/-/g, '').slice(0, 8) },
    root: { start: rootStart, sectors: rootSectors, partUuid: id('root-part'), fsUuid: id('root-fs') },
  };
};

/** sfdisk's input for the layout. */
export const sfdiskScript = (l: DiskLayout, arch: Arch = 'amd64'): string =>
  [
    'label: gpt',
    `label-id: ${l.diskGuid}`,
    'unit: sectors',
    `first-lba: ${FIRST_LBA}`,
    `start=${l.esp.start}, size=${l.esp.sectors}, type=${GPT_TYPE.esp}, uuid=${l.esp.partUuid}, name="ESP"`,
    `start=${l.root.start}, size=${l.root.sectors}, type=${GPT_TYPE.root(arch)}, uuid=${l.root.partUuid}, name="root"`,
    '',
  ].join('\n');

/** The kernel command line of the loader entry. */
export const kernelCmdline = (l: DiskLayout, arch: Arch = 'amd64'): string => `root=PARTUUID=${l.root.partUuid} rw console=tty0 console=${archInfo[arch].serial},115200`;

/** A file of the root, following a symlink the root holds (relative or absolute, inside the root). */
const rootFile = (root: string, p: string): string => {
  let abs = path.join(root, p);
  for (let i = 0; i < 8; i++) {
    let target: string;
    try {
      target = readlinkSync(abs);
    } catch {
      break;
    }
    abs = target.startsWith('/') ? path.join(root, target) : path.resolve(path.dirname(abs), target);
  }
  if (!existsSync(abs)) throw new Error(`${p} is missing in the root: a bootable disk needs the root's kernel, initramfs and systemd-boot (use bootable() from the stdlib)`);
  return abs;
};

/** The kernel's version, from the file /vmlinuz leads to (boot/vmlinuz-6.1.0-28-amd64); the file's name when it has none. */
export const kernelVersion = (kernelFile: string): string => path.basename(kernelFile).replace(/^vmlinuz-/, '');

/** Environment for reproducible timestamps: mkfs and mtools read these. */
export const reproducibleEnv = (epoch: number | undefined): Record<string, string> =>
  epoch === undefined ? {} : { SOURCE_DATE_EPOCH: String(epoch), E2FSPROGS_FAKE_TIME: String(epoch) };

/**
 * Clamps the mtime of everything in `dir` to `epoch`: `mkfs.ext4 -d` copies
 * it into the filesystem, and files the build wrote carry the time of the
 * build. Access times are not worth clamping here (reading a directory, as
 * this walk and mkfs do, sets its atime again under relatime): makeExt4 sets
 * them in the filesystem afterwards.
 */
export const clampTimes = (dir: string, epoch: number): void => {
  const limit = BigInt(epoch) * 1_000_000_000n;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (lstatSync(p, { bigint: true }).mtimeNs > limit) lutimesSync(p, epoch, epoch);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  if (lstatSync(dir, { bigint: true }).mtimeNs > limit) lutimesSync(dir, epoch, epoch);
};

/** The inodes in use in an ext4 filesystem, from dumpe2fs's free inode ranges per group. */
const usedInodes = async (fsSpec: string): Promise<number[]> => {
  const text = await capture('dumpe2fs', [fsSpec]);
  const perGroup = Number(/^Inodes per group:\s+(\d+)/m.exec(text)?.[1]);
  const groups = [...text.matchAll(/^Group (\d+):[\s\S]*?^\s+Free inodes: ?(.*)$/gm)];
  const used: number[] = [];
  for (const g of groups) {
    const first = Number(g[1]) * perGroup + 1;
    const free = new Set<number>();
    for (const r of (g[2] ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
      const [a, b] = r.split('-').map(Number);
      for (let i = a!; i <= (b ?? a!); i++) free.add(i);
    }
    for (let i = first; i < first + perGroup; i++) if (!free.has(i)) used.push(i);
  }
  return used;
};

/** Makes the ext4 filesystem of `root` (`sizeBytes` long) in `file` at byte `offset`; a bare image when offset is 0. */
export const makeExt4 = async (root: string, file: string, opts: { bytes: number; offset: number; uuid: string; run: RunOptions; epoch?: number }): Promise<void> => {
  const blocks = Math.floor(opts.bytes / 4096);
  if (opts.epoch !== undefined) clampTimes(root, opts.epoch);
  await run(
    'mkfs.ext4',
    ['-q', '-F', '-b', '4096', '-L', 'rootfs', '-U', opts.uuid, '-E', `root_owner=0:0,hash_seed=${opts.uuid},nodiscard${opts.offset ? `,offset=${opts.offset}` : ''}`, '-d', root, file, String(blocks)],
    { ...opts.run, env: { ...opts.run.env, ...reproducibleEnv(opts.epoch) } },
  );
  if (opts.epoch === undefined) return;
  // Inode change and creation times are the copy's, and access times the time mkfs read the root:
  // all three are set to the epoch (the root inode's and every file's).
  const spec = opts.offset ? `${file}?offset=${opts.offset}` : file;
  const inodes = (await usedInodes(spec)).filter((i) => i === 2 || i >= 11);
  const script = inodes.map((i) => ['ctime', 'crtime', 'atime'].map((f) => `sif <${i}> ${f} @${opts.epoch}\n`).join('')).join('');
  await run('debugfs', ['-w', '-f', '-', spec], { ...opts.run, input: script, log: undefined, env: { ...opts.run.env, ...reproducibleEnv(opts.epoch) } });
};

/**
 * Writes a bootable GPT disk of the root into `file` (created; sparse).
 * `scratch`: a directory for the loader configuration files.
 */
export const makeBootableDisk = async (
  root: string,
  file: string,
  opts: { image: string; output: string; size: string; arch: Arch; scratch: string; run: RunOptions; epoch?: number },
): Promise<DiskLayout> => {
  const l = diskLayout(opts.image, opts.output, opts.size);
  const files = bootFiles(opts.arch);
  const kernel = rootFile(root, files.kernel);
  const initrd = rootFile(root, files.initrd);
  const loader = rootFile(root, files.loader);
  rmSync(file, { force: true });
  await run('truncate', ['-s', String(l.bytes), file], opts.run);
  await run('sfdisk', ['--quiet', '--no-reread', '--no-tell-kernel', file], { ...opts.run, input: sfdiskScript(l, opts.arch) });
  await makeExt4(root, file, { bytes: l.root.sectors * SECTOR, offset: l.root.start * SECTOR, uuid: l.root.fsUuid, run: opts.run, ...(opts.epoch !== undefined ? { epoch: opts.epoch } : {}) });
  const env = { ...opts.run.env, ...reproducibleEnv(opts.epoch), MTOOLS_SKIP_CHECK: '1' };
  // FAT32 with 512-byte clusters: a 256 MiB FAT32 with larger clusters is below FAT32's cluster minimum.
  // --invariant: no time of the build in the volume label's entry (mkfs.fat does not read SOURCE_DATE_EPOCH; mtools does).
  await run('mkfs.fat', [...(opts.epoch !== undefined ? ['--invariant'] : []), '--offset', String(l.esp.start), '-F', '32', '-s', '1', '-n', ESP_LABEL, '-i', l.esp.volumeId, file, String(l.esp.sectors / 2)], { ...opts.run, env });
  const conf = path.join(opts.scratch, `.loader-${process.pid}.conf`);
  const entry = path.join(opts.scratch, `.entry-${process.pid}.conf`);
  writeFileSync(conf, 'default imgc.conf\ntimeout 0\nconsole-mode keep\n');
  writeFileSync(entry, loaderEntry({ title: opts.image, version: kernelVersion(kernel), options: kernelCmdline(l, opts.arch) }));
  const esp = `${file}@@${l.esp.start * SECTOR}`;
  try {
    await run('mmd', ['-i', esp, '::/EFI', '::/EFI/BOOT', '::/EFI/systemd', '::/loader', '::/loader/entries', '::/imgc'], { ...opts.run, env });
    const copy = (from: string, to: string) => run('mcopy', ['-i', esp, from, to], { ...opts.run, env });
    await copy(loader, `::/EFI/BOOT/BOOT${archInfo[opts.arch].efi.toUpperCase()}.EFI`);
    await copy(loader, `::/EFI/systemd/${path.posix.basename(files.loader)}`);
    await copy(kernel, `::${espFiles.kernel}`);
    await copy(initrd, `::${espFiles.initrd}`);
    await copy(conf, '::/loader/loader.conf');
    await copy(entry, `::${espFiles.entry}`);
  } finally {
    rmSync(conf, { force: true });
    rmSync(entry, { force: true });
  }
  return l;
};
