// --runtime: runtime.yml, the runtime phases for an inventory of existing
// hosts. The first play is a preflight of the host contract (../runtime.ts):
// read-only checks (changed_when: false) collected into one list, then
// ansible.builtin.fail with it, before any play changes anything. The steps
// record what they created on each host (a lineinfile of the record file),
// which decommission.yml reads.
import { blockMarkers } from '../../core/creations.js';
import { sensitiveGuard, valueChecks } from './variables.js';
import { aptSourcesPath } from '../../core/apt.js';
import type { Image, Step } from '../../ir/schema.js';
import { packageManagers } from '../../steps/package-managers.js';
import { isHook, kindOf } from '../../steps/index.js';
import { preflightLabel, runtimePlan, type ContractFact, type Creation, type RuntimePhase, type RuntimePlan } from '../runtime.js';
import type { CompiledFiles, CompileOptions } from '../types.js';
import { fleetKeywords, safePhase } from './fleet.js';
import { summaryCallback } from './summary-callback.js';
import { ansiblePhaseHandlers, whereTasks } from './handlers.js';
import { guardedBlock, hookTasks } from './hooks.js';
import { ansibleCfg, groupVars } from './files.js';
import { labelName, labelText, taskName } from '../../emit/ansible/names.js';
import { bool, label, mode, pythonRegexLiteral, str, template, unsafe, word } from '../../emit/ansible/quote.js';
import { stepTasks, type PhaseContext, type RootStep } from './steps.js';
import { withCarried } from '../carried.js';
import { task, taskItem, type Task } from '../../emit/ansible/tasks.js';
import { document, entry, map, seq, type Item, type Node } from '../../emit/ansible/yaml.js';

const quiet = [entry('changed_when', bool(false)), entry('failed_when', bool(false))];

/** A read-only command (argv form) whose result is registered as `reg`. */
export const probeCommand = (name: string, argv: Node[], reg: string, comments?: string[], noqa?: string[]): Task =>
  task({
    name,
    module: 'ansible.builtin.command',
    args: map({ argv: seq(argv) }),
    keywords: [entry('register', word(reg)), ...quiet],
    ...(comments ? { comments } : {}),
    ...(noqa ? { noqa } : {}),
  });

const statTask = (name: string, path: string, reg: string): Task =>
  task({ name, module: 'ansible.builtin.stat', args: map({ path: unsafe(path), get_checksum: bool(false) }), keywords: [entry('register', word(reg))] });


/** A check of one fact: the task(s) and the expression that is true when the fact holds. */
const check = (f: { kind: string; key: string }, reg: string, pm: Image['base']['packageManager'], what: string): { tasks: Task[]; holds: string } => {
  switch (f.kind) {
    case 'user':
    case 'group':
      return { tasks: [probeCommand(what, [word('getent'), word(f.kind === 'user' ? 'passwd' : 'group'), unsafe(f.key)], reg)], holds: `${reg}.rc == 0` };
    case 'package': {
      const { query } = packageManagers[pm].ansible;
      return { tasks: [probeCommand(what, query.argv(f.key), reg)], holds: query.installed(reg) };
    }
    case 'path':
      return { tasks: [statTask(what, f.key, reg)], holds: `${reg}.stat.exists` };
    case 'repo':
      return { tasks: [statTask(what, aptSourcesPath(f.key), reg)], holds: `${reg}.stat.exists` };
    case 'command':
      return { tasks: [commandCheck(what, f.key, reg)], holds: `${reg}.rc == 0` };
    case 'service': {
      const unit = f.key.includes('.') ? f.key : `${f.key}.service`;
      return {
        tasks: [probeCommand(what, [word('systemctl'), word('list-unit-files'), str('--no-legend'), str('--no-pager'), unsafe(unit)], reg, ['Reads unit files only: works offline and in a chroot.'], ['command-instead-of-module'])],
        holds: `${reg}.rc == 0 and ${reg}.stdout != ''`,
      };
    }
    default:
      throw new Error(`internal: no check for ${f.kind}`);
  }
};

