// The shell functions phase scripts call: static POSIX sh, no IR values in
// here (steps pass values as arguments, quoted by quote.ts). A phase script
// carries only the helpers its steps use, in this file's order, so each script
// is self-contained and can be copied alone into a root.
//
// Conventions: every helper checks before it acts and sets imgc_dirty=1 only
// when it changed something; helper variables are globals prefixed imgc_
// (POSIX sh has no `local`).

import { validatorBody } from '../validators.js';
import type { HelperName } from '../../emit/shell/emitted.js';

export type { HelperName };

interface Helper {
  readonly deps: readonly HelperName[];
  readonly code: string;
}

const lines = (...ls: string[]): string => ls.join('\n');

const helpers: Record<HelperName, Helper> = {
  attrs: {
    deps: [],
    code: lines(
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
    ),
  },
  checked: {
    deps: [],
    code: lines(
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
    ),
  },
  checkSudoers: {
    deps: [],
    code: lines('# imgc_check_sudoers FILE: visudo accepts FILE (see src/compilers/validators.ts).', 'imgc_check_sudoers() {', ...validatorBody.sudoers.map((l) => `  ${l}`), '}'),
  },
  checkSshd: {
    deps: [],
    code: lines('# imgc_check_sshd FILE: sshd -t accepts FILE (see src/compilers/validators.ts).', 'imgc_check_sshd() {', ...validatorBody.sshd.map((l) => `  ${l}`), '}'),
  },
  file: {
    deps: ['attrs'],
    code: lines(
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
    ),
  },
  parent: {
    deps: [],
    code: lines(
      '# imgc_parent PATH: creates the directory PATH is in, when it is missing.',
      'imgc_parent() {',
      '  imgc_up=${1%/*}',
      '  if [ -n "$imgc_up" ] && [ ! -d "$imgc_up" ]; then',
      '    mkdir -p -- "$imgc_up"',
      '    imgc_dirty=1',
      '  fi',
      '}',
    ),
  },
  dir: {
    deps: ['attrs'],
    code: lines(
      '# imgc_dir PATH MODE OWNER GROUP: PATH is a directory with those attributes.',
      'imgc_dir() {',
      '  if [ ! -d "$1" ]; then',
      '    mkdir -p -- "$1"',
      '    imgc_dirty=1',
      '  fi',
      '  imgc_attrs "$1" "$2" "$3" "$4"',
      '}',
    ),
  },
  symlink: {
    deps: [],
    code: lines(
      '# imgc_symlink PATH TARGET: PATH is a symbolic link to TARGET.',
      'imgc_symlink() {',
      '  if [ -h "$1" ]; then',
      '    # readlink ends its output with a newline; the x keeps $( ) from eating',
      '    # newlines that belong to the target, and both go again below.',
      '    imgc_have=$(readlink -- "$1" && printf x)',
      '    if [ "${imgc_have%?x}" = "$2" ]; then',
      '      return 0',
      '    fi',
      '  elif [ -d "$1" ]; then',
      '    printf \'imgc: %s is a directory, not a symbolic link\\n\' "$1" >&2',
      '    return 1',
      '  fi',
      '  ln -sfn -- "$2" "$1"',
      '  imgc_dirty=1',
      '}',
    ),
  },
  line: {
    deps: ['parent', 'file'],
    code: lines(
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
    ),
  },
  sysctl: {
    deps: ['line'],
    code: lines(
      '# imgc_sysctl FILE KEY VALUE: FILE has the line "KEY = VALUE".',
      'imgc_sysctl() {',
      '  imgc_line "$1" = "$2" "$2 = $3"',
      '}',
    ),
  },
  module: {
    deps: ['line'],
    code: lines(
      '# imgc_module FILE NAME: FILE (modules-load.d) lists the kernel module NAME.',
      'imgc_module() {',
      '  imgc_line "$1" \'\' "$2" "$2"',
      '}',
    ),
  },
  swapoff: {
    deps: ['file'],
    code: lines(
      '# imgc_swapoff FSTAB: comments out the swap entries of FSTAB.',
      'imgc_swapoff() {',
      '  if [ ! -f "$1" ]; then',
      '    return 0',
      '  fi',
      '  imgc_want=$(LC_ALL=C awk \'$0 !~ /^[ \\t]*#/ && $3 == "swap" { print "#" $0; next } { print }\' "$1" && printf x)',
      '  imgc_file "$1" \'\' \'\' \'\' "${imgc_want%x}"',
      '}',
    ),
  },
  remove: {
    deps: [],
    code: lines(
      '# imgc_remove PATTERN...: removes each path a PATTERN names, with what lies',
      '# below it. The last segment of a pattern may hold sh globs (* ? [...]); one',
      '# that names nothing is no error. Patterns hold no white space (the IR refuses it).',
      'imgc_remove() {',
      '  for imgc_pattern in "$@"; do',
      '    # Unquoted on purpose: the glob expands here, in the root.',
      '    # shellcheck disable=SC2086',
      '    for imgc_path in $imgc_pattern; do',
      '      if [ -e "$imgc_path" ] || [ -L "$imgc_path" ]; then',
      '        rm -rf -- "$imgc_path"',
      '        imgc_dirty=1',
      '      fi',
      '    done',
      '  done',
      '}',
    ),
  },
  truncate: {
    deps: [],
    code: lines(
      '# imgc_truncate PATTERN...: empties each regular file a PATTERN names (globs as',
      '# for imgc_remove), keeping its owner and mode; a missing file stays missing.',
      'imgc_truncate() {',
      '  for imgc_pattern in "$@"; do',
      '    # shellcheck disable=SC2086',
      '    for imgc_path in $imgc_pattern; do',
      '      if [ -f "$imgc_path" ] && [ ! -L "$imgc_path" ] && [ -s "$imgc_path" ]; then',
      '        : >"$imgc_path"',
      '        imgc_dirty=1',
      '      fi',
      '    done',
      '  done',
      '}',
    ),
  },
  group: {
    deps: [],
    code: lines(
      '# imgc_group NAME [groupadd options]: creates group NAME unless it exists.',
      'imgc_group() {',
      '  imgc_name=$1',
      '  shift',
      '  if getent group "$imgc_name" >/dev/null; then',
      '    return 0',
      '  fi',
      '  groupadd "$@" "$imgc_name"',
      '  imgc_dirty=1',
      '}',
    ),
  },
  user: {
    deps: [],
    code: lines(
      '# imgc_user NAME PRIMARY_GROUP [useradd options]: creates user NAME unless it',
      '# exists. An empty PRIMARY_GROUP means a group of the user\'s own name, created',
      '# with it unless it exists already.',
      'imgc_user() {',
      '  imgc_name=$1',
      '  imgc_pg=$2',
      '  shift 2',
      '  if getent passwd "$imgc_name" >/dev/null; then',
      '    return 0',
      '  fi',
      '  if [ -n "$imgc_pg" ]; then',
      '    useradd --gid "$imgc_pg" "$@" "$imgc_name"',
      '  elif getent group "$imgc_name" >/dev/null; then',
      '    useradd --gid "$imgc_name" "$@" "$imgc_name"',
      '  else',
      '    useradd --user-group "$@" "$imgc_name"',
      '  fi',
      '  imgc_dirty=1',
      '}',
    ),
  },
  member: {
    deps: [],
    code: lines(
      '# imgc_member USER GROUP: USER is a member of GROUP.',
      'imgc_member() {',
      '  case " $(id -nG "$1") " in',
      '    *" $2 "*) ;;',
      '    *)',
      '      usermod --append --groups "$2" "$1"',
      '      imgc_dirty=1',
      '      ;;',
      '  esac',
      '}',
    ),
  },
  userShell: {
    deps: [],
    code: lines(
      '# imgc_user_shell USER SHELL: USER logs in with SHELL.',
      'imgc_user_shell() {',
      '  imgc_have=$(getent passwd "$1" | cut -d: -f7)',
      '  if [ "$imgc_have" != "$2" ]; then',
      '    usermod --shell "$2" "$1"',
      '    imgc_dirty=1',
      '  fi',
      '}',
    ),
  },
  enable: {
    deps: [],
    code: lines(
      '# imgc_enable UNIT: UNIT is enabled at boot (symlinks only: nothing is started).',
      'imgc_enable() {',
      '  if systemctl is-enabled --quiet "$1" 2>/dev/null; then',
      '    return 0',
      '  fi',
      '  systemctl enable "$1"',
      '  imgc_dirty=1',
      '}',
    ),
  },
  disable: {
    deps: [],
    code: lines(
      '# imgc_disable UNIT: UNIT is not enabled at boot (nothing is stopped).',
      'imgc_disable() {',
      '  if [ "$(systemctl is-enabled "$1" 2>/dev/null || :)" != enabled ]; then',
      '    return 0',
      '  fi',
      '  systemctl disable "$1"',
      '  imgc_dirty=1',
      '}',
    ),
  },
  mask: {
    deps: [],
    code: lines(
      '# imgc_mask UNIT: UNIT is masked (linked to /dev/null: nothing starts or enables it;',
      '# links only, nothing is stopped).',
      'imgc_mask() {',
      '  if [ "$(readlink "/etc/systemd/system/$1" || :)" = /dev/null ]; then',
      '    return 0',
      '  fi',
      '  systemctl mask "$1"',
      '  imgc_dirty=1',
      '}',
    ),
  },
  unmask: {
    deps: [],
    code: lines(
      '# imgc_unmask UNIT: UNIT is not masked.',
      'imgc_unmask() {',
      '  if [ "$(readlink "/etc/systemd/system/$1" || :)" != /dev/null ]; then',
      '    return 0',
      '  fi',
      '  systemctl unmask "$1"',
      '  imgc_dirty=1',
      '}',
    ),
  },
  fetch: {
    deps: ['parent'],
    code: lines(
      '# imgc_fetch URL PATH: downloads URL to PATH unless PATH exists and is not empty.',
      'imgc_fetch() {',
      '  if [ -s "$2" ]; then',
      '    return 0',
      '  fi',
      '  imgc_parent "$2"',
      '  imgc_tmp=$(mktemp "$2.imgc-XXXXXX")',
      '  curl -fsSL --retry 3 -o "$imgc_tmp" --url "$1"',
      '  chmod 0644 "$imgc_tmp"',
      '  mv -f -- "$imgc_tmp" "$2"',
      '  imgc_tmp=',
      '  imgc_dirty=1',
      '}',
    ),
  },
  aptState: {
    deps: [],
    code: lines(
      '# 1 once the package lists are fresh in this run; a changed apt source resets it.',
      'imgc_apt_fresh=0',
    ),
  },
  aptInstalled: {
    deps: [],
    code: lines(
      '# imgc_apt_installed PACKAGE: true when dpkg has PACKAGE (a name, or name=version) installed.',
      'imgc_apt_installed() {',
      '  # shellcheck disable=SC2016 # ${Status} and ${Version} are dpkg-query fields',
      '  case $1 in',
      '    *=*) [ "$(dpkg-query -W -f=\'${Status} ${Version}\' "${1%%=*}" 2>/dev/null || :)" = "install ok installed ${1#*=}" ] ;;',
      '    *) [ "$(dpkg-query -W -f=\'${Status}\' "$1" 2>/dev/null || :)" = \'install ok installed\' ] ;;',
      '  esac',
      '}',
    ),
  },
  aptInstall: {
    deps: ['aptState', 'aptInstalled'],
    code: lines(
      '# imgc_apt_install PACKAGE...: installs the PACKAGEs that are not installed, without',
      '# recommends; updates the package lists first, once per run (again after an apt',
      '# source changed).',
      'imgc_apt_install() {',
      '  for imgc_p in "$@"; do',
      '    shift',
      '    if ! imgc_apt_installed "$imgc_p"; then',
      '      set -- "$@" "$imgc_p"',
      '    fi',
      '  done',
      '  if [ "$#" -eq 0 ]; then',
      '    return 0',
      '  fi',
      '  if [ "$imgc_apt_fresh" -eq 0 ]; then',
      '    apt-get update',
      '    imgc_apt_fresh=1',
      '  fi',
      '  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\',
      '    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"',
      '  imgc_dirty=1',
      '}',
    ),
  },
  aptRemove: {
    deps: ['aptInstalled'],
    code: lines(
      '# imgc_apt_remove PACKAGE...: removes the PACKAGEs that are installed.',
      'imgc_apt_remove() {',
      '  for imgc_p in "$@"; do',
      '    shift',
      '    if imgc_apt_installed "$imgc_p"; then',
      '      set -- "$@" "$imgc_p"',
      '    fi',
      '  done',
      '  if [ "$#" -eq 0 ]; then',
      '    return 0',
      '  fi',
      '  DEBIAN_FRONTEND=noninteractive apt-get remove -y "$@"',
      '  imgc_dirty=1',
      '}',
    ),
  },
};

const order = Object.keys(helpers) as HelperName[];

/**
 * One helper's own dependencies and code, for another backend's script that
 * runs the same functions (cloud-init's runcmd). With `dirty: false` the
 * `imgc_dirty=1` lines go: a script that does not report changes.
 */
export const helper = (h: HelperName, opts: { readonly dirty: boolean }): { deps: readonly HelperName[]; code: string[] } => ({
  deps: helpers[h].deps,
  code: helpers[h].code.split('\n').filter((l) => opts.dirty || l.trim() !== 'imgc_dirty=1'),
});

/** The code of `used` and everything they call, in this file's order. */
export const helperCode = (used: Iterable<HelperName>): string[] => {
  const want = new Set<HelperName>();
  const add = (h: HelperName): void => {
    if (want.has(h)) return;
    want.add(h);
    helpers[h].deps.forEach(add);
  };
  for (const h of used) add(h);
  return order.filter((h) => want.has(h)).map((h) => helpers[h].code);
};
