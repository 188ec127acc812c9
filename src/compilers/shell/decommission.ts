// --decommission: decommission.sh, the inverse of the runtime phases on a host
// that provision.sh (imgc compile --target shell --runtime) provisioned. It
// undoes only what the host's record lists (see ../runtime.ts), in reverse
// order, then removes the record.
import { blockMarkers } from '../../core/creations.js';
import type { Image } from '../../ir/schema.js';
import { drainPlan, keptEffects, runtimePlan, undoOrder, type Creation } from '../runtime.js';
import type { CompiledFiles } from '../types.js';
import { helperCode, type HelperName } from './helpers.js';
import { literalNote, runtime as stepRuntime, stepComment, where, type PhaseFile } from './phase.js';
import { drivenHooksFile } from './hooks.js';
import { decommissionPhase } from '../../ir/phases.js';
import { comment, word, words } from '../../emit/shell/quote.js';
import { summary } from '../summary.js';
import { livePhase, recordNote, runtimeHelpers, type LivePhaseState, type RuntimeShellOptions } from './runtime.js';
import { handlerHelpers } from './handlers.js';
import { variablePrologue } from '../../emit/shell/quote.js';
import { variablesIn } from '../../core/variables.js';

const lines = (...ls: string[]): string => ls.join('\n');

const undoHelpers = {
  recorded: lines(
    '# imgc_recorded TOKEN: the record lists TOKEN.',
    'imgc_recorded() {',
    '  grep -qxF -- "$1" "$imgc_record_file"',
    '}',
    '# imgc_forget TOKEN: drops TOKEN from the record.',
    'imgc_forget() {',
    '  imgc_tmp=$(mktemp "$imgc_record_file.imgc-XXXXXX")',
    '  grep -vxF -- "$1" "$imgc_record_file" >"$imgc_tmp" || :',
    '  mv -f -- "$imgc_tmp" "$imgc_record_file"',
    '  imgc_tmp=',
    '}',
  ),
  live: lines(
    '# 1 when this is a booted systemd host (not a chroot): only then are services stopped.',
    'imgc_live=0',
    'if [ -d /run/systemd/system ] && ! systemd-detect-virt --quiet --chroot 2>/dev/null; then',
    '  imgc_live=1',
    'fi',
  ),
  service: lines(
    '# imgc_undo_service UNIT: stops (on a live host) and disables UNIT.',
    'imgc_undo_service() {',
    '  if [ "$imgc_live" -eq 1 ]; then',
    '    systemctl stop "$1" || :',
    '  fi',
    '  if systemctl is-enabled --quiet "$1" 2>/dev/null; then',
    '    systemctl disable "$1"',
    '  fi',
    '  imgc_dirty=1',
    '}',
  ),
  path: lines(
    '# imgc_undo_path PATH: removes PATH: a file or symbolic link, or a directory when empty.',
    'imgc_undo_path() {',
    '  if [ -h "$1" ] || [ -f "$1" ]; then',
    '    rm -f -- "$1"',
    '    imgc_dirty=1',
    '  elif [ -d "$1" ]; then',
    '    if rmdir -- "$1" 2>/dev/null; then',
    '      imgc_dirty=1',
    '    else',
    "      printf 'imgc: keeping %s: not empty\\n' \"$1\" >&2",
    '    fi',
    '  fi',
    '}',
  ),
  lineFile: lines(
    '# imgc_undo_line_file FILE: removes FILE when no line is left in it.',
    'imgc_undo_line_file() {',
    '  if [ -f "$1" ] && [ ! -s "$1" ]; then',
    '    rm -f -- "$1"',
    '    imgc_dirty=1',
    '  elif [ -e "$1" ]; then',
    "    printf 'imgc: keeping %s: it has other lines\\n' \"$1\" >&2",
    '  fi',
    '}',
  ),
  dropLine: lines(
    '# imgc_drop_line FILE SEP KEY: FILE without the lines whose key is KEY.',
    'imgc_drop_line() {',
    '  if ! imgc_has_line "$1" "$2" "$3"; then',
    '    return 0',
    '  fi',
    '  imgc_want=$(IMGC_SEP=$2 IMGC_KEY=$3 LC_ALL=C awk \'',
    '    BEGIN { sep = ENVIRON["IMGC_SEP"]; key = ENVIRON["IMGC_KEY"] }',
    '    {',
    '      k = $0',
    '      if (sep != "") {',
    '        i = index(k, sep)',
    '        if (i == 0) { print; next }',
    '        k = substr(k, 1, i - 1)',
    '      }',
    '      sub(/^[ \\t]+/, "", k)',
    '      sub(/[ \\t]+$/, "", k)',
    '      if (k != key) print',
    '    }',
    '  \' "$1" && printf x)',
    '  imgc_file "$1" \'\' \'\' \'\' "${imgc_want%x}"',
    '}',
  ),
  user: lines(
    '# imgc_undo_user NAME HOME_TOO: deletes user NAME (and its home when HOME_TOO is 1).',
    'imgc_undo_user() {',
    '  if ! getent passwd "$1" >/dev/null; then',
    '    return 0',
    '  fi',
    '  if [ "$2" -eq 1 ]; then',
    '    userdel --remove "$1" 2>/dev/null || userdel --remove "$1"',
    '  else',
    '    userdel "$1"',
    '  fi',
    '  imgc_dirty=1',
    '}',
  ),
  group: lines(
    '# imgc_undo_group NAME: deletes group NAME (userdel may have done it already).',
    'imgc_undo_group() {',
    '  if getent group "$1" >/dev/null; then',
    '    groupdel "$1"',
    '    imgc_dirty=1',
    '  fi',
    '}',
  ),
};
type UndoHelper = keyof typeof undoHelpers;

