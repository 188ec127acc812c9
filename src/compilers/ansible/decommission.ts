// --decommission: decommission.yml, the inverse of the runtime phases on hosts
// runtime.yml provisioned. It reads the host's record (../runtime.ts) and
// undoes only what it lists, in reverse order, then removes the record.
import { blockMarkers } from '../../core/creations.js';
import type { Image, Phase, Step } from '../../ir/schema.js';
import { decommissionPhase } from '../../ir/phases.js';
import { hookTasks } from './hooks.js';
import { drainPlan, keptEffects, runtimePlan, undoOrder, type Creation } from '../runtime.js';
import type { CompiledFiles, CompileOptions } from '../types.js';
import { fleetKeywords, safePhase } from './fleet.js';
import { summaryCallback } from './summary-callback.js';
import { ansibleCfg, groupVars } from './files.js';
import { labelName, labelText, taskName } from '../../emit/ansible/names.js';
import { packageManagers } from '../../steps/package-managers.js';
import { bool, label, str, template, unsafe, word } from '../../emit/ansible/quote.js';
import { hostPlayVars, lineRegexp, livePhaseTasks, moduleBindingCheck, probeCommand, recorded, usesPackageModule } from './runtime.js';
import { guardedBlock } from './hooks.js';
import { withCarried } from '../carried.js';
import { task, taskItem, type Task } from '../../emit/ansible/tasks.js';
import { document, entry, map, seq, type Item } from '../../emit/ansible/yaml.js';

const when = (expr: string) => entry('when', str(expr));

const undoTasks = (c: Creation, step: Step, ir: Image, n: number): Task[] => {
  const name = (what: string) => taskName(`Undo: ${what}`, step.id, step.loc);
  const rec = recorded(c.token);
  switch (c.kind) {
    case 'service':
      return [
        task({
          name: name(`stop ${labelText(c.unit)} (booted hosts only, not a chroot)`),
          module: 'ansible.builtin.systemd_service',
          args: map({ name: unsafe(c.unit), state: word('stopped') }),
          keywords: [when(`${rec} and imgc_live`)],
        }),
        task({
          name: name(`disable ${labelText(c.unit)}`),
          module: 'ansible.builtin.systemd_service',
          args: map({ name: unsafe(c.unit), enabled: bool(false) }),
          keywords: [when(rec)],
        }),
      ];
    case 'package': {
      const pm = packageManagers[ir.base.packageManager].ansible;
      return [
        task({
          name: name(`purge ${labelText(c.name)}`),
          module: pm.module,
          args: pm.purge([c.name]),
          keywords: [when(rec)],
        }),
      ];
    }
    case 'path':
      if (c.type === 'directory')
        return [
          probeCommand(name(`remove directory ${labelText(c.path)} when empty`), [word('rmdir'), str('--ignore-fail-on-non-empty'), str('--'), unsafe(c.path)], `imgc_un_${n}`, [
            'Only an empty directory goes (file state=absent would remove what others put in it).',
          ], ['deprecated-command-syntax']),
        ].map((t) => ({ ...t, keywords: [...(t.keywords ?? []), when(rec)] }));
      if (c.type === 'lineFile')
        return [
          task({ name: name(`look at ${labelText(c.path)}`), module: 'ansible.builtin.stat', args: map({ path: unsafe(c.path), get_checksum: bool(false) }), keywords: [entry('register', word(`imgc_un_${n}`)), when(rec)] }),
          task({
            name: name(`remove ${labelText(c.path)} when no line is left`),
            module: 'ansible.builtin.file',
            args: map({ path: unsafe(c.path), state: word('absent') }),
            keywords: [when(`${rec} and imgc_un_${n}.stat.exists and imgc_un_${n}.stat.size == 0`)],
          }),
        ];
      return [task({ name: name(`remove ${labelText(c.path)}`), module: 'ansible.builtin.file', args: map({ path: unsafe(c.path), state: word('absent') }), keywords: [when(rec)] })];
    case 'line':
      return [
        task({
          name: name(`remove the line ${labelText(c.key)} of ${labelText(c.file)}`),
          module: 'ansible.builtin.lineinfile',
          args: map({ path: unsafe(c.file), regexp: unsafe(lineRegexp(c)), state: word('absent') }),
          keywords: [when(rec)],
        }),
      ];
    case 'block':
      return [
        task({
          name: name(`remove the block ${labelText(blockMarkers(c)[0])} of ${labelText(c.file)}`),
          module: 'ansible.builtin.blockinfile',
          args: map({ path: unsafe(c.file), marker: unsafe(c.marker), state: word('absent') }),
          keywords: [when(rec)],
        }),
      ];
    case 'user':
      return [
        task({
          name: name(`delete user ${labelText(c.name)}${c.home ? ' (and the home it made)' : ''}`),
          module: 'ansible.builtin.user',
          args: map({ name: unsafe(c.name), state: word('absent'), remove: c.home ? template(recorded(c.home.token)) : undefined }),
          keywords: [when(rec)],
        }),
      ];
    case 'group':
      return [task({ name: name(`delete group ${labelText(c.name)}`), module: 'ansible.builtin.group', args: map({ name: unsafe(c.name), state: word('absent') }), keywords: [when(rec)] })];
  }
};

