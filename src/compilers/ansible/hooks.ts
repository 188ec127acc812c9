// Phase hooks. A script runs in the target like a command; webhooks and events
// run on the machine driving the build (delegate_to: localhost, once per play)
// and send the same JSON body: image, phase, when, timestamp, result.
import type { StepOf } from '../../ir/schema.js';
import { firstLine, labelText, taskName } from '../../emit/ansible/names.js';
import { bool, int, mode, str, template, unsafe, word } from '../../emit/ansible/quote.js';
import { task, type Task } from '../../emit/ansible/tasks.js';
import { entry, map, seq, type Entry } from './yaml.js';
import { rawCommandNoqa } from '../../emit/ansible/lint.js';

/** The one templated value the backend emits on purpose: the time the hook runs, UTC, ISO-8601. */
const TIMESTAMP = template("now(utc=True, fmt='%Y-%m-%dT%H:%M:%SZ')");

// Key order is the body's field order (to_json keeps it).
const eventVars = (phase: string, when: 'pre' | 'post'): Entry =>
  entry(
    'vars',
    map({
      imgc_event: map({
        image: template('imgc_image'),
        phase: unsafe(phase),
        when: word(when),
        timestamp: TIMESTAMP,
        result: word(when === 'pre' ? 'starting' : 'ok'),
      }),
    }),
  )!;

const onController = [entry('delegate_to', word('localhost')), entry('run_once', bool(true))];

/** The tasks of one pre/post hook of `phase`. */
export const hookTasks = (h: StepOf<'hook'>, phase: string): Task[] => {
  const label = (what: string) => taskName(`${h.when === 'pre' ? 'Pre' : 'Post'} hook: ${h.description !== undefined ? labelText(h.description) : what}`, h.id, h.loc);
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
      const retries = a.retries > 0;
      const warn = a.onFailure === 'warn';
      return [
        task({
          name: label(`webhook ${labelText(a.url)}`),
          module: 'ansible.builtin.uri',
          comments: [
            `POST the event as JSON; ${retries ? `${a.retries} ${a.retries === 1 ? 'retry' : 'retries'}, then ` : ''}${warn ? 'a failure is reported and the build goes on' : 'a failure stops the build'}. Skipped in check mode.`,
          ],
          args: map({
            url: unsafe(a.url),
            method: word('POST'),
            body_format: word('json'),
            body: template('imgc_event'),
            status_code: seq([200, 201, 202, 203, 204, 205, 206].map(int), { flow: true }),
            timeout: int(Math.ceil(a.timeoutSeconds)),
          }),
          keywords: [
            eventVars(phase, h.when),
            ...onController,
            retries || warn ? entry('register', word('imgc_webhook')) : undefined,
            ...(retries ? [entry('until', str('imgc_webhook is succeeded')), entry('retries', int(a.retries)), entry('delay', int(2))] : []),
            warn ? entry('ignore_errors', bool(true)) : undefined,
          ],
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
            keywords: [eventVars(phase, h.when), entry('run_once', bool(true))],
          }),
        ];
      return [
        task({
          name: label(`event to ${labelText(a.target)}`),
          module: 'ansible.builtin.lineinfile',
          comments: ['Appends one JSON line on the controller; a log line is not a change to the image.'],
          args: map({ path: unsafe(a.target), line: template('imgc_event | to_json'), create: bool(true), mode: mode('0644') }),
          keywords: [eventVars(phase, h.when), ...onController, entry('changed_when', bool(false))],
        }),
      ];
  }
};
