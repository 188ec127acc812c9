// Reading a GPT disk image's partition table (sfdisk --json, no loop device):
// verify and a probe read the root partition of a disk the build wrote.
import { capture } from './exec.js';
import { arches, archInfo, type Arch } from '../core/arch.js';

export const SECTOR = 512;

export const GPT_TYPE = {
  esp: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  /** The Discoverable Partitions Specification's root of each architecture. */
  root: (arch: Arch): string => archInfo[arch].gptRoot,
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
  const roots = new Set<string>(arches.map(GPT_TYPE.root));
  const rootPart = parts.find((p) => roots.has(p.type.toUpperCase())) ?? parts.find((p) => p.type.toUpperCase() !== GPT_TYPE.esp);
  return rootPart ? rootPart.start * (table.partitiontable?.sectorsize ?? SECTOR) : undefined;
};
