// runtime.yml's live-host handlers (../handlers.ts says which change notifies
// which): Ansible handlers, notified by the tasks of a step that changed
// something, run once at the end of the phase's play in a fixed order. The
// play variable imgc_handlers (auto, always, never; `-e imgc_handlers=…`)
// says where they run, as IMGC_HANDLERS does for provision.sh: auto on a
// booted systemd host only (not a chroot), always wherever the play runs.
import type { Image, Phase } from '../../ir/schema.js';
import { handlerCommand, handlerName, needsSystemd, phaseHandlers, type Handler, type PhaseHandlers } from '../handlers.js';
import { labelText } from '../../emit/ansible/names.js';
import { bool, str, template, unsafe, word } from '../../emit/ansible/quote.js';
import { task, type Task } from '../../emit/ansible/tasks.js';
import { entry, map, seq, type Entry } from '../../emit/ansible/yaml.js';

const quiet = [entry('changed_when', bool(false)), entry('failed_when', bool(false))];

/** The tasks at the start of a phase's play that tell where handlers may run. */
export const whereTasks = (): Task[] => [
  task({
    name: 'Handlers: chroot or booted host',
    module: 'ansible.builtin.command',
    args: map({ argv: seq([word('systemd-detect-virt'), str('--quiet'), str('--chroot')]) }),
    keywords: [entry('register', word('imgc_chroot')), ...quiet],
  }),
  task({ name: 'Handlers: is systemd running', module: 'ansible.builtin.stat', args: map({ path: word('/run/systemd/system'), get_checksum: bool(false) }), keywords: [entry('register', word('imgc_systemd'))] }),
  task({ name: 'Handlers: can this kernel load modules', module: 'ansible.builtin.stat', args: map({ path: word('/proc/modules'), get_checksum: bool(false) }), keywords: [entry('register', word('imgc_modules'))] }),
  task({
    name: 'Handlers: where they run (imgc_handlers auto, always or never)',
    module: 'ansible.builtin.set_fact',
    args: map({
      imgc_run_handlers: template("imgc_handlers == 'always' or (imgc_handlers == 'auto' and imgc_systemd.stat.exists and imgc_chroot.rc != 0)"),
      imgc_reboot_required: seq([], { flow: true }),
    }),
  }),
];

const when = (h: Handler): Entry =>
  entry('when', str(['imgc_run_handlers', ...(needsSystemd(h) ? ['imgc_systemd.stat.exists'] : []), ...(h.kind === 'modprobe' ? ['imgc_modules.stat.exists'] : [])].join(' and ')))!;

/** A handler that runs its command (../handlers.ts); it runs only when notified, so it reports a change. */
const commandTask = (h: Exclude<Handler, { kind: 'reboot' }>, name: string, why: string): Task =>
  task({
    name,
    module: 'ansible.builtin.command',
    comments: [why],
    args: map({ argv: seq(handlerCommand(h).map((a) => unsafe(a))) }),
    keywords: [entry('changed_when', bool(true)), when(h)],
  });

const handlerTask = (h: Handler): Task => {
  const name = `Handler: ${labelText(handlerName(h))}`;
  switch (h.kind) {
    case 'daemon-reload':
      return task({ name, module: 'ansible.builtin.systemd_service', args: map({ daemon_reload: bool(true) }), keywords: [when(h)] });
    case 'sysctl':
      return commandTask(h, name, 'Applies every sysctl.d file now; a handler runs only after a change.');
    case 'modprobe':
      return commandTask(h, name, 'Loads the module now (skipped where the kernel loads no modules: no /proc/modules).');
    case 'modules-load':
      return task({ name, module: 'ansible.builtin.systemd_service', args: map({ name: word('systemd-modules-load.service'), state: word('restarted') }), keywords: [when(h)] });
    case 'restart':
      return { ...commandTask(h, name, 'try-restart: restarts the unit only if it is running (systemd_service state=restarted would start a stopped one).'), noqa: ['command-instead-of-module'] };
    case 'reboot':
      return task({
        name,
        module: 'ansible.builtin.set_fact',
        comments: ['Only a reboot applies this change: noted for the summary, nothing is run.'],
        args: map({ imgc_reboot_required: template('imgc_reboot_required + [imgc_why]') }),
        keywords: [entry('vars', map({ imgc_why: unsafe(h.why) }))],
      });
  }
};

export interface AnsiblePhaseHandlers {
  readonly plan: PhaseHandlers;
  /** The notify keyword of step ID's tasks, if it notifies any handler. */
  readonly notify: (stepId: string) => Entry | undefined;
  readonly tasks: Task[];
}

export const ansiblePhaseHandlers = (ir: Image, phase: Phase): AnsiblePhaseHandlers => {
  const plan = phaseHandlers(ir, phase);
  const names = plan.handlers.map((h) => labelText(handlerName(h)));
  return {
    plan,
    notify: (id) => {
      const hs = plan.notifies.get(id);
      return hs?.length ? entry('notify', seq(hs.map((i) => unsafe(names[i]!)))) : undefined;
    },
    // Notified by topic (listen): a task's name may be shortened to fit a line, its topic never is.
    tasks: plan.handlers.map((h, i) => {
      const t = handlerTask(h);
      return { ...t, keywords: [...(t.keywords ?? []), entry('listen', unsafe(names[i]!))] };
    }),
  };
};
