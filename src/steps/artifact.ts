// artifact: an output of the build made from the finished root (a directory,
// a tarball, a filesystem or disk image). `imgc build` makes it; no target's
// phase scripts do.
import { z } from '../util/zod.js';
import { stepBase } from '../core/fields.js';
import { labelText } from '../emit/ansible/names.js';
import type { StepKind } from './kind.js';

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

export const artifact = {
  kind: 'artifact',
  schema,
  describe: (s) => `${s.format} artifact '${s.output}'`,
  comment: (s) => `${s.format} artifact ${s.output}`,
  inRoot: false,
  phaseKind: 'artifact',

  shell: { elsewhere: () => 'imgc build makes artifacts' },
  ansible: { elsewhere: (s) => `${s.format} ${labelText(s.output)} (imgc build)` },
  cloudInit: { elsewhere: () => 'imgc build makes artifacts' },
  packer: { comment: (s) => `${s.format} ${s.output}` },

  runtime: () => ({ creations: [] }),
  verify: {},
} as const satisfies StepKind<ArtifactStep>;