/** The undo lines of one creation, guarded by the record. */
const undo = (c: Creation, need: Set<UndoHelper>, used: Set<HelperName>): string[] => {
  const guard = (token: string, body: string[]) => [`if imgc_recorded ${word(token)}; then`, ...body.map((l) => `  ${l}`), `  imgc_forget ${word(token)}`, 'fi'];
  switch (c.kind) {
    case 'service':
      need.add('service');
      need.add('live');
      return guard(c.token, [`imgc_undo_service ${word(c.unit)}`]);
    case 'package':
      // collected per step by the caller
      return [];
    case 'path':
      if (c.type === 'lineFile') {
        need.add('lineFile');
        return guard(c.token, [`imgc_undo_line_file ${word(c.path)}`]);
      }
      need.add('path');
      return guard(c.token, [`imgc_undo_path ${word(c.path)}`]);
    case 'line':
      need.add('dropLine');
      used.add('file');
      return guard(c.token, [`imgc_drop_line ${words([c.file, c.sep, c.key])}`]);
    case 'block':
      // The phase scripts' own helper: an empty block removes the markers and what lies between them.
      used.add('blockinfile');
      return guard(c.token, [`imgc_blockinfile ${words([c.file, ...blockMarkers(c), ''])}`]);
    case 'user':
      need.add('user');
      if (!c.home) return guard(c.token, [`imgc_undo_user ${word(c.name)} 0`]);
      return [
        'imgc_home=0',
        `if imgc_recorded ${word(c.home.token)}; then`,
        '  imgc_home=1',
        'fi',
        ...guard(c.token, [`imgc_undo_user ${word(c.name)} "$imgc_home"`]),
        `if imgc_recorded ${word(c.home.token)}; then`,
        `  imgc_forget ${word(c.home.token)}`,
        'fi',
      ];
    case 'group':
      need.add('group');
      return guard(c.token, [`imgc_undo_group ${word(c.name)}`]);
  }
};

