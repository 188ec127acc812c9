// Progress lines of the runners, parsed into events. The grammar lives here
// and nowhere else:
//
//   shell target (phases/NN-<phase>.sh, on stdout):
//     imgc-step <step-id> start
//     imgc-step <step-id> changed | unchanged | failed | skipped
//     imgc-phase <phase> done changed=<N>
//
//   ansible target (ansible-playbook with the stdout callback ANSIBLE_JSON_CALLBACK,
//   one JSON object a line, written as each task starts and ends):
//     {"_event": "v2_playbook_on_task_start", "task": {"name": "<title> (<step-id>, <file>:<line>)"}}
//         a task of a step starts (the id may stand anywhere in the name)
//     {"_event": "v2_runner_on_ok|failed|skipped|unreachable", "hosts": {"<host>": {<module result>}}}
//     {"_event": "v2_playbook_on_handler_task_start" | "v2_playbook_on_play_start", …}   no step
//     {"_event": "v2_playbook_on_stats", "stats": {"<host>": {"ok": N, "changed": N, "failures": N, …}}}
//   A step may be several tasks; it is `changed` when any of them changed. The
//   callback does not say whether a failure was ignored (`ignore_errors`): the
//   host going on to another task, or a recap without failures, says so; going
//   on to the phase's rescue (its post hooks saying it failed) does not.

import { isRescueTask } from '../compilers/ansible/hooks.js';

export type StepStatus = 'changed' | 'unchanged' | 'failed' | 'skipped';

export type ProgressEvent =
  | { type: 'start'; step: string }
  | { type: 'end'; step: string; status: StepStatus }
  | { type: 'phase-done'; phase: string; changed: number }
  | { type: 'recap'; ok: number; changed: number; failed: number; unreachable: number };

const STEP_ID = '[a-z][a-z0-9-]*\\.(?:pre|post)?\\d+\\.[A-Za-z]+';
const shellStep = new RegExp(`^imgc-step (${STEP_ID}) (start|changed|unchanged|failed|skipped)\\s*$`);
const shellPhase = /^imgc-phase ([a-z][a-z0-9-]*) done changed=(\d+)\s*$/;

/** One line of a shell phase script's output; undefined when it is not a progress line. */
export const parseShellLine = (line: string): ProgressEvent | undefined => {
  const s = shellStep.exec(line);
  if (s) return s[2] === 'start' ? { type: 'start', step: s[1]! } : { type: 'end', step: s[1]!, status: s[2] as StepStatus };
  const p = shellPhase.exec(line);
  if (p) return { type: 'phase-done', phase: p[1]!, changed: Number(p[2]) };
  return undefined;
};

/** The stdout callback the ansible runner asks for (ansible.posix, shipped with Ansible): JSON lines, one per event. */
export const ANSIBLE_JSON_CALLBACK = 'ansible.posix.jsonl';

const taskStepId = new RegExp(`(?:^|[\\s|:(\\[])(${STEP_ID})(?=$|[\\s:,|)\\]])`);

/** The part of a module's result (or of a loop item's) the log shows. */
interface ModuleResult {
  changed?: boolean;
  msg?: unknown;
  rc?: number;
  stdout_lines?: unknown;
  stderr_lines?: unknown;
  censored?: string;
  results?: ModuleResult[];
  item?: unknown;
  failed?: boolean;
}

interface Stats {
  ok: number;
  changed: number;
  failures: number;
  unreachable: number;
  skipped?: number;
  rescued?: number;
  ignored?: number;
}

/** One line of the JSON callback: its events for the tracker and its lines for the log (what the default callback would have printed). */
export interface AnsibleLine {
  events: ProgressEvent[];
  text: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nameOf = (v: unknown): string => (isRecord(v) && typeof v['name'] === 'string' ? v['name'] : '');
const lines = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** A result's output for the log: the message, then stdout and stderr, each line marked. */
const resultText = (r: ModuleResult, indent = '  '): string[] => {
  if (r.censored) return [`${indent}(${r.censored})`];
  const out: string[] = [];
  if (typeof r.msg === 'string' && r.msg) out.push(...r.msg.split('\n').map((l) => `${indent}msg: ${l}`));
  else if (r.msg !== undefined && r.msg !== '') out.push(`${indent}msg: ${JSON.stringify(r.msg)}`);
  out.push(...lines(r.stdout_lines).map((l) => `${indent}stdout: ${l}`), ...lines(r.stderr_lines).map((l) => `${indent}stderr: ${l}`));
  for (const item of Array.isArray(r.results) ? r.results : []) {
    if (!isRecord(item)) continue;
    const body = resultText(item, `${indent}  `);
    if (item.failed || body.length) out.push(`${indent}item ${JSON.stringify(item.item)}${item.failed ? ': failed' : ''}`, ...body);
  }
  return out;
};

/** Stateful: turns the JSON callback's lines into the same events as the shell target's. */
export class AnsibleProgress {
  private current: { step: string; changed: boolean; failed: boolean; seen: boolean } | undefined;
  /** A task failed and the host has not gone on yet: ignored if it does. */
  private pendingFailure = false;

