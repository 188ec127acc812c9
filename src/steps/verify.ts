// verify: a check of the built image (its facts, checksums, manifest, or a
// boot), done by `imgc build` / `imgc verify`, not by a target's phase scripts.
import { z } from '../util/zod.js';
import { stepBase } from '../core/fields.js';
import type { StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('verify'),
    check: z.enum(['facts', 'checksums', 'manifest', 'boot']),
    /** boot: the bootable disk artifact to boot (default: the first bootable one). */
    disk: z.string().min(1).optional(),
    /** boot: seconds to wait for the booted node's checks (default 600). */
    timeoutSeconds: z.number().int().positive().optional(),
  })
  .strict();
type VerifyStep = z.infer<typeof schema>;

export const verify = {
  kind: 'verify',
  schema,
  /** `boot` may name its disk (else the bootable one) and a timeout. */
  make: (check: VerifyStep['check'], opts: { disk?: string; timeoutSeconds?: number } = {}): StepInput<VerifyStep> => ({
    kind: 'verify',
    check,
    ...(opts.disk ? { disk: opts.disk } : {}),
    ...(opts.timeoutSeconds ? { timeoutSeconds: opts.timeoutSeconds } : {}),
    ...(opts.disk ? { requires: [fact('artifact', opts.disk)] } : {}),
  }),
  describe: (s) => `verify ${s.check}`,
  comment: (s) => `verify ${s.check}`,
  inRoot: false,
  phaseKind: 'verify',
  doneBy: 'build',

  shell: { elsewhere: () => 'imgc build / imgc verify checks the image' },
  ansible: { elsewhere: (s) => `${s.check} (imgc build / imgc verify)` },
  cloudInit: { elsewhere: () => 'imgc build / imgc verify checks the image' },

  runtime: () => ({ creations: [] }),
  verify: {},
} as const satisfies StepKind<VerifyStep>;
