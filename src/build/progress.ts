// Progress lines of the runners, parsed into events. The grammar lives here
// and nowhere else:
//
//   shell target (phases/NN-<phase>.sh, on stdout):
//     imgc-step <step-id> start
//     imgc-step <step-id> changed | unchanged | failed | skipped
//     imgc-phase <phase> done changed=<N>
//
//   ansible target (ansible-playbook's default callback, no colour):
//     TASK [<title> (<step-id>, <file>:<line>)] ****   a task of a step starts (the id may
//                                                    stand anywhere in the name)
//     ok: [...] | changed: [...] | skipping: [...] | fatal: [...] | failed: [...]
//     PLAY RECAP ****  then  <host> : ok=N changed=N unreachable=N failed=N ...
//   A step may be several tasks; it is `changed` when any of them changed.

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

const taskLine = /^TASK \[(.*)\] \**\s*$/;
const taskStepId = new RegExp(`(?:^|[\\s|:(\\[])(${STEP_ID})(?=$|[\\s:,|)\\]])`);
const resultLine = /^(ok|changed|skipping|fatal|failed): \[/;
const recapLine = /^\S.*?:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)/;

/** Stateful: turns ansible-playbook's output into the same events as the shell target's. */
export class AnsibleProgress {
  private current: { step: string; changed: boolean; failed: boolean; seen: boolean } | undefined;
  private inRecap = false;

  /** Events for one output line (possibly none; the end of a step is known when the next starts). */
  feed(line: string): ProgressEvent[] {
    const out: ProgressEvent[] = [];
    if (/^PLAY RECAP \*/.test(line)) {
      out.push(...this.flush());
      this.inRecap = true;
      return out;
    }
    if (/^PLAY \[/.test(line)) {
      out.push(...this.flush());
      return out;
    }
    if (this.inRecap) {
      const r = recapLine.exec(line);
      if (r) out.push({ type: 'recap', ok: Number(r[1]), changed: Number(r[2]), unreachable: Number(r[3]), failed: Number(r[4]) });
      return out;
    }
    const t = taskLine.exec(line);
    if (t) {
      const id = /^(?:RUNNING HANDLER|Gathering Facts)/.test(t[1]!) ? undefined : taskStepId.exec(t[1]!)?.[1];
      if (id && this.current?.step === id) return out;
      out.push(...this.flush());
      if (id) {
        this.current = { step: id, changed: false, failed: false, seen: false };
        out.push({ type: 'start', step: id });
      }
      return out;
    }
    if (/^RUNNING HANDLER \[/.test(line)) {
      out.push(...this.flush());
      return out;
    }
    const res = resultLine.exec(line);
    if (res && this.current) {
      this.current.seen = true;
      if (res[1] === 'changed') this.current.changed = true;
      if (res[1] === 'fatal' || res[1] === 'failed') this.current.failed = true;
      return out;
    }
    // `ignore_errors: true`: the failure just reported does not count.
    if (/^\.\.\.ignoring\s*$/.test(line) && this.current) this.current.failed = false;
    return out;
  }

  /** Ends the current step (at the end of the output). */
  flush(): ProgressEvent[] {
    const c = this.current;
    if (!c) return [];
    this.current = undefined;
    const status: StepStatus = c.failed ? 'failed' : c.changed ? 'changed' : c.seen ? 'unchanged' : 'skipped';
    return [{ type: 'end', step: c.step, status }];
  }
}
