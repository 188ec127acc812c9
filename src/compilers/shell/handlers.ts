// provision.sh's live-host handlers (../handlers.ts says which change
// notifies which): a flag per handler, set after a step that reported a
// change, and the handlers run once at the end of their phase, in a fixed
// order. IMGC_HANDLERS=auto (the default) runs them only on a booted systemd
// host (not in a chroot, never in an image build); always runs them wherever
// the script runs (a container or namespace whose kernel settings are its
// own); never leaves every change to the next boot.
import type { Image, Phase } from '../../ir/schema.js';
import { handlerCommand, handlerName, needsSystemd, phaseHandlers, type Handler, type PhaseHandlers } from '../handlers.js';
import { comment, word, words } from '../../emit/shell/quote.js';

const lines = (...ls: string[]): string => ls.join('\n');

/** The helpers, once per script (before the phases). */
export const handlerHelpers = lines(
  '# Handlers: IMGC_HANDLERS=auto runs them on a booted systemd host only (not in a',
  '# chroot); always runs them wherever this script runs; never skips them all.',
  'imgc_handlers=${IMGC_HANDLERS:-auto}',
  'case "$imgc_handlers" in',
  '  auto | always | never) ;;',
  '  *)',
  "    printf 'imgc: IMGC_HANDLERS is auto, always or never (not %s)\\n' \"$imgc_handlers\" >&2",
  '    exit 2',
  '    ;;',
  'esac',
  '# 1 when this is a booted systemd host (not a chroot).',
  'imgc_live=0',
  'if [ -d /run/systemd/system ] && ! systemd-detect-virt --quiet --chroot 2>/dev/null; then',
  '  imgc_live=1',
  'fi',
  '',
  '# imgc_handler NAME NOTIFIED SYSTEMD COMMAND...: runs COMMAND when a changed step notified',
  '# it (NOTIFIED is 1) and handlers run here; reports imgc-handler NAME ran|skipped|failed.',
  '# SYSTEMD is 1 when COMMAND talks to a running systemd; exit status 75 means "nothing to do here".',
  'imgc_handler() {',
  '  imgc_hname=$1',
  '  if [ "$2" -ne 1 ]; then',
  '    return 0',
  '  fi',
  '  if [ "$imgc_handlers" = never ] || { [ "$imgc_handlers" = auto ] && [ "$imgc_live" -ne 1 ]; }; then',
  "    printf 'imgc-handler %s skipped\\n' \"$imgc_hname\" >&3",
  "    printf 'imgc: %s not run (IMGC_HANDLERS=%s, booted systemd host: %s): the change applies at the next boot\\n' \"$imgc_hname\" \"$imgc_handlers\" \"$imgc_live\" >&2",
  '    return 0',
  '  fi',
  '  if [ "$3" -eq 1 ] && [ ! -d /run/systemd/system ]; then',
  "    printf 'imgc-handler %s skipped\\n' \"$imgc_hname\" >&3",
  "    printf 'imgc: %s not run: systemd is not running here\\n' \"$imgc_hname\" >&2",
  '    return 0',
  '  fi',
  '  shift 3',
  '  if "$@" </dev/null >&2; then',
  "    printf 'imgc-handler %s ran\\n' \"$imgc_hname\" >&3",
  '  else',
  '    imgc_rc=$?',
  '    if [ "$imgc_rc" -eq 75 ]; then',
  "      printf 'imgc-handler %s skipped\\n' \"$imgc_hname\" >&3",
  '      return 0',
  '    fi',
  "    printf 'imgc-handler %s failed\\n' \"$imgc_hname\" >&3",
  "    printf 'imgc: handler %s failed (exit status %s)\\n' \"$imgc_hname\" \"$imgc_rc\" >&2",
  '    exit 1',
  '  fi',
  '}',
  '',
  '# imgc_modprobe NAME: loads the kernel module NAME now; 75 when this kernel loads no',
  '# modules (no /proc/modules: a kernel without module support, or no /proc).',
  'imgc_modprobe() {',
  '  if [ ! -e /proc/modules ]; then',
  "    printf 'imgc: modprobe %s: this kernel has no loadable modules (no /proc/modules)\\n' \"$1\" >&2",
  '    return 75',
  '  fi',
  '  modprobe "$1"',
  '}',
  '',
  '# imgc_reboot_required NOTIFIED WHY: a change only a reboot applies; reported, and noted',
  '# in /run/reboot-required as Debian\'s tools do.',
  'imgc_reboot_required() {',
  '  if [ "$1" -ne 1 ]; then',
  '    return 0',
  '  fi',
  "  printf 'imgc-reboot-required %s\\n' \"$2\" >&3",
  "  printf 'imgc: reboot required: %s\\n' \"$2\" >&2",
  '  if [ -d /run ]; then',
  "    printf '*** System restart required ***\\n' >/run/reboot-required",
  '  fi',
  '}',
);

const flag = (i: number) => `imgc_h_${i}`;

/** The command a handler runs (as words of imgc_handler): modprobe through imgc_modprobe, which knows a kernel without modules. */
const command = (h: Exclude<Handler, { kind: 'reboot' }>): string => (h.kind === 'modprobe' ? `imgc_modprobe ${word(h.module)}` : words(handlerCommand(h)));

export interface ShellPhaseHandlers {
  readonly plan: PhaseHandlers;
  /** The phase's flags, all 0: at the start of the phase. */
  readonly init: string[];
  /** After `imgc_run ID …`: the flags a change by step ID sets. */
  readonly after: (stepId: string) => string[];
  /** At the end of the phase: the notified handlers. */
  readonly run: string[];
}

export const shellPhaseHandlers = (ir: Image, phase: Phase): ShellPhaseHandlers => {
  const plan = phaseHandlers(ir, phase);
  const init = plan.handlers.map((_, i) => `${flag(i)}=0`);
  const after = (id: string): string[] => {
    const hs = plan.notifies.get(id);
    if (!hs?.length) return [];
    return ['if [ "$imgc_dirty" -eq 1 ]; then', ...hs.map((i) => `  ${flag(i)}=1`), 'fi'];
  };
  const run = plan.handlers.length
    ? [
        '',
        comment(`Handlers of phase ${phase.name}: each runs once if a step above changed what it applies.`),
        ...plan.handlers.map((h, i) =>
          h.kind === 'reboot'
            ? `imgc_reboot_required "$${flag(i)}" ${word(h.why)}`
            : `imgc_handler ${word(handlerName(h))} "$${flag(i)}" ${needsSystemd(h) ? 1 : 0} ${command(h)}`,
        ),
      ]
    : [];
  return { plan, init, after, run };
};