  /** Events and log lines for one output line; undefined when it is not the callback's (a warning, a Python error). */
  feed(line: string): AnsibleLine | undefined {
    if (!line.startsWith('{')) return undefined;
    let ev: unknown;
    try {
      ev = JSON.parse(line);
    } catch {
      return undefined;
    }
    if (!isRecord(ev) || typeof ev['_event'] !== 'string') return undefined;
    const kind = ev['_event'].replace(/^v2_/, '');
    const events: ProgressEvent[] = [];
    const text: string[] = [];
    switch (kind) {
      case 'playbook_on_play_start':
        events.push(...this.flush());
        text.push('', `PLAY [${nameOf(ev['play'])}]`);
        break;
      case 'playbook_on_task_start':
      case 'runner_on_start': {
        const name = nameOf(ev['task']);
        // A phase's rescue after a failure: the failed step stays the current one, and failed.
        if (this.pendingFailure && isRescueTask(name)) {
          text.push('', `TASK [${name}]`);
          break;
        }
        // The host went on: a failure before this was ignored.
        this.pendingFailure = false;
        const id = /^Gathering Facts$/.test(name) ? undefined : taskStepId.exec(name)?.[1];
        if (!(id && this.current?.step === id)) {
          events.push(...this.flush());
          if (id) {
            this.current = { step: id, changed: false, failed: false, seen: false };
            events.push({ type: 'start', step: id });
          }
        }
        text.push('', `TASK [${name}]`);
        break;
      }
      case 'playbook_on_handler_task_start':
        events.push(...this.flush());
        text.push('', `RUNNING HANDLER [${nameOf(ev['task'])}]`);
        break;
      case 'runner_on_ok':
      case 'runner_on_failed':
      case 'runner_on_skipped':
      case 'runner_on_unreachable': {
        const hosts = isRecord(ev['hosts']) ? ev['hosts'] : {};
        for (const [host, raw] of Object.entries(hosts)) {
          const r: ModuleResult = isRecord(raw) ? raw : {};
          const status = kind.slice('runner_on_'.length);
          // A step all of whose tasks were skipped (its `when:` false on every host) is skipped.
          if (this.current && status !== 'skipped') this.current.seen = true;
          if (status === 'failed' || status === 'unreachable') {
            this.pendingFailure = true;
            text.push(`fatal: [${host}]: ${status === 'failed' ? 'FAILED!' : 'UNREACHABLE!'}${r.rc !== undefined ? ` (rc ${r.rc})` : ''}`);
          } else {
            if (status === 'ok' && r.changed && this.current) this.current.changed = true;
            text.push(`${status === 'skipped' ? 'skipping' : r.changed ? 'changed' : 'ok'}: [${host}]`);
          }
          if (status !== 'skipped') text.push(...resultText(r));
        }
        break;
      }
      case 'playbook_on_stats': {
        const stats = Object.entries(isRecord(ev['stats']) ? ev['stats'] : {}).filter((e): e is [string, Stats] => isRecord(e[1]));
        const sum = (k: keyof Stats) => stats.reduce((n, [, s]) => n + (Number(s[k]) || 0), 0);
        // A failure the recap does not count was ignored.
        if (this.pendingFailure && this.current && sum('failures') + sum('unreachable') === 0) this.pendingFailure = false;
        events.push(...this.flush());
        text.push('', 'PLAY RECAP');
        for (const [host, s] of stats) {
          text.push(`${host} : ${(['ok', 'changed', 'unreachable', 'failures', 'skipped', 'rescued', 'ignored'] as const).map((k) => `${k === 'failures' ? 'failed' : k}=${Number(s[k]) || 0}`).join('  ')}`);
        }
        events.push({ type: 'recap', ok: sum('ok'), changed: sum('changed'), failed: sum('failures'), unreachable: sum('unreachable') });
        break;
      }
    }
    return { events, text };
  }

  /** Ends the current step (at the end of the output; a failure not known to be ignored counts). */
  flush(): ProgressEvent[] {
    const c = this.current;
    if (c && this.pendingFailure) c.failed = true;
    this.pendingFailure = false;
    if (!c) return [];
    this.current = undefined;
    const status: StepStatus = c.failed ? 'failed' : c.changed ? 'changed' : c.seen ? 'unchanged' : 'skipped';
    return [{ type: 'end', step: c.step, status }];
  }
}
