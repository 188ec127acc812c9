// cloudImage: a Packer source the artifact phase targets (a cloud image, an
// existing host). Only the packer target uses it (as a source block).
import { z } from '../util/zod.js';
import { Name, stepBase } from '../core/fields.js';
import { labelText } from '../emit/ansible/names.js';
import type { StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('cloudImage'),
    builder: z.enum(['qemu', 'amazon-ebs', 'null']),
    name: Name,
    /** Builder-native settings; lists for the builder's list-valued ones (qemuargs: a list of argument lists; boot_command, cd_files, floppy_files). */
    settings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.array(z.array(z.string()))])),
    /** qemu: the output of a bootable raw/qcow2 artifact the VM boots from (imgc's own disk), instead of a downloaded cloud image. */
    disk: z.string().min(1).optional(),
  })
  .strict();
export type CloudImageStep = z.infer<typeof schema>;
/** One builder setting's value. */
export type CloudImageSetting = CloudImageStep['settings'][string];

export const cloudImage = {
  kind: 'cloudImage',
  schema,
  make: (builder: CloudImageStep['builder'], name: string, settings: Record<string, CloudImageSetting> = {}, opts: { disk?: string } = {}): StepInput<CloudImageStep> => ({
    kind: 'cloudImage',
    builder,
    name,
    settings: Object.fromEntries(Object.entries(settings).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    ...(opts.disk !== undefined ? { disk: opts.disk } : {}),
    provides: [fact('artifact', name)],
    ...(opts.disk !== undefined ? { requires: [fact('artifact', opts.disk)] } : {}),
  }),
  describe: (s) => `${s.builder} image '${s.name}'`,
  comment: (s) => `Packer source ${s.builder} ${s.name}`,
  inRoot: false,
  phaseKind: 'artifact',
  doneBy: 'packer',
  variables: ['settings.*'],

  shell: { elsewhere: () => 'a Packer source: the packer target makes it' },
  ansible: { elsewhere: (s) => `${s.builder} source ${labelText(s.name)} (Packer)` },
  cloudInit: { elsewhere: () => 'a Packer source: the packer target makes it' },
  packer: { comment: (s) => `${s.builder} source ${s.name}` },

  runtime: () => ({ creations: [] }),
  verify: {},
} as const satisfies StepKind<CloudImageStep>;
