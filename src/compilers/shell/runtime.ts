// --runtime: provision.sh, the runtime phases for an existing host, run as
// root over SSH (`ssh host sudo sh -s < provision.sh`) or in a chroot
// (`chroot ROOT /bin/sh -s < provision.sh`). A preflight checks the host
// contract first and exits 3, changing nothing, when something is missing.
// Every step records what it created on the host (see ../runtime.ts), which
// decommission.sh reads. Webhook and event hooks run on the machine driving
// the run: hooks/NN-<phase>-{pre,post}.sh, as in the build output.
import { blockMarkers } from '../../core/creations.js';
import { aptSourcesPath } from '../../core/apt.js';
import type { Image } from '../../ir/schema.js';
import { isHook, kindOf } from '../../steps/index.js';
import { preflightLabel, runtimePlan, type ContractFact, type Creation, type RuntimePhase, type RuntimePlan } from '../runtime.js';
import type { CompiledFiles } from '../types.js';
import type { Emitted } from '../../emit/shell/emitted.js';
import { helperCode, type HelperName } from './helpers.js';
import { handlerHelpers, shellPhaseHandlers } from './handlers.js';
import { drivenHooksFile } from './hooks.js';
import { packageManagers, type ShellRendering as PackageManager } from '../../steps/package-managers.js';
import { literalNote, runStep, runtime as stepRuntime, stepComment, where, type PhaseFile } from './phase.js';
import { comment, variablePrologue, word, words } from '../../emit/shell/quote.js';
import { variablesIn } from '../../core/variables.js';
import { emitStep, isRootStep, type StepContext } from './steps.js';
import { summary } from '../summary.js';


const lines = (...ls: string[]): string => ls.join('\n');

/** Static helpers of the runtime and decommission scripts (no IR values: those are arguments). */
export const runtimeHelpers = {
  exists: lines(
    '# imgc_exists PATH: PATH exists (a dangling symbolic link counts).',
    'imgc_exists() {',
    '  [ -e "$1" ] || [ -h "$1" ]',
    '}',
  ),
  unit: lines(
    '# imgc_unit_exists UNIT: a unit file UNIT is installed.',
    'imgc_unit_exists() {',
    '  for imgc_d in /etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system /lib/systemd/system /usr/lib/systemd/system; do',
    '    if [ -e "$imgc_d/$1" ]; then',
    '      return 0',
    '    fi',
    '  done',
    '  return 1',
    '}',
  ),
  pathIs: lines(
    '# imgc_path_is PATH TYPE OWNER GROUP MODE: PATH is there with that type (dir, file, symlink,',
    '# other), owner, group and mode (4 octal digits); an empty argument is not asked. Not',
    '# followed when a link. imgc_has says what the host has.',
    'imgc_path_is() {',
    '  if ! [ -e "$1" ] && ! [ -h "$1" ]; then',
    "    imgc_has='no such path'",
    '    return 1',
    '  fi',
    "  imgc_st=$(LC_ALL=C stat -c '%U %G %a %F' -- \"$1\") || return 1",
    '  imgc_u=${imgc_st%% *}',
    '  imgc_st=${imgc_st#* }',
    '  imgc_g=${imgc_st%% *}',
    '  imgc_st=${imgc_st#* }',
    "  imgc_m=$(printf '%04d' \"${imgc_st%% *}\")",
    '  case ${imgc_st#* } in',
    "    directory) imgc_t='dir' ;;",
    "    regular*) imgc_t='file' ;;",
    "    'symbolic link') imgc_t='symlink' ;;",
    "    *) imgc_t='other' ;;",
    '  esac',
    '  imgc_has="type $imgc_t, owner $imgc_u, group $imgc_g, mode $imgc_m"',
    '  { [ -z "$2" ] || [ "$2" = "$imgc_t" ]; } && { [ -z "$3" ] || [ "$3" = "$imgc_u" ]; } &&',
    '    { [ -z "$4" ] || [ "$4" = "$imgc_g" ]; } && { [ -z "$5" ] || [ "$5" = "$imgc_m" ]; }',
    '}',
  ),
  enabled: lines(
    '# imgc_enabled UNIT: UNIT is enabled.',
    'imgc_enabled() {',
    '  systemctl is-enabled --quiet "$1" 2>/dev/null',
    '}',
  ),
  hasLine: lines(
    '# imgc_has_line FILE SEP KEY: FILE has a line whose key is KEY (as imgc_line reads keys).',
    'imgc_has_line() {',
    '  [ -f "$1" ] || return 1',
    '  IMGC_SEP=$2 IMGC_KEY=$3 LC_ALL=C awk \'',
    '    BEGIN { sep = ENVIRON["IMGC_SEP"]; key = ENVIRON["IMGC_KEY"]; found = 1 }',
    '    {',
    '      k = $0',
    '      if (sep != "") {',
    '        i = index(k, sep)',
    '        if (i == 0) next',
    '        k = substr(k, 1, i - 1)',
    '      }',
    '      sub(/^[ \\t]+/, "", k)',
    '      sub(/[ \\t]+$/, "", k)',
    '      if (k == key) found = 0',
    '    }',
    '    END { exit found }',
    '  \' "$1"',
    '}',
  ),
  hasBlock: lines(
    '# imgc_has_block FILE BEGIN END: FILE has the marker lines BEGIN and END of a block.',
    'imgc_has_block() {',
    '  [ -f "$1" ] && grep -qxF -- "$2" "$1" && grep -qxF -- "$3" "$1"',
    '}',
  ),
  osRelease: lines(
    '# imgc_os_field NAME: the value of NAME in /etc/os-release, unquoted (empty when missing).',
    'imgc_os_field() {',
    '  if [ -r /etc/os-release ]; then',
    '    IMGC_KEY=$1 LC_ALL=C awk \'',
    '      BEGIN { key = ENVIRON["IMGC_KEY"] }',
    '      index($0, key "=") == 1 {',
    '        v = substr($0, length(key) + 2)',
    '        if (v ~ /^".*"$/ || v ~ /^\\047.*\\047$/) v = substr(v, 2, length(v) - 2)',
    '        print v',
    '      }',
    '    \' /etc/os-release',
    '  fi',
    '}',
  ),
  record: lines(
    '# imgc_record TOKEN: notes in the host\'s record that this run created TOKEN\'s thing.',
    'imgc_record() {',
    '  if [ ! -d "$imgc_record_dir" ]; then',
    '    mkdir -p -- "$imgc_record_dir"',
    '  fi',
    '  if [ ! -f "$imgc_record_file" ] || ! grep -qxF -- "$1" "$imgc_record_file"; then',
    "    printf '%s\\n' \"$1\" >>\"$imgc_record_file\"",
    '  fi',
    '}',
  ),
};