/** decommission.sh (the drain phase, then the undo) and the driving machine's files of the drain and decommission webhook and event hooks. */
export const shellDecommission = (ir: Image, opts: RuntimeShellOptions): CompiledFiles => {
  const { stems } = opts;
  const plan = runtimePlan(ir);
  // The drain phase runs first, as provision.sh runs a phase: a failing step stops the script before any undo.
  const drain = drainPlan(ir);
  const state: LivePhaseState = { used: new Set<HelperName>(), own: new Set(), files: {}, n: 0, anyHandlers: false };
  const drainBody = drain ? livePhase(ir, drain, opts, state) : [];
  const files = state.files;
  // The edge's hooks: webhooks and events in hooks/NN-decommission-{pre,post}.sh, run where the run is driven;
  // script hooks here, on the host, around the undo.
  const edge = decommissionPhase(ir);
  const hookBody = (when: 'pre' | 'post'): string[] => {
    if (!edge) return [];
    const f = stems.find((s) => s.phase === edge)!;
    const driven = drivenHooksFile(ir, f, when);
    if (driven) files[driven.file] = driven.text;
    return edge[when].flatMap((h, i) =>
      h.action.type === 'script'
        ? ['', stepComment(h), ...literalNote(h), `${when}_hook_${i + 1}() {`, `  /bin/sh -ec ${word(h.action.run)}`, '}', `imgc_run ${word(h.id)} ${when}_hook_${i + 1}`]
        : ['', comment(`${h.id}${where(h.loc)}: ${summary(h)}: hooks/${f.stem}-${when}.sh runs it on the machine driving this run, ${when === 'pre' ? 'before' : 'after'} this script.`)],
    );
  };
  const need = new Set<UndoHelper>(['recorded']);
  const used = state.used;
  const body: string[] = [];
  // Reverse run order, one function per step, its creations reversed.
  const bySteps: { id: string; step: (typeof plan.phases)[number]['steps'][number]['step']; items: Creation[] }[] = [];
  for (const { step, creation } of undoOrder(plan)) {
    const last = bySteps[bySteps.length - 1];
    if (last && last.id === step.id) last.items.push(creation);
    else bySteps.push({ id: step.id, step, items: [creation] });
  }
  bySteps.forEach(({ step, items }, i) => {
    const lines: string[] = [];
    const pkgs = items.filter((c): c is Extract<Creation, { kind: 'package' }> => c.kind === 'package');
    if (pkgs.length) {
      const purge = opts.pm().purgeArgs;
      purge.helpers.forEach((h) => used.add(h));
      lines.push('set --', ...pkgs.flatMap((c) => [`if imgc_recorded ${word(c.token)}; then`, `  set -- "$@" ${word(c.name)}`, 'fi']), ...purge.lines, ...pkgs.map((c) => `imgc_forget ${word(c.token)}`));
    }
    for (const c of items) lines.push(...undo(c, need, used));
    if (need.has('dropLine')) need.add('lineFile');
    body.push('', comment(`${step.id}${where(step.loc)}: undo ${summary(step)}`), `undo_${i + 1}() {`, ...lines.map((l) => `  ${l}`), '}', `imgc_run ${word(step.id)} undo_${i + 1}`);
  });
  const kept = keptEffects(plan);
  const out: string[] = [
    '#!/bin/sh',
    comment(`Image ${ir.name}: decommission, the inverse of the runtime phases (${plan.phases.map((p) => p.phase.name).join(', ') || 'none'}).`),
    comment(`Generated by imgc from ${ir.source} (imgc compile --target shell --decommission): edit the definition, not this file.`),
    '#',
    '# Run as root on a host provision.sh provisioned:   ssh HOST sudo sh -s < decommission.sh',
    '# or in a root directory:                          chroot ROOT /bin/sh -s < decommission.sh',
    ...recordNote(plan),
    ...(drain
      ? [
          '# First the drain phase runs here, as provision.sh runs a phase (its steps are not',
          '# recorded, and not undone); a step of it that fails stops this script before',
          '# anything is undone.',
        ]
      : []),
    '# Undone: recorded services are disabled (and stopped, on a booted host, not in a',
    '# chroot); recorded packages purged (apt-get purge, then autoremove --purge); recorded',
    '# files and symbolic links removed, directories only when empty; recorded users and',
    '# groups deleted (a home the user step made goes with its user); recorded sysctl and',
    '# module lines deleted, and their file when it is left empty and was created.',
    '# Left as they are: the package lists and caches apt keeps, logs, and',
    ...(kept.length ? ['# these steps\' effects:', ...kept.map((k) => comment(`  ${k.step.id}: ${k.why}`))] : ['# nothing else.']),
    'set -eu',
    'umask 022',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    'export PATH',
    ...(drain ? variablePrologue(variablesIn(ir, [drain.phase])) : []),
    `imgc_record_dir=${word(plan.recordDir)}`,
    'imgc_record_file=$imgc_record_dir/created',
    'if [ ! -f "$imgc_record_file" ]; then',
    `  printf 'imgc: no record at %s: nothing of %s to undo\\n' "$imgc_record_file" ${word(ir.name)} >&2`,
    '  exit 0',
    'fi',
  ];
  if (need.has('dropLine')) state.own.add('hasLine');
  const own = (Object.keys(runtimeHelpers) as (keyof typeof runtimeHelpers)[]).filter((h) => state.own.has(h)).map((h) => runtimeHelpers[h]);
  const undoCode = (Object.keys(undoHelpers) as UndoHelper[]).filter((h) => need.has(h)).map((h) => undoHelpers[h]);
  out.push(
    '',
    ...helperCode(used).flatMap((h) => [h, '']),
    ...own.flatMap((h) => [h, '']),
    ...undoCode.flatMap((h) => [h, '']),
    ...stepRuntime,
    ...(state.anyHandlers ? ['', handlerHelpers] : []),
    ...drainBody,
    ...(drain ? ['imgc_changed=0'] : []),
    ...hookBody('pre'),
    ...body,
    ...hookBody('post'),
  );
  out.push(
    '',
    '# The record: gone when everything in it was undone; kept (and reported) otherwise.',
    'if [ -s "$imgc_record_file" ]; then',
    "  printf 'imgc: the record %s still lists (not undone by this script):\\n' \"$imgc_record_file\" >&2",
    '  cat -- "$imgc_record_file" >&2',
    '  exit 1',
    'fi',
    'rm -f -- "$imgc_record_file"',
    'rmdir -- "$imgc_record_dir" 2>/dev/null || :',
    'rmdir -- "${imgc_record_dir%/*}" 2>/dev/null || :',
    `printf 'imgc-phase %s done changed=%s\\n' decommission "$imgc_changed" >&3`,
  );
  return { ...files, 'decommission.sh': `${out.join('\n')}\n` };
};