/** The decommission edge's pre hooks, the undo in a block whose rescue fires its post hooks with result failed, then its post hooks. */
const withEdgeHooks = (edge: Phase | undefined, tasks: readonly Task[]): Item[] =>
  edge
    ? [...edge.pre.flatMap((h) => hookTasks(h, edge.name, { onHosts: true })).map(taskItem), guardedBlock(edge, tasks, true), ...edge.post.flatMap((h) => hookTasks(h, edge.name, { onHosts: true })).map(taskItem)]
    : tasks.map(taskItem);

export const ansibleDecommission = (ir: Image, opts: CompileOptions = {}): CompiledFiles => {
  const plan = runtimePlan(ir);
  const tasks: Task[] = [
    task({
      name: 'Decommission: read the record of what provisioning created',
      module: 'ansible.builtin.slurp',
      args: map({ src: template('imgc_record_file') }),
      keywords: [entry('register', word('imgc_record')), entry('failed_when', bool(false))],
    }),
    task({
      name: 'Decommission: the recorded tokens',
      module: 'ansible.builtin.set_fact',
      args: map({ imgc_created: template("(imgc_record.content | default('') | b64decode).splitlines()") }),
    }),
    task({
      name: 'Decommission: nothing recorded, nothing to undo',
      module: 'ansible.builtin.debug',
      args: map({ msg: template("'imgc: no record at ' ~ imgc_record_file ~ ': nothing to undo'") }),
      keywords: [when('imgc_created | length == 0')],
    }),
    probeCommand('Decommission: chroot or booted host', [word('systemd-detect-virt'), str('--quiet'), str('--chroot')], 'imgc_chroot'),
    task({ name: 'Decommission: is systemd running', module: 'ansible.builtin.stat', args: map({ path: word('/run/systemd/system'), get_checksum: bool(false) }), keywords: [entry('register', word('imgc_systemd'))] }),
    task({ name: 'Decommission: stop services only on a booted host', module: 'ansible.builtin.set_fact', args: map({ imgc_live: template('imgc_systemd.stat.exists and imgc_chroot.rc != 0') }) }),
  ];
  const order = undoOrder(plan);
  let purged: string[] = [];
  order.forEach(({ step, creation }, i) => {
    if (creation.kind === 'package') purged.push(creation.token);
    tasks.push(...undoTasks(creation, step, ir, i + 1));
    const next = order[i + 1];
    if (purged.length && (next === undefined || next.creation.kind !== 'package' || next.step.id !== step.id)) {
      const { module, autoremove } = packageManagers[ir.base.packageManager].ansible;
      if (autoremove)
        tasks.push(
          task({
            name: taskName('Undo: autoremove what only the purged packages needed', step.id, step.loc),
            module,
            args: autoremove,
            // The tokens (each checked by recorded() in its undo task above) as a list, one a line: an "or" of each outgrows ansible-lint's line length.
            keywords: [entry('vars', map({ imgc_purged: seq(purged.map((t) => str(t))) })), when('imgc_purged | intersect(imgc_created) | length > 0')],
          }),
        );
      purged = [];
    }
  });
  tasks.push(
    task({ name: 'Decommission: remove the record', module: 'ansible.builtin.file', args: map({ path: unsafe(plan.recordFile), state: word('absent') }) }),
    ...[plan.recordDir, plan.recordDir.replace(/\/[^/]+$/, '')].map((d, i) =>
      ({
        ...probeCommand(`Decommission: remove ${labelText(d)} when empty`, [word('rmdir'), str('--ignore-fail-on-non-empty'), str('--'), unsafe(d)], `imgc_rd_${i}`, ['Only when empty (file state=absent would remove it whatever it holds).'], ['deprecated-command-syntax']),
      }),
    ),
    // Read by the summary (callback_plugins/imgc_summary.py): this host got through the undo.
    task({
      name: 'Decommission: done on this host',
      module: 'ansible.builtin.set_fact',
      args: map({ imgc_decommissioned: template("'nothing recorded' if imgc_created | length == 0 else 'undone ' ~ (imgc_created | length) ~ ' recorded'") }),
    }),
  );
  const kept = keptEffects(plan);
  // The drain phase first, as runtime.yml runs a phase: a host whose drain fails stops there, nothing undone.
  const drain = drainPlan(ir);
  const drained = drain ? livePhaseTasks(ir, plan, drain, { n: 0 }) : { tasks: [], handlers: [], needsBinding: false };
  // The package module (the purges, a drain step) needs its binding (apt: python3-apt): a host without it stops
  // before the drain, or (when only the purges need it) once its record says there is something to undo; with
  // nothing changed.
  const pm = ir.base.packageManager;
  const binding = moduleBindingCheck(pm, 'imgc_dc_apt', 'Decommission');
  const bindingTasks = (onlyWithRecord: boolean): Task[] =>
    binding
      ? [
          ...binding.tasks,
          task({
            name: `Decommission: stop when ${binding.name} is missing (nothing was changed)`,
            module: 'ansible.builtin.fail',
            args: map({ msg: str(`imgc: decommission: missing ${binding.label}; nothing was changed`) }),
            keywords: [when(`${onlyWithRecord ? 'imgc_created | length > 0 and ' : ''}not (${binding.holds})`)],
          }),
        ]
      : [];
  const first: Task[] = drained.needsBinding ? bindingTasks(false) : [];
  // After 'the recorded tokens' (tasks[1]).
  if (!drained.needsBinding && usesPackageModule(tasks, pm)) tasks.splice(2, 0, ...bindingTasks(true));
  const play = map({
    name: label(labelName(`Decommission ${labelText(ir.name)}`)),
    hosts: word('all'),
    gather_facts: bool(false),
    ...fleetKeywords(ir, opts),
    vars: map({ ...hostPlayVars, imgc_record_file: unsafe(plan.recordFile), ...(drained.handlers.length ? { imgc_handlers: word('auto') } : {}) }),
    tasks: seq([...first.map(taskItem), ...drained.tasks, ...withEdgeHooks(decommissionPhase(ir), tasks)], { spaced: true }),
    handlers: drained.handlers.length ? seq(drained.handlers.map(taskItem), { spaced: true }) : undefined,
  });
  const text = document(seq([{ value: play }], { spaced: true }), [
    `${ir.name}: decommission, the inverse of the runtime phases (${plan.phases.map((p) => p.phase.name).join(', ') || 'none'}), written by imgc`,
    `from ${labelText(ir.source)} (imgc compile --target ansible --decommission); edit the definition, not this file.`,
    '',
    '  ansible-playbook -i inventory decommission.yml',
    '',
    ...(drain
      ? [
          'First the drain phase, as runtime.yml runs a phase (its steps are not recorded, and not',
          'undone); a host whose drain fails stops there, with nothing undone.',
        ]
      : []),
    `Undoes only what runtime.yml recorded in ${plan.recordFile} (one token a line, written`,
    'when a step itself created the thing on that host), in reverse order, then removes the',
    'record: services disabled (stopped on booted hosts), packages purged then autoremoved,',
    'files and links removed, directories only when empty, users (with the home they made)',
    'and groups deleted, sysctl/module lines deleted (their file when empty and created).',
    'Batches: serial and max_fail_percentage as runtime.yml\'s (-e imgc_serial=… -e imgc_max_fail=…);',
    'at the end one line per host: decommissioned, failed (where, why: its record is kept), or',
    'not reached. A host without python3-apt, where the apt module runs, stops first, unchanged.',
    'Left as they are: apt\'s lists and caches, logs,',
    ...(kept.length ? ["and these steps' effects:", ...kept.map((k) => `  ${k.step.id}: ${k.why}`)] : ['and nothing else.']),
  ]);
  // A drain step's files (an Ansible role's copy) travel beside the playbook, as runtime.yml's do.
  return withCarried(
    {
      'decommission.yml': text,
      'ansible.cfg': ansibleCfg,
      'group_vars/all.yml': groupVars(ir),
      // The same plugin as runtime.yml's: it tells the two playbooks apart.
      'callback_plugins/imgc_summary.py': summaryCallback(plan.phases.map((p) => safePhase(p.phase.name))),
    },
    drain?.phase.steps ?? [],
    'ansible',
  );
};
