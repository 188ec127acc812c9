// Reading where a GPT disk image's root partition starts (what verify and a
// probe read a built disk by), on partition tables sfdisk writes into a file.
import { execFileSync } from 'node:child_process';
import { truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { GPT_TYPE, rootPartitionOffset } from '../../src/host/gpt.js';

const disk = (name: string, script: string | undefined): string => {
  const file = path.join(tempDir('gpt'), name);
  writeFileSync(file, '');
  truncateSync(file, 64 * 1024 * 1024);
  if (script !== undefined) execFileSync('sfdisk', ['--quiet', file], { input: script, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
  return file;
};

describe('rootPartitionOffset', () => {
  it('finds the root partition by its type, wherever it is in the table', async () => {
    const file = disk('root-second.raw', `label: gpt\nstart=2048, size=20480, type=${GPT_TYPE.esp}\nstart=22528, size=40960, type=${GPT_TYPE.root('amd64')}\n`);
    expect(await rootPartitionOffset(file)).toBe(22528 * 512);
  });

  it('takes the first partition that is not the ESP when none has the root type', async () => {
    const file = disk('linux.raw', `label: gpt\nstart=2048, size=20480, type=${GPT_TYPE.esp}\nstart=30720, size=20480, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\n`);
    expect(await rootPartitionOffset(file)).toBe(30720 * 512);
  });

  it('says undefined for a bare filesystem image (no partition table)', async () => {
    expect(await rootPartitionOffset(disk('bare.ext4', undefined))).toBeUndefined();
  });
});
