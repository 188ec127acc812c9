// The shell functions phase scripts call: static POSIX sh, no IR values in
// here (steps pass values as arguments, quoted by quote.ts). This file holds
// the frame's own, those several kinds call; a kind's own are its
// `shellHelpers` (src/steps/<kind>.ts), a package manager's are in its record
// (src/steps/package-managers.ts). An output defines only the helpers its
// steps call and what those call (the shell target: once, in phases/helpers.sh,
// for all its phase scripts).
//
// Conventions (src/emit/shell/emitted.ts `ShellHelper`): every helper checks
// before it acts and sets imgc_dirty=1 only when it changed something; helper
// variables are globals prefixed imgc_ (POSIX sh has no `local`).

import { validatorBody } from '../../emit/validators.js';
import type { HelperName, ShellHelper } from '../../emit/shell/emitted.js';
import { allKinds } from '../../steps/index.js';
import { packageManagers } from '../../steps/package-managers.js';

export type { HelperName, ShellHelper };

/** The frame's own helpers: the building blocks several kinds (and their helpers) call. */
const frameHelpers: Record<HelperName, ShellHelper> = {
  attrs: {
    deps: [],
    code: [
      '# imgc_attrs PATH MODE OWNER GROUP: sets what differs; an empty MODE, OWNER or',
      '# GROUP leaves it alone. MODE has 4 octal digits; chmod gets a 5th leading 0 so',
      '# that it also clears a directory\'s set-group-ID bit. Owner before mode: chown',
      '# clears set-user-ID bits.',
      'imgc_attrs() {',
      '  if [ -n "$3" ] && [ "$(stat -L -c %U "$1")" != "$3" ] && [ "$(stat -L -c %u "$1")" != "$3" ]; then',
      '    chown -- "$3" "$1"',
      '    imgc_dirty=1',
      '  fi',
      '  if [ -n "$4" ] && [ "$(stat -L -c %G "$1")" != "$4" ] && [ "$(stat -L -c %g "$1")" != "$4" ]; then',
      '    chgrp -- "$4" "$1"',
      '    imgc_dirty=1',
      '  fi',
      '  if [ -n "$2" ] && [ "$(stat -L -c %a "$1")" != "$(printf %o "0$2")" ]; then',
      '    chmod "0$2" "$1"',
      '    imgc_dirty=1',
      '  fi',
      '}',
    ],
  },
  checked: {
    deps: [],
    code: [
      '# imgc_checked CHECK COMMAND...: runs COMMAND with imgc_check set to CHECK, which',
      '# imgc_file runs on the new content before it takes the file\'s place.',
      'imgc_checked() {',
      '  imgc_check=$1',
      '  shift',
      '  if "$@"; then',
      '    imgc_check=',
      '  else',
      '    imgc_rc=$?',
      '    imgc_check=',
      '    return "$imgc_rc"',
      '  fi',
      '}',
    ],
  },
  checkSudoers: {
    deps: [],
    code: ['# imgc_check_sudoers FILE: visudo accepts FILE (see src/compilers/validators.ts).', 'imgc_check_sudoers() {', ...validatorBody.sudoers.map((l) => `  ${l}`), '}'],
  },
  checkSshd: {
    deps: [],
    code: ['# imgc_check_sshd FILE: sshd -t accepts FILE (see src/compilers/validators.ts).', 'imgc_check_sshd() {', ...validatorBody.sshd.map((l) => `  ${l}`), '}'],
  },
  file: {
    deps: ['attrs'],
    code: [
      '# imgc_file PATH MODE OWNER GROUP CONTENT: PATH is a regular file holding exactly',
      '# CONTENT. A changed file keeps its old mode and owner unless given; a new one is',
      '# 0644 root:root unless given. Written to a temporary file, then renamed, after',
      '# the check imgc_checked names, if any, accepts it.',
      'imgc_file() {',
      '  if [ -f "$1" ] && [ ! -h "$1" ] && printf \'%s\' "$5" | cmp -s - "$1"; then',
      '    imgc_attrs "$1" "$2" "$3" "$4"',
      '    return 0',
      '  fi',
      '  if [ -d "$1" ] && [ ! -h "$1" ]; then',
      '    printf \'imgc: %s is a directory, not a file\\n\' "$1" >&2',
      '    return 1',
      '  fi',
      '  imgc_tmp=$(mktemp "$1.imgc-XXXXXX")',
      '  printf \'%s\' "$5" >"$imgc_tmp"',
      '  if [ -f "$1" ]; then',
      '    chown --reference="$1" -- "$imgc_tmp"',
      '    chmod --reference="$1" -- "$imgc_tmp"',
      '  else',
      '    chmod 0644 "$imgc_tmp"',
      '  fi',
      '  imgc_attrs "$imgc_tmp" "$2" "$3" "$4"',
      '  if [ -n "${imgc_check:-}" ] && ! "$imgc_check" "$imgc_tmp"; then',
      '    rm -f -- "$imgc_tmp"',
      '    printf \'imgc: %s: refused by %s; the file was left as it was\\n\' "$1" "$imgc_check" >&2',
      '    return 1',
      '  fi',
      '  if [ -h "$1" ]; then',
      '    rm -f -- "$1"',
      '  fi',
      '  mv -f -- "$imgc_tmp" "$1"',
      '  imgc_tmp=',
      '  imgc_dirty=1',
      '}',
    ],
  },
  parent: {
    deps: [],
    code: [
      '# imgc_parent PATH: creates the directory PATH is in, when it is missing.',
      'imgc_parent() {',
      '  imgc_up=${1%/*}',
      '  if [ -n "$imgc_up" ] && [ ! -d "$imgc_up" ]; then',
      '    mkdir -p -- "$imgc_up"',
      '    imgc_dirty=1',
      '  fi',
      '}',
    ],
  },
  dir: {
    deps: ['attrs'],
    code: [
      '# imgc_dir PATH MODE OWNER GROUP: PATH is a directory with those attributes.',
      'imgc_dir() {',
      '  if [ ! -d "$1" ]; then',
      '    mkdir -p -- "$1"',
      '    imgc_dirty=1',
      '  fi',
      '  imgc_attrs "$1" "$2" "$3" "$4"',
      '}',
    ],
  },
  line: {
    deps: ['parent', 'file'],
    code: [
      '# imgc_line FILE SEP KEY LINE: FILE has LINE in place of the line whose key is KEY',
      '# (later lines with that key go), or at its end. A line\'s key is its text before',
      '# the first SEP, or the whole line when SEP is empty, without surrounding blanks.',
      'imgc_line() {',
      '  imgc_src=/dev/null',
      '  if [ -e "$1" ]; then',
      '    imgc_src=$1',
      '  fi',
      '  imgc_want=$(IMGC_SEP=$2 IMGC_KEY=$3 IMGC_LINE=$4 LC_ALL=C awk \'',
      '    BEGIN { sep = ENVIRON["IMGC_SEP"]; key = ENVIRON["IMGC_KEY"]; line = ENVIRON["IMGC_LINE"] }',
      '    {',
      '      k = $0',
      '      if (sep != "") {',
      '        i = index(k, sep)',
      '        if (i == 0) { print; next }',
      '        k = substr(k, 1, i - 1)',
      '      }',
      '      sub(/^[ \\t]+/, "", k)',
      '      sub(/[ \\t]+$/, "", k)',
      '      if (k != key) { print; next }',
      '      if (!done) print line',
      '      done = 1',
      '    }',
      '    END { if (!done) print line }',
      '  \' "$imgc_src" && printf x)',
      '  imgc_parent "$1"',
      '  imgc_file "$1" \'\' \'\' \'\' "${imgc_want%x}"',
      '}',
    ],
  },
  get: {
    deps: [],
    code: [
      '# imgc_get URL SHA256 FILE: FILE holds the bytes of URL, whose sha256 is SHA256:',
      '# taken from $IMGC_DOWNLOADS/SHA256 when the build put it there (a chroot build',
      '# fetches on the build machine), else fetched with curl. A wrong sum fails and',
      '# names both sums.',
      'imgc_get() {',
      '  if [ -n "${IMGC_DOWNLOADS:-}" ] && [ -f "$IMGC_DOWNLOADS/$2" ]; then',
      '    cp -- "$IMGC_DOWNLOADS/$2" "$3"',
      '  elif ! curl -fsSL --retry 3 -o "$3" --url "$1"; then',
      '    printf \'imgc: cannot fetch %s\\n\' "$1" >&2',
      '    return 1',
      '  fi',
      '  if ! printf \'%s  %s\\n\' "$2" "$3" | sha256sum -c --status; then',
      '    imgc_got=$(sha256sum <"$3")',
      '    printf \'imgc: %s: sha256 mismatch: expected %s, got %s\\n\' "$1" "$2" "${imgc_got%% *}" >&2',
      '    return 1',
      '  fi',
      '}',
    ],
  },
  eol: {
    deps: [],
    code: [
      '# imgc_eol FILE: FILE is empty or ends in a line break (prints 1), or not (0).',
      'imgc_eol() {',
      '  if [ -s "$1" ] && [ "$(tail -c 1 -- "$1" | od -An -tx1 | tr -d \' \')" != 0a ]; then',
      '    echo 0',
      '  else',
      '    echo 1',
      '  fi',
      '}',
    ],
  },
};

