// hooks/NN-<phase>-pre.sh and -post.sh: a phase's hooks, run on the machine
// driving the build. Webhooks POST and events print one JSON line; script
// hooks run in the image root (chroot when IMGC_ROOT names one).
import type { Image, StepOf } from '../../ir/schema.js';
import type { PhaseFile } from './phase.js';
import { literalNote, where } from './phase.js';
import { comment, json, variablePrologue, word, words } from '../../emit/shell/quote.js';
import { variablesIn } from '../../core/variables.js';
import { summary } from '../summary.js';
import { webhookHelper } from '../webhook-sdk.js';

type Hook = StepOf<'hook'>;

/**
 * The JSON body with holes for its run-time values: the parts between the
 * timestamp and, for `failed`, the message (a JSON string, made at run time).
 */
const bodyParts = (ir: Image, phase: string, when: 'pre' | 'post', result: 'starting' | 'ok' | 'failed'): string[] => {
  // NUL cannot occur in the IR (assertCompilable refuses it), so the
  // holes' JSON text occurs only where the holes are.
  const hole = '\u0000';
  const text = json({ image: ir.name, phase, when, timestamp: hole, result, ...(result === 'failed' ? { message: hole } : {}) });
  return text.split(json(hole));
};

/** The shell's JSON string quoting, for a failed phase's message (the one place it is written). */
const jsonString: readonly string[] = [
  '# imgc_json_string TEXT: TEXT as a JSON string (quoted; \\, " and control characters escaped).',
  'imgc_json_string() {',
  "  IMGC_TEXT=$1 LC_ALL=C awk 'BEGIN {",
  String.raw`    for (n = 1; n < 32; n++) esc[sprintf("%c", n)] = sprintf("\\u%04x", n)`,
  String.raw`    esc["\n"] = "\\n"`,
  String.raw`    esc["\t"] = "\\t"`,
  String.raw`    esc["\r"] = "\\r"`,
  String.raw`    esc["\""] = "\\\""`,
  String.raw`    esc["\\"] = "\\\\"`,
  '    s = ENVIRON["IMGC_TEXT"]',
  '    out = ""',
  '    for (i = 1; i <= length(s); i++) {',
  '      c = substr(s, i, 1)',
  '      out = out (c in esc ? esc[c] : c)',
  '    }',
  String.raw`    printf "\"%s\"", out`,
  "  }'",
  '}',
];

const helpers = {
  body: (ir: Image, phase: string, when: 'pre' | 'post'): string[] => {
    const now = 'imgc_now=$(date -u +%Y-%m-%dT%H:%M:%SZ)';
    if (when === 'pre') {
      const [prefix = '', suffix = ''] = bodyParts(ir, phase, when, 'starting');
      return [
        '# imgc_body: the JSON body this file\'s webhooks and events send, timestamped now (UTC).',
        'imgc_body() {',
        `  ${now}`,
        `  printf '%s"%s"%s' ${word(prefix)} "$imgc_now" ${word(suffix)}`,
        '}',
      ];
    }
    const [okPrefix = '', okSuffix = ''] = bodyParts(ir, phase, when, 'ok');
    const [prefix = '', middle = '', suffix = ''] = bodyParts(ir, phase, when, 'failed');
    return [
      '# imgc_body: the JSON body this file\'s webhooks and events send, timestamped now (UTC):',
      '# result ok, or (IMGC_RESULT=failed) failed with the message IMGC_MESSAGE.',
      'imgc_body() {',
      `  ${now}`,
      '  case ${IMGC_RESULT:-ok} in',
      '    ok)',
      `      printf '%s"%s"%s' ${word(okPrefix)} "$imgc_now" ${word(okSuffix)}`,
      '      ;;',
      '    failed)',
      '      imgc_message_json=$(imgc_json_string "${IMGC_MESSAGE:-}")',
      `      printf '%s"%s"%s%s%s' ${word(prefix)} "$imgc_now" ${word(middle)} "$imgc_message_json" ${word(suffix)}`,
      '      ;;',
      '    *)',
      "      printf 'imgc: IMGC_RESULT is %s, not ok or failed\\n' \"$IMGC_RESULT\" >&2",
      '      return 2',
      '      ;;',
      '  esac',
      '}',
      '',
      ...jsonString,
    ];
  },
  event: [
    '# imgc_event stdout|FILE: prints the body as one line on stdout, or appends it to FILE.',
    'imgc_event() {',
    '  imgc_json=$(imgc_body)',
    '  if [ "$1" = stdout ]; then',
    "    printf '%s\\n' \"$imgc_json\"",
    '  else',
    "    printf '%s\\n' \"$imgc_json\" >>\"$1\"",
    '  fi',
    '}',
  ],
  webhook: webhookHelper,
  script: [
    '# imgc_in_root SCRIPT: runs SCRIPT with /bin/sh -e in the image root: chrooted into',
    '# IMGC_ROOT when it is set and not /, else on this host. Its stdout goes to stderr.',
    'imgc_in_root() {',
    '  if [ -n "${IMGC_ROOT:-}" ] && [ "$IMGC_ROOT" != / ]; then',
    '    chroot "$IMGC_ROOT" /bin/sh -ec "$1" </dev/null >&2',
    '  else',
    '    /bin/sh -ec "$1" </dev/null >&2',
    '  fi',
    '}',
  ],
};

