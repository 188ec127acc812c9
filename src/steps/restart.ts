// restart: starts, restarts or stops a service now. That needs a running
// init: Packer's VM (the build boots the machine it changes, e.g. to start
// containerd and pull images into it), a live host (--runtime) and cloud-init's
// first boot. A chroot build has none: the shell and ansible image outputs
// refuse it with IMGC2002. What runs at the node's boot is enableService's
// fact; a start or stop is an action of the moment, so verify checks nothing.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { stepBase, UnitName } from '../core/fields.js';
import { word } from '../emit/shell/quote.js';
import { bool, str, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import { unitName } from '../core/root.js';
import type { Refusal, StepInput, StepKind } from './kind.js';

const schema = z.object({ ...stepBase, kind: z.literal('restart'), name: UnitName, action: z.enum(['start', 'restart', 'stop']) }).strict();
type RestartStep = z.infer<typeof schema>;

const chroot = (s: RestartStep): Refusal => ({
  refuse: `a chroot build has no running init (systemd is not PID 1 in a chroot), so nothing can ${s.action} ${unitName(s.name)}`,
  hint: `build with --target packer (its VM boots the image, and the service runs there), or compile the phase with --runtime for live hosts; for the node's boot, enableService('${s.name}')`,
});

/** Whether the output's steps run where an init runs: a live host or Packer's VM. */
const running = (ctx: { readonly liveHost?: boolean; readonly booted?: boolean }): boolean => ctx.liveHost === true || ctx.booted === true;

const ansibleState = { start: 'started', restart: 'restarted', stop: 'stopped' } as const;
const verb = { start: 'Start', restart: 'Restart', stop: 'Stop' } as const;

export const restart = {
  kind: 'restart',
  schema,
  make: (name: string, action: RestartStep['action']): StepInput<RestartStep> => ({ kind: 'restart', name, action, requires: [fact('service', name), fact('command', 'systemctl')] }),

  describe: (s) => `${s.action} of service '${s.name}'`,
  comment: (s) => `${s.action} ${unitName(s.name)} now (where an init runs)`,
  inRoot: true,
  needsMachine: true,

  shellHelpers: {
    serviceNow: {
      deps: [],
      code: [
        '# imgc_service_now start|restart|stop UNIT: where init runs, starts UNIT unless it is',
        '# active, restarts it, or stops it if it is active; a unit file changed on disk is',
        '# loaded first (systemd would run the old one).',
        'imgc_service_now() {',
        '  if [ "$(systemctl show -p NeedDaemonReload --value "$2" 2>/dev/null)" = yes ]; then',
        '    systemctl daemon-reload',
        '  fi',
        '  case $1 in',
        '    start) if systemctl is-active --quiet "$2"; then return 0; fi ;;',
        '    stop) if ! systemctl is-active --quiet "$2"; then return 0; fi ;;',
        '  esac',
        '  systemctl "$1" "$2"',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s, ctx) => (running(ctx) ? shellLine(`imgc_service_now ${s.action} ${word(unitName(s.name))}`, 'serviceNow') : chroot(s)),
  ansible: (s, ctx) =>
    running(ctx)
      ? [
          task({
            name: stepTaskName(`${verb[s.action]} ${labelText(unitName(s.name))}`, s),
            module: 'ansible.builtin.systemd_service',
            args: map({ name: unsafe(unitName(s.name)), state: str(ansibleState[s.action]), ...(s.action === 'stop' ? {} : { daemon_reload: bool(true) }) }),
          }),
        ]
      : chroot(s),
  // cloud-init runs on the booting machine itself: systemd is up.
  cloudInit: {
    run: (s) => [call([fn('serviceNow'), s.action, unitName(s.name)], 'serviceNow')],
  },

  runtime: (s) => ({ creations: [], kept: `a ${s.action} is not undone` }),

  verify: {},
} as const satisfies StepKind<RestartStep> & { make(name: string, action: RestartStep['action']): StepInput<RestartStep> };