/**
 * The check of a fact with details (a path's type, owner, group and mode, a
 * pinned package's version): the task, the expression true when the host's
 * fact is so, and what the host has instead (shown in the preflight's
 * message). The wanted values are the play's variable `want` (never part of
 * an expression).
 */
const detailCheck = (f: ContractFact, reg: string, pm: Image['base']['packageManager'], what: string, want: string): { tasks: Task[]; holds: string; has: string } | undefined => {
  const d = f.details;
  if (f.kind === 'path' && d) {
    const st = `${reg}.stat`;
    const type = `('dir' if ${st}.isdir else 'file' if ${st}.isreg else 'symlink' if ${st}.islnk else 'other')`;
    const asked = [
      d.type !== undefined && `${type} == ${want}.type`,
      d.owner !== undefined && `${st}.pw_name == ${want}.owner`,
      d.group !== undefined && `${st}.gr_name == ${want}.group`,
      d.mode !== undefined && `${st}.mode == ${want}.mode`,
    ].filter((x): x is string => typeof x === 'string');
    return {
      tasks: [statTask(what, f.key, reg)],
      holds: [`${st}.exists`, ...asked].join(' and '),
      has: `' (this host: ' ~ (('type ' ~ ${type} ~ ', owner ' ~ ${st}.pw_name ~ ', group ' ~ ${st}.gr_name ~ ', mode ' ~ ${st}.mode) if ${st}.exists else 'no such path') ~ ')'`,
    };
  }
  if (f.kind === 'package' && d?.version !== undefined) {
    const argv = packageManagers[pm].ansible.versionArgv(f.key);
    return {
      tasks: [probeCommand(what, argv, reg)],
      holds: `${reg}.rc == 0 and ${reg}.stdout == 'installed ' ~ ${want}.version`,
      has: `' (this host: ' ~ (('version ' ~ ${reg}.stdout[10:]) if ${reg}.rc == 0 and ${reg}.stdout.startswith('installed ') else 'not installed') ~ ')'`,
    };
  }
  return undefined;
};

/**
 * A package module with a binding (apt's needs python3-apt) installs it on its
 * own when it is missing: a change no record holds, which decommission would
 * leave. So a playbook that uses the module asks for it first, as it asks for
 * python3, and changes nothing on a host without it.
 */
export interface ModuleBinding {
  readonly name: string;
  /** The check's task and the expression true when it is installed. */
  readonly tasks: Task[];
  readonly holds: string;
  readonly label: string;
}

/** Whether any of the tasks calls the base's package module (so the host needs its binding). */
export const usesPackageModule = (tasks: readonly Task[], pm: Image['base']['packageManager']): boolean =>
  tasks.some((t) => t.module === packageManagers[pm].ansible.module);

/** The check of the package module's binding, when it has one; its task is named after `play` (Preflight, Decommission). */
export const moduleBindingCheck = (pm: Image['base']['packageManager'], reg: string, play: string): ModuleBinding | undefined => {
  const { binding, module } = packageManagers[pm].ansible;
  if (!binding) return undefined;
  const short = module.slice(module.lastIndexOf('.') + 1);
  return {
    name: binding,
    ...check({ kind: 'package', key: binding }, reg, pm, `${play}: package ${binding} (Ansible's ${short} module needs it)`),
    label: `package '${binding}' (for Ansible's ${short} module: install it first)`,
  };
};

/**
 * Every play of runtime.yml and decommission.yml: Ansible's per-task files go
 * to /tmp on the host (a directory it makes and removes for each task), not
 * to ~/.ansible/tmp, which it would make and leave in the login user's home.
 */
export const hostPlayVars = { ansible_remote_tmp: word('/tmp') } as const;

