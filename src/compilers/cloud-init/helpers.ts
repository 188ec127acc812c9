// The shell functions runcmd (and bootcmd) entries call. cloud-init writes
// all runcmd entries into one /bin/sh script (a string entry as is, a list
// entry as words it single-quotes itself), so the first entry defines these
// functions and every later entry is a list `[imgc_x, ARG…]`: values from the
// IR only ever travel as arguments, never inside this code. Static POSIX sh,
// no IR values in here; every helper checks before it acts, so a second run
// changes nothing. Helper variables are globals prefixed imgc_. Most are the
// phase scripts' (the shell frame's, the package managers', the kinds'),
// without their change tracking; this file holds runcmd's own.

import { helperTable, helpersCalled, shellHelpers, withoutChanges } from '../shell/helpers.js';
import { fn, type HelperName } from '../../emit/cloud-init/calls.js';
import type { ShellHelper } from '../../emit/shell/emitted.js';
import { packageManagers } from '../../steps/package-managers.js';
import { webhookHelper } from '../webhook-sdk.js';

export type { HelperName };

/** runcmd's own: running a command once, hooks, and a phase's failure. */
const frameHelpers: Record<HelperName, ShellHelper> = {
  creates: {
    deps: [],
    code: [
      '# imgc_creates PATH COMMAND...: runs COMMAND unless PATH exists (it ran already).',
      'imgc_creates() {',
      '  if [ -e "$1" ]; then',
      '    return 0',
      '  fi',
      '  shift',
      '  "$@"',
      '}',
    ],
  },
  body: {
    deps: [],
    code: [
      '# imgc_body PREFIX MIDDLE SUFFIX: the JSON body of a hook, PREFIX ["this host\'s name (uname -n)"]',
      '# MIDDLE "now (UTC)" SUFFIX. A hostname is letters, digits, - and .: nothing to escape.',
      'imgc_body() {',
      '  printf \'%s["%s"]%s"%s"%s\' "$1" "$(uname -n)" "$2" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$3"',
      '}',
    ],
  },
  event: {
    deps: ['body'],
    code: [
      '# imgc_event stdout|FILE PREFIX MIDDLE SUFFIX: prints the body as one line on stdout (it',
      '# goes to /var/log/cloud-init-output.log), or appends it to FILE.',
      'imgc_event() {',
      '  imgc_json=$(imgc_body "$2" "$3" "$4")',
      '  if [ "$1" = stdout ]; then',
      '    printf \'%s\\n\' "$imgc_json"',
      '  else',
      '    printf \'%s\\n\' "$imgc_json" >>"$1"',
      '  fi',
      '}',
    ],
  },
  webhook: {
    deps: ['body'],
    // The client every target shares: it reads a Cluster API Runtime SDK answer (../webhook-sdk.ts).
    code: [...webhookHelper],
  },
  failing: {
    deps: [],
    code: [
      '# imgc_failing FUNCTION: from here, a failure that stops this script runs FUNCTION first',
      "# (the post hooks of the phase whose step failed, with result failed); imgc_failing -: no longer.",
      'imgc_failing() {',
      '  if [ "$1" = - ]; then',
      '    trap - EXIT',
      '    return',
      '  fi',
      '  imgc_rc=0',
      '  # shellcheck disable=SC2064 # FUNCTION is known now; $? and imgc_rc when the trap runs.',
      '  trap "imgc_rc=\\$?; trap - EXIT; if [ \\"\\$imgc_rc\\" -ne 0 ]; then $1 || :; fi; exit \\"\\$imgc_rc\\"" EXIT',
      '}',
    ],
  },
  once: {
    deps: [],
    code: [
      '# imgc_once ID COMMAND...: runs COMMAND on the first boot of this instance only',
      '# (bootcmd runs on every boot), like cloud-init-per instance, which cannot call',
      '# a shell function.',
      'imgc_once() {',
      '  imgc_sem=/var/lib/cloud/instance/sem/imgc-bootcmd.$1',
      '  if [ -e "$imgc_sem" ]; then',
      '    return 0',
      '  fi',
      '  shift',
      '  "$@"',
      '  mkdir -p /var/lib/cloud/instance/sem',
      '  : >"$imgc_sem"',
      '}',
    ],
  },
};

let table: ReadonlyMap<HelperName, ShellHelper> | undefined;

/**
 * Every helper runcmd may call: the phase scripts' without their change
 * tracking (runcmd reports no changes), the package managers' runcmd-only
 * ones, then runcmd's own.
 */
const runcmdHelpers = (): ReadonlyMap<HelperName, ShellHelper> =>
  (table ??= helperTable([
    Object.fromEntries([...shellHelpers()].map(([name, h]) => [name, { deps: h.deps, code: withoutChanges(h) }])),
    ...Object.values(packageManagers).flatMap((pm) => (pm.cloudInit ? [pm.cloudInit.helpers] : [])),
    frameHelpers,
  ]));

/**
 * The first entry of runcmd or bootcmd: `set -eu` (cloud-init runs the entries
 * as one script and would otherwise go on after a failed one), the code of
 * `used` and what it calls, then the frame's `functions`.
 */
export const helperScript = (used: Iterable<HelperName>, functions: readonly string[] = []): string => {
  const code = helpersCalled(runcmdHelpers(), used).map((h) => h.code.join('\n'));
  return `${['# imgc: stop at the first failed entry (cloud-init would run the rest).', 'set -eu', ...code, ...functions].join('\n')}\n`;
};

export { fn };
