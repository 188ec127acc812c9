// Phase hooks. A script runs in the target like a command; webhooks and events
// run on the machine driving the build (delegate_to: localhost, once per play)
// and send the request of src/compilers/hook-request.ts.
import type { Hook, Phase } from '../../ir/schema.js';
import { firstLine, labelName, labelText, taskName } from '../../emit/ansible/names.js';
import { bool, label as quotedLabel, mode, str, template, unsafe, word } from '../../emit/ansible/quote.js';
import { task, taskItem, type Task } from '../../emit/ansible/tasks.js';
import { entry, map, seq, type Entry, type Item, type Node } from '../../emit/ansible/yaml.js';
import { safePhase } from './fleet.js';
import { webhookHelper } from '../webhook-sdk.js';
import { hookResult, phaseEdge, requestFields, type HookRequest, type RequestFieldName } from '../hook-request.js';
import { rawCommandNoqa } from '../../emit/ansible/lint.js';

/** The one templated value the backend emits on purpose: the time the hook runs, UTC, ISO-8601. */
const TIMESTAMP = template("now(utc=True, fmt='%Y-%m-%dT%H:%M:%SZ')");

/** How Ansible obtains each field of the request (src/compilers/hook-request.ts). */
const fieldNode: { readonly [K in RequestFieldName]: (r: HookRequest) => Node } = {
  // The play's variable, set from the definition's name.
  image: () => template('imgc_image'),
  phase: (r) => unsafe(r.phase),
  edge: (r) => {
    const e = phaseEdge(r.phase);
    if (!e) throw new Error(`internal: phase ${r.phase} is on no lifecycle edge`);
    return map({ from: word(e.from), to: word(e.to) });
  },
  // Hooks run once per batch (run_once): a batch's request names the batch; in
  // a rescue, the hosts of the batch that failed (ansible_failed_task is set
  // on each host a rescue runs for).
  hosts: (r) => template(r.result === 'failed' ? FAILED_HOSTS : 'ansible_play_batch'),
  when: (r) => word(r.when),
  timestamp: () => TIMESTAMP,
  result: (r) => word(r.result),
  // In a rescue: what failed, as Ansible says it.
  message: () => template(FAILED_MESSAGE),
};

// Key order is the body's field order (to_json keeps it).
const eventFields = (phase: string, when: 'pre' | 'post', site: HookSite): Record<string, Node> => {
  // The image is the play's variable (fieldNode.image), not this value.
  const r: HookRequest = { image: '', phase, when, result: hookResult(when, site.failed), onHosts: site.onHosts };
  return { imgc_event: map(Object.fromEntries(requestFields(r).map((n) => [n, fieldNode[n](r)]))) };
};
const eventVars = (phase: string, when: 'pre' | 'post', site: HookSite): Entry => entry('vars', map(eventFields(phase, when, site)))!;

/**
 * Where a hook task is: `onHosts`, in a play on live hosts (runtime.yml,
 * decommission.yml), not an image build's; `failed`, a post hook in the rescue
 * of a phase that failed (result failed, with the message).
 */
export interface HookSite {
  readonly onHosts: boolean;
  readonly failed?: boolean;
}

/** How a post hook in a phase's rescue is named, apart from the same hook after a phase that went through. */
const RESCUED_HOOK = 'Post hook (phase failed)';
const FAILED_HOST = ': failed on this host';

/**
 * Whether a task is one of a phase's rescue (guardedBlock): the build's
 * progress reads a failure followed by one as not ignored.
 */
export const isRescueTask = (name: string): boolean => {
  // Ansible names a role's task `ROLE : NAME`.
  const own = name.replace(/^[a-z][a-z0-9_]* : /, '');
  return own.startsWith(`${RESCUED_HOOK}: `) || (own.startsWith('Phase ') && own.endsWith(FAILED_HOST));
};

/** In a rescue section: the hosts of the batch that failed, in the batch's order. */
const FAILED_HOSTS = "ansible_play_batch | map('extract', hostvars) | selectattr('ansible_failed_task', 'defined') | map(attribute='inventory_hostname') | list";

/** In a rescue section: the failed task's name and message (run_once: of the first host that failed). */
export const FAILED_MESSAGE = "ansible_failed_task.name ~ ': ' ~ (ansible_failed_result.msg | default('failed'))";

/** The controller's webhook client: the shared helper, its body the event on stdin. */
const webhookScript = ['imgc_body() {', '  cat', '}', '', ...webhookHelper, '', 'imgc_webhook "$@"', ''].join('\n');

const onController = [entry('delegate_to', word('localhost')), entry('run_once', bool(true))];