/** `command -v NAME` with NAME as a positional parameter of sh -c (no quoting of user data in a script). */
const commandCheck = (what: string, name: string, reg: string): Task =>
  probeCommand(what, [word('/bin/sh'), str('-c'), str('command -v "$1"'), word('sh'), unsafe(name)], reg, ['`command -v` is a shell builtin: the name is $1 of sh -c, never part of the script.']);

const preflightPlay = (ir: Image, plan: RuntimePlan, aptBinding: boolean): Node => {
  const pm = ir.base.packageManager;
  const tasks: Task[] = [
    // Every module below runs with python3 on the host: look for it first, with
    // raw (no python needed), and stop naming it when it is not there.
    task({
      name: 'Preflight: python3 (Ansible runs its modules with it)',
      module: 'ansible.builtin.raw',
      args: str('command -v python3'),
      keywords: [entry('register', word('imgc_pf_python')), ...quiet],
    }),
    task({
      name: 'Preflight: stop when python3 is missing (nothing was changed)',
      module: 'ansible.builtin.fail',
      args: map({ msg: str('imgc: preflight: missing python3 (Ansible runs its modules with it); nothing was changed') }),
      keywords: [entry('when', str('imgc_pf_python.rc != 0'))],
    }),
    probeCommand('Preflight: distribution (/etc/os-release ID and VERSION_ID)', [word('/bin/sh'), str('-c'), str('. /etc/os-release && printf "%s %s" "$ID" "$VERSION_ID"')], 'imgc_pf_os'),
  ];
  const checks: { label: string; holds: string; has?: string }[] = [{ label: `distribution ${plan.contract.distro} ${plan.contract.release} (/etc/os-release ID and VERSION_ID)`, holds: 'imgc_pf_os.stdout == imgc_want_os' }];
  const b = aptBinding ? moduleBindingCheck(pm, 'imgc_pf_apt', 'Preflight') : undefined;
  if (b) {
    tasks.push(...b.tasks);
    checks.push({ label: b.label, holds: b.holds });
  }
  const wants: Record<string, Node> = {};
  plan.contract.facts.forEach((f: ContractFact, i) => {
    const reg = `imgc_pf_${i + 1}`;
    const shown = preflightLabel(f);
    const what = labelName(`Preflight: ${labelText(shown)}`);
    const d = detailCheck(f, reg, pm, what, `imgc_want_${i + 1}`);
    if (d) {
      tasks.push(...d.tasks);
      checks.push({ label: shown, holds: d.holds, has: d.has });
      wants[`imgc_want_${i + 1}`] = map(Object.fromEntries(Object.entries(f.details!).map(([k, v]) => [k, unsafe(v)])));
      return;
    }
    const c = check(f, reg, pm, what);
    tasks.push(...c.tasks);
    checks.push({ label: shown, holds: c.holds });
  });
  tasks.push(
    task({
      name: 'Preflight: collect what is missing',
      module: 'ansible.builtin.set_fact',
      // Each failed check's label and, for a check of details, what the host has instead.
      args: map({
        imgc_missing: template(
          checks.some((c) => c.has !== undefined)
            ? "imgc_checks | rejectattr('ok') | map(attribute='label') | zip(imgc_checks | rejectattr('ok') | map(attribute='has', default='')) | map('join') | list"
            : "imgc_checks | rejectattr('ok') | map(attribute='label') | list",
        ),
      }),
      keywords: [
        entry(
          'vars',
          map({
            imgc_want_os: unsafe(`${plan.contract.distro} ${plan.contract.release}`),
            ...wants,
            imgc_checks: seq(checks.map((c) => map({ label: unsafe(c.label), ok: template(`'yes' if (${c.holds}) else ''`), ...(c.has !== undefined ? { has: template(c.has) } : {}) }))),
          }),
        ),
      ],
    }),
    task({
      name: 'Preflight: stop when the host contract is not met (nothing was changed)',
      module: 'ansible.builtin.fail',
      args: map({ msg: template(`'imgc: preflight: missing ' ~ (imgc_missing | join(', ')) ~ '; nothing was changed'`) }),
      keywords: [entry('when', str('imgc_missing | length > 0'))],
    }),
  );
  return map({
    name: label(labelName(`Preflight: host contract of ${labelText(ir.name)}`)),
    hosts: word('all'),
    gather_facts: bool(false),
    vars: map(hostPlayVars),
    // A host missing something fails here, changed nothing, and is left out of
    // the plays below; the other hosts go on.
    tasks: seq(tasks.map(taskItem), { spaced: true }),
  });
};

