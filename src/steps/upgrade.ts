// upgrade: the installed packages brought to the newest versions of the apt
// sources (`apt-get upgrade`, or `dist-upgrade` when dependencies may change)
// — image-builder's setup role dist-upgrades before its installs. Held
// packages stay where they are (apt skips them both ways).
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { stepBase } from '../core/fields.js';
import { isInstalled } from '../core/root.js';
import { task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import { aptUpgrade, packageManagers } from './package-managers.js';
import type { StepInput, StepKind } from './kind.js';

const schema = z.object({ ...stepBase, kind: z.literal('upgrade'), dist: z.boolean() }).strict();
type UpgradeStep = z.infer<typeof schema>;

const command = (s: UpgradeStep): string => aptUpgrade(s.dist);

export const upgrade = {
  kind: 'upgrade',
  schema,
  make: (opts: { dist?: boolean } = {}): StepInput<UpgradeStep> => ({ kind: 'upgrade', dist: opts.dist ?? false, requires: [fact('command', 'apt-get')] }),
  onBase: (family) => (family === 'apt' ? undefined : `an upgrade is written for apt (apt-get upgrade/dist-upgrade); a ${family} base has no such step yet`),

  describe: (s) => `${command(s)} of the installed packages`,
  comment: (s) => `apt-get ${command(s)}: installed packages at the newest versions of the sources`,
  touches: () => ({ packageManager: true }),
  inRoot: true,
  movesVersions: true,
  chroot: { mounts: () => true, network: () => true },

  shell: (s, ctx) => ctx.pm.upgrade(s.dist),
  ansible: (s, ctx) => {
    // Fresh lists whatever came before: an upgrade to stale lists does nothing.
    ctx.refresh = false;
    const pm = packageManagers[ctx.base.packageManager].ansible;
    const { args, comment } = pm.upgrade!(s.dist);
    return [task({ name: stepTaskName(s.dist ? 'Upgrade the installed packages (dist-upgrade)' : 'Upgrade the installed packages', s), module: pm.module, comments: [comment], args })];
  },
  cloudInit: {
    run: (s, ctx) => [ctx.packageManager().upgrade(s.dist)],
  },
  packer: { comment: (s) => `apt-get ${command(s)}` },

  runtime: () => ({ creations: [], kept: 'an upgrade is not undone: decommission never downgrades' }),

  verify: {
    // What an interrupted or failed upgrade leaves: packages selected but not fully installed.
    root: () => [
      {
        subject: 'upgrade',
        what: 'every selected package fully installed',
        check: (r) => {
          const broken = [...r.dpkg].filter(([, st]) => /^(install|hold) /.test(st) && !isInstalled(st)).map(([n, st]) => `${n} (${st})`);
          return broken.length ? `not fully installed: ${broken.slice(0, 5).join(', ')}${broken.length > 5 ? ', …' : ''}` : undefined;
        },
      },
    ],
  },
} as const satisfies StepKind<UpgradeStep> & { make(opts?: { dist?: boolean }): StepInput<UpgradeStep> };