/** The tasks of one pre/post hook of `phase`. */
export const hookTasks = (h: Hook, phase: string, site: HookSite): Task[] => {
  const failed = site.failed === true;
  const label = (what: string) => taskName(`${h.when === 'pre' ? 'Pre hook' : failed ? RESCUED_HOOK : 'Post hook'}: ${h.description !== undefined ? labelText(h.description) : what}`, h.id, h.loc);
  const a = h.action;
  switch (a.type) {
    case 'script':
      return [
        task({
          name: label(`script ${firstLine(a.run)}`),
          module: 'ansible.builtin.shell',
          comments: ['A hook script from the definition, run by /bin/sh as written; assumed idempotent, it runs every time and reports ok.'],
          noqa: rawCommandNoqa(a.run),
          args: map({ cmd: unsafe(a.run), executable: word('/bin/sh') }),
          keywords: [entry('changed_when', bool(false))],
        }),
      ];
    case 'webhook': {
      const warn = a.onFailure === 'warn';
      const refused = str('(imgc_webhook.rc | default(0)) != 0');
      return [
        task({
          name: label(`webhook ${labelText(a.url)}`),
          module: 'ansible.builtin.command',
          comments: [
            `POSTs the event as JSON and reads a Runtime SDK answer (src/compilers/webhook-sdk.ts): Failure stops, retryAfterSeconds waits, within ${a.timeoutSeconds} s in all;`,
            `a request that fails is tried ${1 + a.retries} ${a.retries ? 'times' : 'time'}. Skipped in check mode.`,
          ],
          args: map({
            argv: seq([word('/bin/sh'), str('-c'), template('imgc_webhook_sh'), word('sh'), unsafe(a.url), str(String(Math.ceil(a.timeoutSeconds))), str(String(a.retries)), word('fail')]),
            stdin: template('imgc_event | to_json'),
          }),
          keywords: [
            entry('vars', map({ ...eventFields(phase, h.when, site), imgc_webhook_sh: unsafe(webhookScript) })),
            ...onController,
            entry('register', word('imgc_webhook')),
            entry('changed_when', bool(false)),
            entry('failed_when', bool(false)),
          ],
        }),
        // The client's stderr is not shown for a task that went through: each wait the controller asked for, one line.
        task({
          name: label(`webhook ${labelText(a.url)}: the waits the controller asked for`),
          module: 'ansible.builtin.debug',
          args: map({ msg: template('item') }),
          keywords: [
            entry('loop', template("imgc_webhook.stderr_lines | default([]) | select('search', ' asks to retry after ') | list")),
            entry('loop_control', map({ label: word('retryAfterSeconds') })),
            entry('run_once', bool(true)),
          ],
        }),
        warn
          ? task({
              name: label(`webhook ${labelText(a.url)}: warn and go on`),
              module: 'ansible.builtin.debug',
              args: map({ msg: template("'imgc: warning: ' ~ imgc_webhook.stderr ~ '; going on'") }),
              keywords: [entry('when', refused), entry('run_once', bool(true))],
            })
          : task({
              name: label(`webhook ${labelText(a.url)}: stop on its answer`),
              module: 'ansible.builtin.fail',
              args: map({ msg: template('imgc_webhook.stderr') }),
              keywords: [entry('when', refused)],
            }),
      ];
    }
    case 'event':
      if (a.target === 'stdout')
        return [
          task({
            name: label('event to stdout'),
            module: 'ansible.builtin.debug',
            args: map({ msg: template('imgc_event | to_json') }),
            keywords: [eventVars(phase, h.when, site), entry('run_once', bool(true))],
          }),
        ];
      return [
        task({
          name: label(`event to ${labelText(a.target)}`),
          module: 'ansible.builtin.lineinfile',
          comments: ['Appends one JSON line on the controller; a log line is not a change to the image.'],
          args: map({ path: unsafe(a.target), line: template('imgc_event | to_json'), create: bool(true), mode: mode('0644') }),
          keywords: [eventVars(phase, h.when, site), ...onController, entry('changed_when', bool(false))],
        }),
      ];
  }
};

/** The end of a phase's rescue: the host fails, with what failed (the summary reads imgc_done). */
const failTask = (phase: string): Task =>
  task({
    name: labelName(`Phase ${labelText(phase)}${FAILED_HOST}`),
    module: 'ansible.builtin.fail',
    args: map({ msg: template(`'imgc: phase ${safePhase(phase)} failed at ' ~ ${FAILED_MESSAGE}`) }),
  });

/** A phase's tasks in a block whose rescue fires its post hooks with result failed and the message, then fails the host. */
export const guardedBlock = (phase: Phase, body: readonly Task[], onHosts: boolean): Item => ({
  value: map({
    name: quotedLabel(labelName(`Phase ${labelText(phase.name)}: its steps; on a failure its post hooks say so`)),
    block: seq(body.map(taskItem), { spaced: true }),
    rescue: seq([...phase.post.flatMap((h) => hookTasks(h, phase.name, { onHosts, failed: true })), failTask(phase.name)].map(taskItem), { spaced: true }),
  }),
});
