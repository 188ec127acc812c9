// Fleets: what runtime.yml and decommission.yml add for many hosts at once.
// Ansible is the distributed engine: `serial` batches and
// `max_fail_percentage` per play (defaults from `imgc compile --serial N
// --max-fail P`, else the definition's `fleet()`; overridden at run time by
// `-e imgc_serial=… -e imgc_max_fail=…`). The per-host summary at the end is
// a callback plugin (./summary-callback.ts).
import type { Image } from '../../ir/schema.js';
import type { CompileOptions } from '../types.js';
import { template } from '../../emit/ansible/quote.js';
import type { Node } from '../../emit/ansible/yaml.js';

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

/** A phase name as the text of a Jinja string literal (phase names are words already). */
export const safePhase = (phase: string): string => phase.replace(/[^A-Za-z0-9_-]/g, '');
