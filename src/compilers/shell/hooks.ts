// hooks/NN-<phase>-pre.sh and -post.sh: a phase's hooks, run on the machine
// driving the build. Webhooks POST and events print one JSON line; script
// hooks run in the image root (chroot when IMGC_ROOT names one).
import type { Image, StepOf } from '../../ir/schema.js';
import type { PhaseFile } from './phase.js';
import { literalNote, where } from './phase.js';
import { comment, json, variablePrologue, word, words } from '../../emit/shell/quote.js';
import { variablesIn } from '../../core/variables.js';
import { summary } from '../summary.js';

type Hook = StepOf<'hook'>;

/** The JSON body around its run-time timestamp: `prefix "TIMESTAMP" suffix`. */
const bodyParts = (ir: Image, phase: string, when: 'pre' | 'post'): [string, string] => {
  // NUL cannot occur in the IR (assertCompilable refuses it), so the
  // placeholder's JSON text occurs exactly once.
  const placeholder = '\u0000';
  const text = json({ image: ir.name, phase, when, timestamp: placeholder, result: when === 'pre' ? 'starting' : 'ok' });
  const [prefix = '', suffix = ''] = text.split(json(placeholder));
  return [prefix, suffix];
};

const helpers = {
  body: (prefix: string, suffix: string): string[] => [
    '# imgc_body: the JSON body this file\'s webhooks and events send, timestamped now (UTC).',
    'imgc_body() {',
    '  imgc_now=$(date -u +%Y-%m-%dT%H:%M:%SZ)',
    `  printf '%s"%s"%s' ${word(prefix)} "$imgc_now" ${word(suffix)}`,
    '}',
  ],
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
  webhook: [
    '# imgc_json_field JSON NAME: the value of the top-level string or number field NAME of a',
    "# flat JSON object (a Cluster API Runtime SDK response), unescaped; empty when absent.",
    'imgc_json_field() {',
    "  printf '%s' \"$1\" | tr '\\n\\r\\t' '   ' | IMGC_KEY=$2 LC_ALL=C awk '",
    '    {',
    '      key = "\\"" ENVIRON["IMGC_KEY"] "\\"[ ]*:[ ]*"',
    '      if (match($0, key "\\"([^\\"\\\\\\\\]|\\\\\\\\.)*\\"")) {',
    '        v = substr($0, RSTART, RLENGTH)',
    '        sub(/^"[^"]*"[ ]*:[ ]*"/, "", v)',
    '        v = substr(v, 1, length(v) - 1)',
    '        gsub(/\\\\"/, "\\"", v)',
    '        gsub(/\\\\\\\\/, "\\\\", v)',
    '        print v',
    '      } else if (match($0, key "-?[0-9]+")) {',
    '        v = substr($0, RSTART, RLENGTH)',
    '        sub(/^.*:[ ]*/, "", v)',
    '        print v',
    '      }',
    '    }',
    "  '",
    '}',
    '',
    '# imgc_webhook URL TIMEOUT RETRIES fail|warn: POSTs the body to URL and reads the answer as',
    '# a Cluster API Runtime SDK hook response {status, message, retryAfterSeconds}: Failure',
    '# stops with its message; retryAfterSeconds > 0 waits that long and asks again, for at',
    '# most TIMEOUT seconds in all; a 2xx answer that is not such JSON is a Success. A request',
    '# that fails (no answer, not 2xx) is tried 1 + RETRIES times, each for at most TIMEOUT',
    '# seconds. Then it fails the run, or (warn) warns and goes on.',
    'imgc_webhook() {',
    '  imgc_json=$(imgc_body)',
    '  imgc_try=0',
    '  imgc_until=$(($(date +%s) + $2))',
    '  imgc_why=',
    '  while :; do',
    "    if imgc_answer=$(printf '%s' \"$imgc_json\" | curl -fsS --max-time \"$2\" -X POST -H 'Content-Type: application/json' \\",
    '      --data-binary @- --url "$1"); then',
    '      imgc_status=$(imgc_json_field "$imgc_answer" status)',
    '      imgc_message=$(imgc_json_field "$imgc_answer" message)',
    '      if [ "$imgc_status" = Failure ]; then',
    '        imgc_why="answered Failure: ${imgc_message:-no message}"',
    '        break',
    '      fi',
    '      imgc_after=$(imgc_json_field "$imgc_answer" retryAfterSeconds)',
    '      if [ "${imgc_after:-0}" -le 0 ]; then',
    '        return 0',
    '      fi',
    '      if [ "$(($(date +%s) + imgc_after))" -gt "$imgc_until" ]; then',
    '        imgc_why="still asked to retry after $2 s${imgc_message:+: $imgc_message}"',
    '        break',
    '      fi',
    "      printf 'imgc: webhook %s asks to retry after %s s%s\\n' \"$1\" \"$imgc_after\" \"${imgc_message:+: $imgc_message}\" >&2",
    '      sleep "$imgc_after"',
    '      continue',
    '    fi',
    '    imgc_try=$((imgc_try + 1))',
    '    if [ "$imgc_try" -gt "$3" ]; then',
    '      imgc_why="failed $imgc_try times"',
    '      break',
    '    fi',
    '    sleep 1',
    '  done',
    '  if [ "$4" = warn ]; then',
    "    printf 'imgc: warning: webhook %s %s; going on\\n' \"$1\" \"$imgc_why\" >&2",
    '    return 0',
    '  fi',
    "  printf 'imgc: webhook %s %s\\n' \"$1\" \"$imgc_why\" >&2",
    '  return 1',
    '}',
  ],
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

export const hooksScript = (ir: Image, f: PhaseFile, when: 'pre' | 'post', hooks: readonly Hook[]): string => {
  const types = new Set(hooks.map((h) => h.action.type));
  const [prefix, suffix] = bodyParts(ir, f.phase.name, when);
  const out: string[] = [
    '#!/bin/sh',
    comment(`Image ${ir.name}, phase ${f.index} of ${ir.phases.length}: ${f.phase.name}, ${when} hooks.`),
    comment(`Generated by imgc from ${ir.source} (imgc compile --target shell): edit the definition, not this file.`),
    '#',
    comment(`Runs on the machine driving the build, ${when === 'pre' ? 'before' : 'after'} phases/${f.stem}.sh (build.sh runs it).`),
    '# IMGC_ROOT is the image root (unset or / on a live host); script hooks run inside it.',
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
  if (types.has('event') || types.has('webhook')) out.push('', ...helpers.body(prefix, suffix));
  if (types.has('event')) out.push('', ...helpers.event);
  if (types.has('webhook')) out.push('', ...helpers.webhook);
  if (types.has('script')) out.push('', ...helpers.script);
  for (const h of hooks) {
    out.push('', comment(`${h.id}${where(h.loc)}: ${summary(h)}`), `imgc_hook=${word(h.id)}`, ...literalNote(h), call(h));
  }
  out.push('imgc_hook=');
  return `${out.join('\n')}\n`;
};
