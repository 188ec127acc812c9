// hold: installed packages held at their version (`apt-mark hold`), so an
// upgrade on the node cannot move them — image-builder holds kubelet, kubeadm,
// kubectl and, in sysprep, every package of the image. Or released again.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { PackageName, stepBase } from '../core/fields.js';
import { task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import { packageManagers } from './package-managers.js';
import type { StepInput, StepKind } from './kind.js';

const schema = z.object({ ...stepBase, kind: z.literal('hold'), names: z.array(PackageName).min(1), held: z.boolean() }).strict();
type HoldStep = z.infer<typeof schema>;

const verb = (s: HoldStep) => (s.held ? 'hold' : 'unhold');
const list = (s: HoldStep) => s.names.join(', ');
const aptOnly = { refuse: 'package holds are written for apt (apt-mark, dpkg selections) only', hint: 'use a Debian or Ubuntu base, or pin the version in the package spec' } as const;

export const hold = {
  kind: 'hold',
  schema,
  /** A held package must be installed first; apt-mark does it. */
  make: (names: readonly string[], held: boolean): StepInput<HoldStep> => ({
    kind: 'hold',
    names: [...names],
    held,
    requires: [...names.map((n) => fact('package', n)), fact('command', 'apt-mark')],
  }),

  describe: (s) => `${verb(s)} of ${s.names.map((n) => `'${n}'`).join(', ')}`,
  comment: (s) => `${s.held ? 'hold' : 'release'} ${list(s)} at ${s.held ? 'its' : 'any'} version`,
  inRoot: true,

  shell: (s, ctx) => ctx.pm.hold(s.names, s.held),
  ansible: (s, ctx) => {
    const hold = packageManagers[ctx.base.packageManager].ansible.hold;
    return hold ? s.names.map((n) => task({ name: stepTaskName(`${s.held ? 'Hold' : 'Release'} ${n}`, s), ...hold(n, s.held) })) : aptOnly;
  },
  cloudInit: {
    run: (s, ctx) => [ctx.packageManager().hold(s.names, s.held)],
  },
  packer: { comment: (s) => `${verb(s)} ${list(s)}` },

  runtime: () => ({ creations: [], kept: 'a hold goes with its package: decommission purges what it installed, and a package it did not install keeps its selection' }),

  verify: {
    root: (s) =>
      s.names.map((n) => ({
        subject: `hold:${n}`,
        what: `package '${n}' ${s.held ? 'held' : 'not held'}`,
        check: (r) => {
          const st = r.dpkg.get(n);
          if (st === undefined) return `no entry for ${n} in /var/lib/dpkg/status`;
          return st.startsWith('hold ') === s.held ? undefined : `dpkg status of ${n} is '${st}'`;
        },
      })),
  },
} as const satisfies StepKind<HoldStep> & { make(names: readonly string[], held: boolean): StepInput<HoldStep> };