/** The "does it exist now?" test of a creation, and the helpers it calls. */
export const probe = (c: Creation, pm: Image['base']['packageManager']): { test: string; helpers: HelperName[]; own: (keyof typeof runtimeHelpers)[] } => {
  switch (c.kind) {
    case 'user':
      return { test: `getent passwd ${word(c.name)} >/dev/null`, helpers: [], own: [] };
    case 'group':
      return { test: `getent group ${word(c.name)} >/dev/null`, helpers: [], own: [] };
    case 'path':
      return { test: `imgc_exists ${word(c.path)}`, helpers: [], own: ['exists'] };
    case 'package': {
      const check = packageManagers[pm].shell?.installed;
      if (!check) throw new Error(`internal: no installed-package check for ${pm}`);
      return { test: `${check.fn} ${word(c.name)}`, helpers: [check.helper], own: [] };
    }
    case 'service':
      return { test: `imgc_enabled ${word(c.unit)}`, helpers: [], own: ['enabled'] };
    case 'line':
      return { test: `imgc_has_line ${words([c.file, c.sep, c.key])}`, helpers: [], own: ['hasLine'] };
    case 'block':
      return { test: `imgc_has_block ${words([c.file, ...blockMarkers(c)])}`, helpers: [], own: ['hasBlock'] };
  }
};

/** The preflight's test of one contract fact; `has`: the test sets imgc_has to what the host has. */
const contractTest = (f: ContractFact, pm: Image['base']['packageManager']): { test: string; helpers: HelperName[]; own: (keyof typeof runtimeHelpers)[]; has?: true } => {
  const d = f.details;
  if (f.kind === 'path' && d) {
    return { test: `imgc_path_is ${words([f.key, d.type ?? '', d.owner ?? '', d.group ?? '', d.mode ?? ''])}`, helpers: [], own: ['pathIs'], has: true };
  }
  if (f.kind === 'package' && d?.version !== undefined) {
    const v = packageManagers[pm].shell?.version;
    if (!v) throw new Error(`internal: no installed-version check for ${pm}`);
    return { test: `${v.fn} ${words([f.key, d.version])}`, helpers: [v.helper], own: [], has: true };
  }
  switch (f.kind) {
    case 'user':
      return { test: `getent passwd ${word(f.key)} >/dev/null`, helpers: [], own: [] };
    case 'group':
      return { test: `getent group ${word(f.key)} >/dev/null`, helpers: [], own: [] };
    case 'path':
      return { test: `imgc_exists ${word(f.key)}`, helpers: [], own: ['exists'] };
    case 'package':
      return probe({ token: '', kind: 'package', name: f.key }, pm);
    case 'command':
      return { test: `command -v ${word(f.key)} >/dev/null 2>&1`, helpers: [], own: [] };
    case 'service':
      return { test: `imgc_unit_exists ${word(f.key.includes('.') ? f.key : `${f.key}.service`)}`, helpers: [], own: ['unit'] };
    case 'repo':
      return { test: `imgc_exists ${word(aptSourcesPath(f.key))}`, helpers: [], own: ['exists'] };
  }
};

