// Fleets: what runtime.yml and decommission.yml add for many hosts at once.
// Ansible is the distributed engine: `serial` batches and
// `max_fail_percentage` per play (defaults from `imgc compile --serial N
// --max-fail P`, else the definition's `fleet()`; overridden at run time by
// `-e imgc_serial=… -e imgc_max_fail=…`), and a
// last play on the controller that prints one line per host of the inventory:
// what its preflight found missing, how far it got, what needs a reboot.
import type { Image } from '../../ir/schema.js';
import type { CompileOptions } from '../types.js';
import { labelName, labelText } from '../../emit/ansible/names.js';
import { bool, label, template, word } from '../../emit/ansible/quote.js';
import { task, taskItem } from '../../emit/ansible/tasks.js';
import { entry, map, seq, type Node } from './yaml.js';

/** Checked by the CLI; a definition's or flag's value reaches the playbook as a Jinja literal. */
export const validSerial = (s: string): boolean => /^([1-9][0-9]*%?)$/.test(s) && (!s.endsWith('%') || Number(s.slice(0, -1)) <= 100);

/** `serial` and `max_fail_percentage` of a play that changes hosts: the command line's, else the definition's (`fleet()`), else all hosts at once and 100. */
export const fleetKeywords = (ir: Image, opts: CompileOptions): Record<string, Node> => {
  const serial = opts.serial ?? ir.fleet?.serial ?? '100%';
  const maxFail = opts.maxFail ?? ir.fleet?.maxFailPercentage ?? 100;
  if (!validSerial(serial)) throw new Error(`internal: serial ${serial}`);
  if (!Number.isInteger(maxFail) || maxFail < 0 || maxFail > 100) throw new Error(`internal: max fail ${maxFail}`);
  return {
    serial: template(`imgc_serial | default('${serial}')`),
    max_fail_percentage: template(`imgc_max_fail | default(${maxFail})`),
  };
};

// One line per host, from the facts the plays above left (hostvars outlive a
// host's failure): preflight's list of what is missing, the phases done, the
// changes only a reboot applies. Short expressions, each within a line.
const hostVars = (phases: readonly string[]): Record<string, Node> => ({
  imgc_h_missing: template('hostvars[h].imgc_missing | default(None)'),
  imgc_h_done: template("hostvars[h].imgc_done | default([]) | join(', ')"),
  imgc_h_reboot: template("hostvars[h].imgc_reboot_required | default([]) | join('; ')"),
  imgc_h_checked: template("'preflight failed, untouched: missing ' ~ (imgc_h_missing | join(', ')) if imgc_h_missing else 'converged'"),
  imgc_h_through: template(`imgc_h_checked if imgc_h_missing or imgc_h_done == '${phases.map(safePhase).join(', ')}' else 'failed after: ' ~ (imgc_h_done or 'nothing')`),
  imgc_h_state: template("'unreachable, or failed before its checks' if imgc_h_missing is none else imgc_h_through"),
});

/** A phase name as the text of a Jinja string literal (phase names are words already). */
export const safePhase = (phase: string): string => phase.replace(/[^A-Za-z0-9_-]/g, '');

export const summaryPlay = (ir: Image, phases: readonly string[]): Node =>
  map({
    name: label(labelName(`Summary: each host of ${labelText(ir.name)}`)),
    hosts: word('localhost'),
    gather_facts: bool(false),
    tasks: seq(
      [
        task({
          name: 'Summary: one line per host',
          module: 'ansible.builtin.debug',
          args: map({ msg: template("'imgc: ' ~ h ~ ': ' ~ imgc_h_state ~ ((' (reboot required: ' ~ imgc_h_reboot ~ ')') if imgc_h_reboot else '')") }),
          keywords: [entry('vars', map(hostVars(phases))), entry('loop', template("groups['all']")), entry('loop_control', map({ loop_var: word('h'), label: template('h') }))],
        }),
      ].map(taskItem),
      { spaced: true },
    ),
  });
