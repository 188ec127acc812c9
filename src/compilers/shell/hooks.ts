// hooks/NN-<phase>-pre.sh and -post.sh: a phase's hooks, run on the machine
// driving the build. Webhooks POST and events print one JSON line; script
// hooks run in the image root (chroot when IMGC_ROOT names one).
import type { Hook, Image } from '../../ir/schema.js';
import type { PhaseFile } from './phase.js';
import { literalNote, where } from './phase.js';
import { comment, json, variablePrologue, word, words } from '../../emit/shell/quote.js';
import { variablesIn } from '../../core/variables.js';
import { summary } from '../summary.js';
import { webhookHelper } from '../webhook-sdk.js';
import { requestTemplate, type HookResult, type RunField } from '../hook-request.js';


/** How the shell writes each run-time value into the body: printf's format for it, and its argument. */
const runValue: { readonly [K in RunField]: { format: string; arg: string } } = {
  // IMGC_HOST, as a JSON string (imgc_body sets it).
  hosts: { format: '[%s]', arg: '"$imgc_host_json"' },
  timestamp: { format: '"%s"', arg: '"$imgc_now"' },
  message: { format: '%s', arg: '"$imgc_message_json"' },
};

/** The printf command that writes the request (src/compilers/hook-request.ts), its run-time values from shell variables. */
const printBody = (ir: Image, phase: string, when: 'pre' | 'post', result: HookResult, onHosts: boolean): string => {
  const { parts, holes } = requestTemplate({ image: ir.name, phase, when, result, onHosts }, json);
  const format = ['%s', ...holes.map((h) => `${runValue[h].format}%s`)].join('');
  const args = parts.flatMap((p, i) => (i === 0 ? [word(p)] : [runValue[holes[i - 1]!].arg, word(p)]));
  return `printf '${format}' ${args.join(' ')}`;
};

/** The shell's JSON string quoting, for a failed phase's message and the host's name (the one place it is written). */
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
  body: (ir: Image, phase: string, when: 'pre' | 'post', onHosts: boolean): string[] => {
    const now = ['imgc_now=$(date -u +%Y-%m-%dT%H:%M:%SZ)', ...(onHosts ? ['imgc_host_json=$(imgc_json_string "$IMGC_HOST")'] : [])];
    if (when === 'pre') {
      return [
        `# imgc_body: the JSON body this file's webhooks and events send, timestamped now (UTC)${onHosts ? ', for IMGC_HOST' : ''}.`,
        'imgc_body() {',
        ...now.map((l) => `  ${l}`),
        `  ${printBody(ir, phase, when, 'starting', onHosts)}`,
        '}',
        ...(onHosts ? ['', ...jsonString] : []),
      ];
    }
    return [
      `# imgc_body: the JSON body this file's webhooks and events send, timestamped now (UTC)${onHosts ? ', for IMGC_HOST' : ''}:`,
      '# result ok, or (IMGC_RESULT=failed) failed with the message IMGC_MESSAGE.',
      'imgc_body() {',
      ...now.map((l) => `  ${l}`),
      '  case ${IMGC_RESULT:-ok} in',
      '    ok)',
      `      ${printBody(ir, phase, when, 'ok', onHosts)}`,
      '      ;;',
      '    failed)',
      '      imgc_message_json=$(imgc_json_string "${IMGC_MESSAGE:-}")',
      `      ${printBody(ir, phase, when, 'failed', onHosts)}`,
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
  return hooks.length ? { file: `hooks/${f.stem}-${when}.sh`, text: hooksScript(ir, f, when, hooks, true) } : undefined;
};

/** Before a live host's hooks send anything: the file runs on the driving machine, which cannot tell which host the run is for. */
const hostNeeded: readonly string[] = [
  'if [ -z "${IMGC_HOST:-}" ]; then',
  "  printf 'imgc: IMGC_HOST is not set: name the host this run is for (IMGC_HOST=HOST sh %s)\\n' \"$0\" >&2",
  '  exit 2',
  'fi',
];

/** A phase's hook file; `onHosts`: for a live host's run (IMGC_HOST names it), not an image build. */
export const hooksScript = (ir: Image, f: PhaseFile, when: 'pre' | 'post', hooks: readonly Hook[], onHosts = false): string => {
  const types = new Set(hooks.map((h) => h.action.type));
  const out: string[] = [
    '#!/bin/sh',
    comment(`Image ${ir.name}, phase ${f.index} of ${ir.phases.length}: ${f.phase.name}, ${when} hooks.`),
    comment(`Generated by imgc from ${ir.source} (imgc compile --target shell): edit the definition, not this file.`),
    '#',
    comment(`Runs on the machine driving the build, ${when === 'pre' ? 'before' : 'after'} phases/${f.stem}.sh (build.sh runs it).`),
    '# IMGC_ROOT is the image root (unset or / on a live host); script hooks run inside it.',
    ...(onHosts ? ['# IMGC_HOST: the host this run is for, as the requests name it (hosts); required.'] : []),
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
  const sends = types.has('event') || types.has('webhook');
  if (sends && onHosts) out.push(...hostNeeded);
  if (sends) out.push('', ...helpers.body(ir, f.phase.name, when, onHosts));
  if (types.has('event')) out.push('', ...helpers.event);
  if (types.has('webhook')) out.push('', ...helpers.webhook);
  if (types.has('script')) out.push('', ...helpers.script);
  for (const h of hooks) {
    out.push('', comment(`${h.id}${where(h.loc)}: ${summary(h)}`), `imgc_hook=${word(h.id)}`, ...literalNote(h), call(h));
  }
  out.push('imgc_hook=');
  return `${out.join('\n')}\n`;
};
