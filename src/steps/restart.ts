// restart: starts or restarts a service now. That means something only on a
// live host: the runtime outputs (--runtime) and cloud-init's first boot. An
// image build has no running systemd (a chroot) or throws away what runs
// (Packer's VM): the shell and ansible image outputs and Packer refuse it
// with IMGC2002, and a unit file or drop-in takes effect at the node's boot.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { stepBase, UnitName } from '../core/fields.js';
import { word } from '../emit/shell/quote.js';
import { str, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import { unitName } from '../core/root.js';
import type { Refusal, StepInput, StepKind } from './kind.js';

const schema = z.object({ ...stepBase, kind: z.literal('restart'), name: UnitName, action: z.enum(['start', 'restart']) }).strict();
type RestartStep = z.infer<typeof schema>;

const imageBuild = (s: RestartStep): Refusal => ({
  refuse: `an image build runs no services (a chroot has no running systemd; Packer's VM is thrown away), so '${s.action}' of ${unitName(s.name)} would do nothing for the image`,
  hint: `enable the service (enableService('${s.name}')) so that it starts at boot, or put the ${s.action} in a runtime phase and compile with --runtime for live hosts`,
});

export const restart = {
  kind: 'restart',
  schema,
  make: (name: string, action: 'start' | 'restart'): StepInput<RestartStep> => ({ kind: 'restart', name, action, requires: [fact('service', name), fact('command', 'systemctl')] }),

  describe: (s) => `${s.action} of service '${s.name}'`,
  comment: (s) => `${s.action} ${unitName(s.name)} now (live hosts only)`,
  inRoot: true,

  shellHelpers: {
    serviceNow: {
      deps: [],
      code: [
        '# imgc_service_now start|restart UNIT: on a live host, starts UNIT unless it is',
        '# active, or restarts it.',
        'imgc_service_now() {',
        '  if [ "$1" = start ] && systemctl is-active --quiet "$2"; then',
        '    return 0',
        '  fi',
        '  systemctl "$1" "$2"',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s, ctx) => (ctx.liveHost ? shellLine(`imgc_service_now ${s.action} ${word(unitName(s.name))}`, 'serviceNow') : imageBuild(s)),
  ansible: (s, ctx) =>
    ctx.liveHost
      ? [
          task({
            name: stepTaskName(`${s.action === 'start' ? 'Start' : 'Restart'} ${labelText(unitName(s.name))}`, s),
            module: 'ansible.builtin.systemd_service',
            args: map({ name: unsafe(unitName(s.name)), state: str(s.action === 'start' ? 'started' : 'restarted') }),
          }),
        ]
      : imageBuild(s),
  // cloud-init runs on the booting machine itself: systemd is up.
  cloudInit: {
    run: (s) => [call([fn('serviceNow'), s.action, unitName(s.name)], 'serviceNow')],
  },

  runtime: (s) => ({ creations: [], kept: `a ${s.action} is not undone` }),

  verify: {
    boot: (s) => [
      {
        subject: `service:${s.name}`,
        what: `service '${s.name}' active`,
        script: `st=$(systemctl is-active ${word(unitName(s.name))}) || { echo "is $st, not active"; exit 1; }`,
      },
    ],
  },
} as const satisfies StepKind<RestartStep> & { make(name: string, action: 'start' | 'restart'): StepInput<RestartStep> };
