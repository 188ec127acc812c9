// The sparse-aware sha256 must equal sha256sum's for every layout a disk
// image can have: holes, data, preallocated (unwritten) extents, a tail
// that is not block-aligned; and it must really take the sparse path.
import { execa } from 'execa';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dataRanges, fileSha256 } from '../../src/build/sparse-hash.js';
import { repoRoot, tempDir } from '../helpers/cli.js';

// On the repository's disk: tmpfs has no extent map.
mkdirSync(path.join(repoRoot, 'out'), { recursive: true });
const dir = tempDir('sparse-hash', path.join(repoRoot, 'out'));

const sha256sum = async (file: string) => (await execa('sha256sum', [file])).stdout.split(' ')[0];

describe('fileSha256', () => {
  it('equals sha256sum on a sparse file with data, holes, an unwritten extent and an odd tail', async () => {
    const file = path.join(dir, 'sparse.img');
    const fd = openSync(file, 'w');
    const mark = (at: number, text: string) => writeSync(fd, Buffer.from(text), 0, Buffer.byteLength(text), at);
    mark(0, 'boot sector');
    mark(5 * 2 ** 20 + 123, 'in the middle of a block');
    mark(90 * 2 ** 20, 'x'.repeat(3 * 2 ** 20 + 7)); // spans chunks
    mark(200 * 2 ** 20 + 4095, 'across a block boundary');
    closeSync(fd);
    // A preallocated region (reads as zeros) and a size that is not a multiple of the block size.
    await execa('fallocate', ['-o', String(120 * 2 ** 20), '-l', String(8 * 2 ** 20), file]);
    await execa('truncate', ['-s', String(300 * 2 ** 20 + 333), file]);
    const ranges = await dataRanges(file);
    expect(ranges, 'filefrag gave a usable map').toBeDefined();
    expect(ranges!.reduce((n, [s, e]) => n + e - s, 0)).toBeLessThan(16 * 2 ** 20);
    expect(await fileSha256(file)).toBe(await sha256sum(file));
  });

  it('equals sha256sum on a real ext4 image and on a small file', async () => {
    const root = path.join(dir, 'root');
    mkdirSync(path.join(root, 'etc'), { recursive: true });
    await execa('sh', ['-c', `head -c 3000000 /dev/urandom > ${root}/etc/blob && echo hi > ${root}/etc/hostname`]);
    const image = path.join(dir, 'disk.raw');
    await execa('mkfs.ext4', ['-q', '-F', '-d', root, image, '256m']);
    expect(await dataRanges(image)).toBeDefined();
    expect(await fileSha256(image)).toBe(await sha256sum(image));
    expect(await fileSha256(path.join(root, 'etc', 'hostname'))).toBe(await sha256sum(path.join(root, 'etc', 'hostname')));
  });

  it('hashes a large file in a worker thread (as built), leaving the calling thread free', async () => {
    // The sources cannot be loaded into a worker: this is the module the CLI runs.
    const built = (await import(pathToFileURL(path.join(repoRoot, 'dist', 'src', 'build', 'sparse-hash.js')).href)) as typeof import('../../src/build/sparse-hash.js');
    const file = path.join(dir, 'large.img');
    const fd = openSync(file, 'w');
    writeSync(fd, Buffer.alloc(4 << 20, 7), 0, 4 << 20, 100 * 2 ** 20);
    closeSync(fd);
    await execa('truncate', ['-s', String(384 * 2 ** 20), file]);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const started = Date.now();
    const sum = await built.fileSha256(file);
    const ms = Date.now() - started;
    clearInterval(timer);
    expect(sum).toBe(await sha256sum(file));
    // Hashing 384 MB in this thread would hold it for the whole time; here it ticks throughout.
    expect(ticks).toBeGreaterThan(ms / 10 / 2);
    await expect(built.fileSha256(path.join(dir, 'missing.img'))).rejects.toThrow(/ENOENT/);
  });
});