/**
 * Helpers by name, in the order a script defines them; a name given twice is
 * a mistake in imgc, caught when the table is made.
 */
export const helperTable = (groups: readonly Readonly<Record<HelperName, ShellHelper>>[]): ReadonlyMap<HelperName, ShellHelper> => {
  const table = new Map<HelperName, ShellHelper>();
  for (const group of groups)
    for (const [name, h] of Object.entries(group)) {
      if (table.has(name)) throw new Error(`internal: two shell helpers named ${name}`);
      table.set(name, h);
    }
  return table;
};

/** The helpers `used` and everything they call, in the table's order. */
export const helpersCalled = <H extends { readonly deps: readonly HelperName[] }>(table: ReadonlyMap<HelperName, H>, used: Iterable<HelperName>): H[] => {
  const want = new Set<HelperName>();
  const add = (h: HelperName): void => {
    if (want.has(h)) return;
    const helper = table.get(h);
    if (!helper) throw new Error(`internal: no shell helper named ${h}`);
    want.add(h);
    helper.deps.forEach(add);
  };
  for (const h of used) add(h);
  return [...table].filter(([name]) => want.has(name)).map(([, h]) => h);
};

let table: ReadonlyMap<HelperName, ShellHelper> | undefined;

/** Every helper a phase script may call: the frame's, the package managers', then each kind's, in the registry's order. */
export const shellHelpers = (): ReadonlyMap<HelperName, ShellHelper> =>
  (table ??= helperTable([
    frameHelpers,
    ...Object.values(packageManagers).flatMap((pm) => (pm.shell ? [pm.shell.helpers] : [])),
    ...[...allKinds().values()].flatMap((k) => (k.shellHelpers ? [k.shellHelpers] : [])),
  ]));

/**
 * A helper's code for a script that does not report changes (cloud-init's
 * runcmd): its `runcmd` code where it has one, else its code without the
 * `imgc_dirty=1` lines.
 */
export const withoutChanges = (h: ShellHelper): string[] => {
  if (h.runcmd) return [...h.runcmd];
  const code = h.code;
  // A branch that only tracked a change keeps `:`, as sh needs a command there.
  const onlyCommand = (i: number) => /(then|else|do)$/.test(code[i - 1]?.trim() ?? '') && /^(fi|else|elif|done)\b/.test(code[i + 1]?.trim() ?? '');
  return code.flatMap((l, i) => (l.trim() !== 'imgc_dirty=1' ? [l] : onlyCommand(i) ? [l.replace('imgc_dirty=1', ':')] : []));
};

/** The code of `used` and everything they call, one string per helper. */
export const helperCode = (used: Iterable<HelperName>): string[] => helpersCalled(shellHelpers(), used).map((h) => h.code.join('\n'));
