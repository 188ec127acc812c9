// upgrade: the installed packages brought to the newest versions of the apt
// sources (`apt-get upgrade`, or `dist-upgrade` when dependencies may change)
// — image-builder's setup role dist-upgrades before its installs. Held
// packages stay where they are (apt skips them both ways).
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { stepBase } from '../core/fields.js';
import { isInstalled } from '../core/root.js';
import { bool, int, word } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import type { StepInput, StepKind } from './kind.js';

const schema = z.object({ ...stepBase, kind: z.literal('upgrade'), dist: z.boolean() }).strict();
type UpgradeStep = z.infer<typeof schema>;

/** apt-get's command for the step. */
const command = (s: UpgradeStep): string => (s.dist ? 'dist-upgrade' : 'upgrade');

export const upgrade = {
  kind: 'upgrade',
  schema,
  make: (opts: { dist?: boolean } = {}): StepInput<UpgradeStep> => ({ kind: 'upgrade', dist: opts.dist ?? false, requires: [fact('command', 'apt-get')] }),
  onBase: (family) => (family === 'apt' ? undefined : `an upgrade is written for apt (apt-get upgrade/dist-upgrade); a ${family} base has no such step yet`),

  describe: (s) => `${command(s)} of the installed packages`,
  comment: (s) => `apt-get ${command(s)}: installed packages at the newest versions of the sources`,
  touches: () => ({ packageManager: true }),
  inRoot: true,
  chroot: { mounts: () => true, network: () => true },

  shell: (s) => shellLine(`imgc_apt_upgrade ${command(s)}`, 'aptUpgrade'),
  ansible: (s, ctx) => {
    // Fresh lists whatever came before: an upgrade to stale lists does nothing.
    ctx.refresh = false;
    return [
      task({
        name: stepTaskName(s.dist ? 'Upgrade the installed packages (dist-upgrade)' : 'Upgrade the installed packages', s),
        module: 'ansible.builtin.apt',
        comments: [s.dist ? 'apt-get dist-upgrade: dependencies may be added or removed; held packages stay.' : 'apt-get upgrade --with-new-pkgs: nothing is removed; held packages stay.'],
        args: map({ upgrade: word(s.dist ? 'dist' : 'safe'), update_cache: bool(true), force_apt_get: bool(true), install_recommends: bool(false), policy_rc_d: int(101) }),
      }),
    ];
  },
  cloudInit: {
    run: (s) => [call([fn('aptUpgrade'), command(s)], 'aptUpgrade')],
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