const call = (h: Hook): string => {
  const a = h.action;
  switch (a.type) {
    case 'event':
      return `imgc_event ${word(a.target)}`;
    case 'webhook':
      return `imgc_webhook ${words([a.url, String(a.timeoutSeconds), String(a.retries), a.onFailure])}`;
    case 'script':
      return `imgc_in_root ${word(a.run)}`;
  }
};

/**
 * On a live host, a phase's webhook and event hooks run where the run is
 * driven, from hooks/<stem>-<when>.sh; its script hooks run on the host. The
 * file's name and text, or undefined when the phase has no such hook.
 */
export const drivenHooksFile = (ir: Image, f: PhaseFile, when: 'pre' | 'post'): { file: string; text: string } | undefined => {
  const hooks = f.phase[when].filter((h) => h.action.type !== 'script');
  return hooks.length ? { file: `hooks/${f.stem}-${when}.sh`, text: hooksScript(ir, f, when, hooks) } : undefined;
};

export const hooksScript = (ir: Image, f: PhaseFile, when: 'pre' | 'post', hooks: readonly Hook[]): string => {
  const types = new Set(hooks.map((h) => h.action.type));
  const out: string[] = [
    '#!/bin/sh',
    comment(`Image ${ir.name}, phase ${f.index} of ${ir.phases.length}: ${f.phase.name}, ${when} hooks.`),
    comment(`Generated by imgc from ${ir.source} (imgc compile --target shell): edit the definition, not this file.`),
    '#',
    comment(`Runs on the machine driving the build, ${when === 'pre' ? 'before' : 'after'} phases/${f.stem}.sh (build.sh runs it).`),
    '# IMGC_ROOT is the image root (unset or / on a live host); script hooks run inside it.',
    ...(when === 'post' ? ['# IMGC_RESULT=failed (default ok) and IMGC_MESSAGE: the phase failed, and how (build.sh sets them).'] : []),
    '# stdout carries only the lines of event hooks; everything else goes to stderr.',
    'set -eu',
    ...variablePrologue(variablesIn(ir, hooks)),
    '',
    'imgc_hook=',
    'imgc_exit() {',
    '  imgc_rc=$?',
    '  if [ "$imgc_rc" -ne 0 ] && [ -n "$imgc_hook" ]; then',
    "    printf 'imgc: hook %s failed (exit status %s)\\n' \"$imgc_hook\" \"$imgc_rc\" >&2",
    '  fi',
    '  exit "$imgc_rc"',
    '}',
    'trap imgc_exit EXIT',
  ];
  if (types.has('event') || types.has('webhook')) out.push('', ...helpers.body(ir, f.phase.name, when));
  if (types.has('event')) out.push('', ...helpers.event);
  if (types.has('webhook')) out.push('', ...helpers.webhook);
  if (types.has('script')) out.push('', ...helpers.script);
  for (const h of hooks) {
    out.push('', comment(`${h.id}${where(h.loc)}: ${summary(h)}`), `imgc_hook=${word(h.id)}`, ...literalNote(h), call(h));
  }
  out.push('imgc_hook=');
  return `${out.join('\n')}\n`;
};
