// swapOff: turns swap off for good, as the kubelet requires — the swap entries
// of /etc/fstab are commented out. Nothing is switched off while building: in
// a chroot `swapoff -a` would act on the build machine.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { activeSwapLines } from '../core/root.js';
import { stepBase } from '../core/fields.js';
import { str, word } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import type { StepInput, StepKind } from './kind.js';

const FSTAB = '/etc/fstab';

const schema = z.object({ ...stepBase, kind: z.literal('swapOff') }).strict();
type SwapOffStep = z.infer<typeof schema>;

export const swapOff = {
  kind: 'swapOff',
  schema,
  make: (): StepInput<SwapOffStep> => ({ kind: 'swapOff', requires: [fact('path', FSTAB)] }),

  describe: () => 'swap off',
  comment: () => 'swap off (swap entries of /etc/fstab commented out)',
  touches: () => ({ changes: [fact('path', FSTAB)], writesFiles: true }),
  inRoot: true,

  shell: () => ({ lines: [`imgc_swapoff ${FSTAB}`], helpers: ['swapoff'] }),
  ansible: (s) => [
    task({
      name: stepTaskName(`Swap off: comment out swap entries in ${FSTAB}`, s),
      module: 'ansible.builtin.replace',
      comments: ['Only /etc/fstab: in a chroot `swapoff -a` would act on the build machine; a live host drops swap at its next boot.'],
      args: map({
        path: word(FSTAB),
        regexp: str('^([ \\t]*[^#\\s][^ \\t]*[ \\t]+[^ \\t]+[ \\t]+swap(?:[ \\t].*)?)$'),
        replace: str('# \\g<1>'),
      }),
    }),
  ],
  cloudInit: {
    run: () => [{ argv: [fn('swapoff'), FSTAB], helpers: ['swapoff'] }],
    comment: () => 'swap off (swap entries of /etc/fstab commented out, swapoff -a)',
  },
  packer: { comment: () => 'swap off' },

  runtime: () => ({ creations: [], kept: 'commented-out swap entries stay commented out' }),

  verify: {
    root: () => [
      {
        subject: 'swapOff',
        what: 'swap off',
        check: (r) => {
          const active = activeSwapLines(r.view);
          return active.length ? `${FSTAB} still activates swap: ${active.join(' | ')}` : undefined;
        },
      },
    ],
    boot: () => [{ subject: 'swapOff', what: 'swap off', script: `a=$(tail -n +2 /proc/swaps)\n[ -z "$a" ] || { echo "swap is on: $(echo "$a" | tr '\\n' ' ')"; exit 1; }` }],
  },
} as const satisfies StepKind<SwapOffStep> & { make(): StepInput<SwapOffStep> };
