// artifact: an output of the build made from the finished root (a directory,
// a tarball, a filesystem or disk image). `imgc build` makes it; no target's
// phase scripts do.
import { z } from '../util/zod.js';
import { stepBase } from '../core/fields.js';
import { labelText } from '../emit/ansible/names.js';
import { fact } from '../core/facts.js';
import type { MakeContext, StepInput, StepKind } from './kind.js';
import { bootFiles } from '../core/boot.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('artifact'),
    /** `ext4`: a bare filesystem image; `raw`/`qcow2`: a disk (a bare ext4 filesystem unless `bootable`). */
    format: z.enum(['dir', 'tar', 'ext4', 'raw', 'qcow2']),
    /** File or directory name, relative to the build's output directory. */
    output: z.string().min(1),
    compression: z.enum(['none', 'gzip', 'zstd']).optional(),
    /** Disk size for ext4/raw/qcow2, e.g. "4G". */
    size: z.string().regex(/^\d+[MG]$/).optional(),
    /** raw/qcow2: a GPT disk with an EFI system partition (systemd-boot, the root's kernel) and the root partition. */
    bootable: z.boolean().optional(),
  })
  .strict();
type ArtifactStep = z.infer<typeof schema>;

/** The builder's options of an artifact; what is not given takes the format's default. */
export interface ArtifactOptions {
  compression?: 'none' | 'gzip' | 'zstd';
  size?: `${number}${'M' | 'G'}`;
  bootable?: boolean;
}

/** The fields a format has, with their defaults: a tarball's compression follows its name, a filesystem or disk is 4G. */
const formatFields = (format: ArtifactStep['format'], output: string, o: ArtifactOptions): Pick<ArtifactStep, 'compression' | 'size' | 'bootable'> => {
  if (format === 'tar') return { compression: o.compression ?? (output.endsWith('.gz') ? 'gzip' : output.endsWith('.tar') ? 'none' : 'zstd') };
  if (format === 'dir') return {};
  return { size: o.size ?? '4G', ...(format !== 'ext4' && o.bootable ? { bootable: true } : {}) };
};

export const artifact = {
  kind: 'artifact',
  schema,
  make: ({ arch }: MakeContext, format: ArtifactStep['format'], output: string, opts: ArtifactOptions = {}): StepInput<ArtifactStep> => {
    const fields = formatFields(format, output, opts);
    // A bootable disk is made from the root's kernel, initramfs and systemd-boot: the checker proves a step installed them.
    const requires = fields.bootable ? Object.values(bootFiles(arch)).map((p) => fact('path', p)) : [];
    return { kind: 'artifact', format, output, ...fields, provides: [fact('artifact', output)], requires };
  },
  describe: (s) => `${s.format} artifact '${s.output}'`,
  comment: (s) => `${s.format} artifact ${s.output}`,
  inRoot: false,
  creates: (s) => [`artifact:${s.output}`],
  phaseKind: 'artifact',
  doneBy: 'build',

  shell: { elsewhere: () => 'imgc build makes artifacts' },
  ansible: { elsewhere: (s) => `${s.format} ${labelText(s.output)} (imgc build)` },
  cloudInit: { elsewhere: () => 'imgc build makes artifacts' },
  packer: { comment: (s) => `${s.format} ${s.output}` },

  runtime: () => ({ creations: [] }),
  verify: {},
} as const satisfies StepKind<ArtifactStep>;