/** A probe of "does this creation exist yet?" before its step: tasks and the expression true when it was absent. */
const absentBefore = (c: Creation, reg: string, step: Step, pm: Image['base']['packageManager']): { tasks: Task[]; absent: string } => {
  const what = taskName(`Record: is ${labelText(describe(c))} there already`, step.id, step.loc);
  switch (c.kind) {
    case 'user':
    case 'group':
    case 'package': {
      const k = check({ kind: c.kind, key: c.name }, reg, pm, what);
      return { tasks: k.tasks, absent: `not (${k.holds})` };
    }
    case 'path':
      return { tasks: [statTask(what, c.path, reg)], absent: `not ${reg}.stat.exists` };
    case 'service':
      return {
        tasks: [
          probeCommand(what, [word('systemctl'), word('is-enabled'), str('--quiet'), unsafe(c.unit)], reg, ['A read-only query (systemd_service would need a running systemd to report it).'], ['command-instead-of-module']),
        ],
        absent: `${reg}.rc != 0`,
      };
    case 'line':
      return {
        tasks: [
          task({
            name: what,
            module: 'ansible.builtin.lineinfile',
            comments: ['Check mode: reports changed when a line with this key is there; changes nothing.'],
            args: map({ path: unsafe(c.file), regexp: unsafe(lineRegexp(c)), state: word('absent') }),
            keywords: [entry('check_mode', bool(true)), entry('register', word(reg)), entry('changed_when', bool(false))],
          }),
        ],
        absent: `(${reg}.found | default(0)) == 0`,
      };
    case 'block':
      return {
        tasks: [
          task({
            name: what,
            module: 'ansible.builtin.lineinfile',
            comments: ['Check mode: reports changed when the block\'s begin marker is there; changes nothing.'],
            args: map({ path: unsafe(c.file), regexp: unsafe(`^${pythonRegexLiteral(blockMarkers(c)[0])}$`), state: word('absent') }),
            keywords: [entry('check_mode', bool(true)), entry('register', word(reg)), entry('changed_when', bool(false))],
          }),
        ],
        absent: `(${reg}.found | default(0)) == 0`,
      };
  }
};

export const lineRegexp = (c: Extract<Creation, { kind: 'line' }>): string =>
  c.sep === '=' ? `^\\s*${pythonRegexLiteral(c.key)}\\s*=` : `^\\s*${pythonRegexLiteral(c.key)}\\s*$`;

export const describe = (c: Creation): string => {
  switch (c.kind) {
    case 'user':
    case 'group':
    case 'package':
      return `${c.kind} ${c.name}`;
    case 'path':
      return c.path;
    case 'service':
      return `enabled ${c.unit}`;
    case 'line':
      return `${c.key} in ${c.file}`;
    case 'block':
      return `block '${blockMarkers(c)[0]}' in ${c.file}`;
  }
};