/** The comment block every runtime/decommission file starts with: how the record works. */
export const recordNote = (plan: RuntimePlan): string[] => [
  '#',
  '# The record: provision.sh notes each thing it creates on a host (a user, a group, a',
  '# path, a package, an enabled service, a line of a sysctl.d or modules-load.d file)',
  comment(`in ${plan.recordFile}, one token (STEP-ID or STEP-ID#N) a line, only when the`),
  '# step itself created it there. decommission.sh undoes the recorded things only, in',
  '# reverse order, then removes the record: what the host had before is never touched.',
];

/** The preflight block: prints every missing fact, then exits 3 before any change. */
const preflight = (ir: Image, plan: RuntimePlan, used: Set<HelperName>, own: Set<keyof typeof runtimeHelpers>): string[] => {
  const c = plan.contract;
  own.add('osRelease');
  const out = [
    '# --- preflight: the host contract ------------------------------------------',
    comment(`What the runtime phases need from the host (phases 0-1 give it to an image built by imgc).`),
    '# Every missing fact is printed (stderr); then the script stops with exit status 3,',
    '# having changed nothing.',
    'imgc_missing=0',
    'imgc_lack() {',
    "  printf 'imgc: preflight: missing %s\\n' \"$1\" >&2",
    '  imgc_missing=$((imgc_missing + 1))',
    '}',
  ];
  out.push(
    '',
    `imgc_os=$(imgc_os_field ID)`,
    `imgc_ver=$(imgc_os_field VERSION_ID)`,
    `if [ "$imgc_os" != ${word(c.distro)} ] || [ "$imgc_ver" != ${word(c.release)} ]; then`,
    `  imgc_lack ${word(`distribution ${c.distro} ${c.release} (/etc/os-release ID and VERSION_ID)`)}" (this host: \${imgc_os:-unknown} \${imgc_ver:-unknown})"`,
    'fi',
  );
  for (const f of c.facts) {
    const t = contractTest(f, ir.base.packageManager);
    t.helpers.forEach((h) => used.add(h));
    t.own.forEach((h) => own.add(h));
    out.push(`if ! ${t.test}; then`, `  imgc_lack ${word(preflightLabel(f))}${t.has ? '" (this host: $imgc_has)"' : ''}`, 'fi');
  }
  out.push(
    'if [ "$imgc_missing" -gt 0 ]; then',
    `  printf 'imgc: preflight: %s fact(s) of the host contract of %s missing; nothing was changed\\n' "$imgc_missing" ${word(ir.name)} >&2`,
    '  exit 3',
    'fi',
  );
  return out;
};

export interface RuntimeShellOptions {
  readonly pm: () => PackageManager;
  readonly stems: readonly PhaseFile[];
}

/** What rendering live-host phases gathers: the helpers they call, the driving machine's hook files, step numbering. */
export interface LivePhaseState {
  readonly used: Set<HelperName>;
  readonly own: Set<keyof typeof runtimeHelpers>;
  readonly files: CompiledFiles;
  n: number;
  anyHandlers: boolean;
}

/**
 * One phase run on a live host (provision.sh's runtime phases, decommission.sh's
 * drain): its driven hook files, its script hooks and steps (each recording
 * what it created, as `rp` lists), its handlers, and its progress line.
 */
