// The shell functions runcmd (and bootcmd) entries call. cloud-init writes
// all runcmd entries into one /bin/sh script (a string entry as is, a list
// entry as words it single-quotes itself), so the first entry defines these
// functions and every later entry is a list `[imgc_x, ARG…]`: values from the
// IR only ever travel as arguments, never inside this code. Static POSIX sh,
// no IR values in here; every helper checks before it acts, so a second run
// changes nothing. Helper variables are globals prefixed imgc_.

import { helper as shellHelper, type HelperName as ShellHelperName } from '../shell/helpers.js';
import { fn, type HelperName } from '../../emit/cloud-init/calls.js';
import { webhookHelper } from '../webhook-sdk.js';

export type { HelperName };

interface Helper {
  readonly deps: readonly HelperName[];
  readonly code: readonly string[];
}

/**
 * A function the shell backend's phase scripts define too, taken from there
 * without its change tracking (imgc_dirty): runcmd reports no changes.
 */
const fromShell = (h: Exclude<ShellHelperName, 'aptRemove'>): Helper => shellHelper(h, { dirty: false }) as Helper;

const helpers: Record<HelperName, Helper> = {
  attrs: fromShell('attrs'),
  checked: fromShell('checked'),
  checkSudoers: fromShell('checkSudoers'),
  checkSshd: fromShell('checkSshd'),
  file: fromShell('file'),
  parent: fromShell('parent'),
  dir: fromShell('dir'),
  symlink: fromShell('symlink'),
  line: fromShell('line'),
  sysctl: fromShell('sysctl'),
  module: fromShell('module'),
  swapoff: {
    deps: ['file'],
    code: [
      '# imgc_swapoff FSTAB: comments out the swap entries of FSTAB, then turns swap off',
      '# now (cloud-init runs this on the live machine, not in a chroot).',
      'imgc_swapoff() {',
      '  if [ -f "$1" ]; then',
      '    imgc_want=$(LC_ALL=C awk \'$0 !~ /^[ \\t]*#/ && $3 == "swap" { print "#" $0; next } { print }\' "$1" && printf x)',
      '    imgc_file "$1" \'\' \'\' \'\' "${imgc_want%x}"',
      '  fi',
      '  swapoff -a',
      '}',
    ],
  },
  remove: fromShell('remove'),
  truncate: fromShell('truncate'),
  group: fromShell('group'),
  user: fromShell('user'),
  member: fromShell('member'),
  userShell: fromShell('userShell'),
  enable: fromShell('enable'),
  disable: fromShell('disable'),
  mask: fromShell('mask'),
  unmask: fromShell('unmask'),
  hold: fromShell('hold'),
  unhold: fromShell('unhold'),
  fetch: fromShell('fetch'),
  get: fromShell('get'),
  download: fromShell('download'),
  archive: fromShell('archive'),
  serviceNow: fromShell('serviceNow'),
  aptState: fromShell('aptState'),
  aptInstalled: fromShell('aptInstalled'),
  aptInstall: fromShell('aptInstall'),
  aptPurge: {
    deps: ['aptInstalled'],
    code: [
      '# imgc_apt_purge PACKAGE...: purges the PACKAGEs that are installed.',
      'imgc_apt_purge() {',
      '  for imgc_p in "$@"; do',
      '    shift',
      '    if imgc_apt_installed "$imgc_p"; then',
      '      set -- "$@" "$imgc_p"',
      '    fi',
      '  done',
      '  if [ "$#" -eq 0 ]; then',
      '    return 0',
      '  fi',
      '  DEBIAN_FRONTEND=noninteractive apt-get purge -y "$@"',
      '}',
    ],
  },
  aptChanged: {
    deps: ['aptState'],
    code: ['# imgc_apt_changed: an apt source changed; the next install updates the package lists.', 'imgc_apt_changed() {', '  imgc_apt_fresh=0', '}'],
  },
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
  eol: fromShell('eol'),
  lineinfile: fromShell('lineinfile'),
  blockinfile: fromShell('blockinfile'),
  inifile: fromShell('inifile'),
  keyedit: fromShell('keyedit'),
  aptUpgrade: fromShell('aptUpgrade'),
  puppet: fromShell('puppet'),
};

const order = Object.keys(helpers) as HelperName[];

/**
 * The first entry of runcmd or bootcmd: `set -eu` (cloud-init runs the entries
 * as one script and would otherwise go on after a failed one), the code of
 * `used` and what it calls, in this file's order, then the frame's `functions`.
 */
export const helperScript = (used: Iterable<HelperName>, functions: readonly string[] = []): string => {
  const want = new Set<HelperName>();
  const add = (h: HelperName): void => {
    if (want.has(h)) return;
    want.add(h);
    helpers[h].deps.forEach(add);
  };
  for (const h of used) add(h);
  const code = order.filter((h) => want.has(h)).map((h) => helpers[h].code.join('\n'));
  return `${['# imgc: stop at the first failed entry (cloud-init would run the rest).', 'set -eu', ...code, ...functions].join('\n')}\n`;
};

export { fn };