/** Whether a token is in the host's record, as a `when` expression (tokens are step ids plus `#N`: no quotes). */
export const recorded = (token: string): string => {
  if (!/^[A-Za-z0-9._#-]+$/.test(token)) throw new Error(`internal: token ${token}`);
  return `'${token}' in imgc_created`;
};

/** Handlers run here, before the host counts as done, rather than after the play's last task. */
const flushTask: Task = task({ name: 'Handlers: run the notified ones now', module: 'ansible.builtin.meta', args: word('flush_handlers') });

/** The last task of a phase's play: this host got through the phase (read by the summary). */
const doneTask = (phase: string): Task =>
  task({
    name: labelName(`Phase ${labelText(phase)}: done on this host`),
    module: 'ansible.builtin.set_fact',
    args: map({ imgc_done: template(`(imgc_done | default([])) + ['${safePhase(phase)}']`) }),
  });

const recordTask = (plan: RuntimePlan, token: string, absent: string, step: Step): Task =>
  task({
    name: taskName(`Record: created ${labelText(token)}`, step.id, step.loc),
    module: 'ansible.builtin.lineinfile',
    args: map({ path: unsafe(plan.recordFile), line: unsafe(token), create: bool(true), mode: mode('0644') }),
    keywords: [entry('when', str(absent))],
  });

/** How old apt's lists may be before a live host's phase refreshes them (`-e imgc_apt_cache_valid_time=0`: every run). */
export const APT_CACHE_VALID_SECONDS = 3600;

/**
 * The install that opens a phase on a live host refreshes apt's lists only
 * when they are older than the bound (cache_valid_time): a run with nothing to
 * change need not fetch them every time. One after a repository was added
 * still refreshes always (the lists must know the new source).
 */
const boundedRefresh = (t: Task, pm: Image['base']['packageManager']): Task => {
  const args = t.args;
  if (pm !== 'apt' || t.module !== packageManagers[pm].ansible.module || args.kind !== 'map' || !args.entries.some((e) => e.key === 'update_cache')) return t;
  return {
    ...t,
    comments: [`apt-get update first when the lists are older than imgc_apt_cache_valid_time seconds (default ${APT_CACHE_VALID_SECONDS}); not reported as a change.`],
    args: map([...args.entries, entry('cache_valid_time', template(`imgc_apt_cache_valid_time | default(${APT_CACHE_VALID_SECONDS}) | int`))]),
  };
};

/**
 * One phase run on live hosts (runtime.yml's runtime phases, decommission.yml's
 * drain): its value checks and pre hooks, its steps (each recording what it
 * created, as `rp` lists) in a block whose rescue fires the post hooks with
 * result failed and the message before failing the host, then its post hooks
 * (ok); and the handlers its steps notify. `counter` numbers the probes.
 */
export const livePhaseTasks = (ir: Image, plan: RuntimePlan, rp: RuntimePhase, counter: { n: number }): { tasks: Item[]; handlers: Task[]; needsBinding: boolean } => {
  const pm = ir.base.packageManager;
  const ctx: PhaseContext = { base: ir.base, refresh: true, notes: new Set(), liveHost: true };
  const handlers = ansiblePhaseHandlers(ir, rp.phase);
  const pre: Task[] = [];
  const body: Task[] = handlers.tasks.length ? whereTasks() : [];
  const post: Task[] = [];
  let phaseStart = true;
  for (const rs of rp.steps) {
    const s = rs.step;
    if (isHook(s)) {
      (s.when === 'pre' ? pre : post).push(...hookTasks(s, rp.phase.name, { onHosts: true }));
      continue;
    }
    const probes = rs.creations.flatMap((c) => [
      { token: c.token, c },
      ...(c.kind === 'user' && c.home ? [{ token: c.home.token, c: { token: c.home.token, kind: 'path', path: c.home.path, type: 'directory' } as Creation }] : []),
    ]);
    const before = probes.map((p) => {
      counter.n += 1;
      return { ...p, ...absentBefore(p.c, `imgc_pr_${counter.n}`, s, pm) };
    });
    body.push(...before.flatMap((b) => b.tasks));
    const notify = handlers.notify(s.id);
    const notifying = (ts: Task[]) => (notify ? ts.map((t) => ({ ...t, keywords: [...(t.keywords ?? []), notify] })) : ts);
    // Artifacts, Packer sources, checks: nothing Ansible does on a live host.
    if (!kindOf(s).inRoot) continue;
    const startRefresh = phaseStart && ctx.refresh;
    const rendered = stepTasks(s as RootStep, ctx);
    // A repository added, or the phase's first install done: later refreshes are not the phase's first.
    if (kindOf(s).addsSource || !ctx.refresh) phaseStart = false;
    body.push(...notifying(startRefresh ? rendered.map((t) => boundedRefresh(t, pm)) : rendered));
    body.push(...before.map((b) => recordTask(plan, b.token, b.absent, s)));
  }
  if (handlers.tasks.length) body.push(flushTask);
  // A task that holds a sensitive variable (bootstrap's join token) logs nothing; the phase first asserts it is given.
  const { assert, groups } = sensitiveGuard(ir, [pre, body, post]);
  const [hiddenPre = [], hiddenBody = [], hiddenPost = []] = groups;
  return {
    tasks: [...[...valueChecks(ir, rp.phase), ...assert, ...hiddenPre].map(taskItem), guardedBlock(rp.phase, hiddenBody, true), ...hiddenPost.map(taskItem)],
    handlers: handlers.tasks,
    needsBinding: usesPackageModule([...pre, ...body, ...post], pm),
  };
};

export const ansibleRuntime = (ir: Image, opts: CompileOptions = {}): CompiledFiles => {
  const plan = runtimePlan(ir);
  const counter = { n: 0 };
  const phases = plan.phases.map((rp) => ({ rp, phase: livePhaseTasks(ir, plan, rp, counter) }));
  const plays: Node[] = [preflightPlay(ir, plan, phases.some((p) => p.phase.needsBinding))];
  for (const { rp, phase } of phases) {
    plays.push(
      map({
        name: label(labelName(`Phase ${rp.phase.name} (runtime)`)),
        hosts: word('all'),
        gather_facts: bool(false),
        ...fleetKeywords(ir, opts),
        tags: seq([unsafe(rp.phase.name)]),
        vars: map({ ...hostPlayVars, ...(phase.handlers.length ? { imgc_handlers: word('auto') } : {}) }),
        tasks: seq([...phase.tasks, taskItem(doneTask(rp.phase.name))], { spaced: true }),
        handlers: phase.handlers.length ? seq(phase.handlers.map(taskItem), { spaced: true }) : undefined,
      }),
    );
  }
  const runtimeYml = document(seq(plays.map((value) => ({ value })), { spaced: true }), [
    `${ir.name}: runtime provisioning of existing hosts (phases ${plan.phases.map((p) => p.phase.name).join(', ') || 'none'}), written by imgc`,
    `from ${labelText(ir.source)} (imgc compile --target ansible --runtime); edit the definition, not this file.`,
    '',
    '  ansible-playbook -i inventory runtime.yml        (become root: ansible_become=true)',
    '',
    'The first play checks the host contract (what phases 0-1 give an image built by imgc,',
    'and python3-apt where the apt module runs: Ansible would install it on its own) and fails,',
    'listing everything missing, before any change. Module files go to /tmp on the host',
    '(ansible_remote_tmp), never to ~/.ansible. The record: each step notes',
    `what it created on the host in ${plan.recordFile}, one token (STEP-ID or STEP-ID#N)`,
    'a line, only when the step itself created it there; decommission.yml undoes the',
    'recorded things only, in reverse order, then removes the record.',
  ]);
  return withCarried(
    {
      'runtime.yml': runtimeYml,
      'ansible.cfg': ansibleCfg,
      'group_vars/all.yml': groupVars(ir),
      'callback_plugins/imgc_summary.py': summaryCallback(plan.phases.map((p) => safePhase(p.phase.name))),
    },
    plan.phases.flatMap((p) => p.phase.steps),
    'ansible',
  );
};