export const livePhase = (ir: Image, rp: RuntimePhase, opts: RuntimeShellOptions, state: LivePhaseState): string[] => {
  const { used, own, files } = state;
  const body: string[] = [];
  const f = opts.stems.find((s) => s.phase === rp.phase)!;
  const phase = rp.phase;
  const ctx: StepContext = {
    get pm() {
      return opts.pm();
    },
    checks: false,
    liveHost: true,
    installsAfter: (s) => phase.steps.slice(phase.steps.indexOf(s as never) + 1).some((t) => kindOf(t).installs?.(t) === true),
  };
  const driver = (when: 'pre' | 'post') => {
    const driven = drivenHooksFile(ir, f, when);
    if (!driven) return;
    files[driven.file] = driven.text;
    body.push('', comment(`Phase ${phase.name}: ${driven.file} runs on the machine driving this run, ${when === 'pre' ? 'before' : 'after'} this script.`));
  };
  const handlers = shellPhaseHandlers(ir, phase);
  if (handlers.plan.handlers.length) state.anyHandlers = true;
  driver('pre');
  body.push('', comment(`--- phase ${phase.name}${where(phase.loc)} ---`), 'imgc_changed=0', ...handlers.init);
  for (const rs of rp.steps) {
    const s = rs.step;
    let code: Emitted;
    if (isHook(s)) {
      if (s.action.type !== 'script') continue;
      code = { lines: [`/bin/sh -ec ${word(s.action.run)}`], helpers: [] };
    } else if (isRootStep(s)) {
      code = emitStep(s, ctx);
    } else {
      body.push('', comment(`${s.id}${where(s.loc)}: ${summary(s)}: not run at runtime`));
      continue;
    }
    state.n += 1;
    const n = state.n;
    code.helpers.forEach((h) => used.add(h));
    const probes = rs.creations.flatMap((c) => {
      const items: { token: string; p: ReturnType<typeof probe> }[] = [{ token: c.token, p: probe(c, ir.base.packageManager) }];
      if (c.kind === 'user' && c.home) items.push({ token: c.home.token, p: probe({ token: c.home.token, kind: 'path', path: c.home.path, type: 'directory' }, ir.base.packageManager) });
      return items;
    });
    for (const { p } of probes) {
      p.helpers.forEach((h) => used.add(h));
      p.own.forEach((h) => own.add(h));
    }
    const before = probes.flatMap(({ p }, i) => [`imgc_new_${i}=0`, `if ! ${p.test}; then`, `  imgc_new_${i}=1`, 'fi']);
    const after = probes.flatMap(({ token, p }, i) => [`if [ "$imgc_new_${i}" -eq 1 ] && ${p.test}; then`, `  imgc_record ${word(token)}`, 'fi']);
    body.push(
      '',
      stepComment(s),
      ...literalNote(s),
      `step_${n}() {`,
      ...[...before, ...code.lines, ...after].map((l) => `  ${l}`),
      '}',
      ...runStep(s, `step_${n}`),
      ...handlers.after(s.id),
    );
  }
  body.push(...handlers.run, `printf 'imgc-phase %s done changed=%s\\n' ${word(phase.name)} "$imgc_changed" >&3`);
  driver('post');
  return body;
};

/** provision.sh and the driving machine's hook files of the runtime phases. */
export const shellRuntime = (ir: Image, opts: RuntimeShellOptions): CompiledFiles => {
  const plan = runtimePlan(ir);
  const state: LivePhaseState = { used: new Set<HelperName>(), own: new Set<keyof typeof runtimeHelpers>(['record']), files: {}, n: 0, anyHandlers: false };
  const { used, own, files } = state;
  const pre = preflight(ir, plan, used, own);
  const body = plan.phases.flatMap((rp) => livePhase(ir, rp, opts, state));
  const anyHandlers = state.anyHandlers;
  const out: string[] = [
    '#!/bin/sh',
    comment(`Image ${ir.name}: runtime provisioning of an existing host (phases ${plan.phases.map((p) => p.phase.name).join(', ') || 'none'}).`),
    comment(`Generated by imgc from ${ir.source} (imgc compile --target shell --runtime): edit the definition, not this file.`),
    '#',
    '# Run as root on the host:   ssh HOST sudo sh -s < provision.sh',
    '# or in a root directory:    chroot ROOT /bin/sh -s < provision.sh',
    '# Every step checks before it acts, so a second run changes nothing.',
    ...recordNote(plan),
    '#',
    '# stdout carries only progress lines (imgc-step ID start|changed|unchanged|failed,',
    '# imgc-phase NAME done changed=N); exit status 3: the host contract is not met.',
    'set -eu',
    'umask 022',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    'export PATH',
    ...variablePrologue(variablesIn(ir, plan.phases.map((p) => p.phase))),
    `imgc_record_dir=${word(plan.recordDir)}`,
    'imgc_record_file=$imgc_record_dir/created',
  ];
  const ownCode = (Object.keys(runtimeHelpers) as (keyof typeof runtimeHelpers)[]).filter((h) => own.has(h)).map((h) => runtimeHelpers[h]);
  out.push('', ...helperCode(used).flatMap((h) => [h, '']), ...ownCode.flatMap((h) => [h, '']), ...pre, '', ...stepRuntime, ...(anyHandlers ? ['', handlerHelpers] : []), ...body);
  files['provision.sh'] = `${out.join('\n')}\n`;
  return files;
};
