// Reading a GPT disk image's partition table (sfdisk --json, no loop device):
// verify and a probe read the root partition of a disk the build wrote.
import { capture } from './exec.js';

export const SECTOR = 512;

export const GPT_TYPE = {
  esp: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  /** The Discoverable Partitions Specification's root (x86-64). */
  root: '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
} as const;

/** Where the root partition of a GPT disk image starts (bytes), or undefined when the file has no partition table. */
export const rootPartitionOffset = async (file: string): Promise<number | undefined> => {
  let table: { partitiontable?: { sectorsize?: number; partitions?: Array<{ start: number; type: string }> } };
  try {
    table = JSON.parse(await capture('sfdisk', ['--json', file])) as typeof table;
  } catch {
    return undefined;
  }
  const parts = table.partitiontable?.partitions ?? [];
  const rootPart = parts.find((p) => p.type.toUpperCase() === GPT_TYPE.root) ?? parts.find((p) => p.type.toUpperCase() !== GPT_TYPE.esp);
  return rootPart ? rootPart.start * (table.partitiontable?.sectorsize ?? SECTOR) : undefined;
};
