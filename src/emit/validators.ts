// Files a syntax error in would lock people out: sudoers (sudo refuses to run
// at all) and sshd's configuration (sshd does not start). Every target checks
// such a file with the tool that reads it before the file takes its place, and
// leaves the old one when the check fails. The checks are POSIX sh, written
// once here: the shell helpers define them as functions, Ansible runs them as
// a copy task's `validate`. A root without the tool (no sudo, no sshd yet) has
// nothing to lock out, so the check passes there.

export type Validator = 'sudoers' | 'sshd';

/** The check for a file at `path`, if it is one of those. */
export const validatorFor = (path: string): Validator | undefined =>
  path === '/etc/sudoers' || /^\/etc\/sudoers\.d\/[^/]+$/.test(path)
    ? 'sudoers'
    : path === '/etc/ssh/sshd_config' || /^\/etc\/ssh\/sshd_config\.d\/[^/]+$/.test(path)
      ? 'sshd'
      : undefined;

/**
 * Each check's body: $1 is the candidate file. sshd -t wants host keys and its
 * privilege separation directory, which an image being built may not have yet:
 * it gets a throwaway key, and /run/sshd only for as long as the check runs.
 */
export const validatorBody: Record<Validator, readonly string[]> = {
  sudoers: ['if ! command -v visudo >/dev/null 2>&1; then return 0; fi', 'visudo -cqf "$1"'],
  sshd: [
    'if ! command -v sshd >/dev/null 2>&1; then return 0; fi',
    'imgc_v=$(mktemp -d)',
    'imgc_vrun=',
    'if [ ! -d /run/sshd ]; then mkdir -p /run/sshd && imgc_vrun=1; fi',
    'ssh-keygen -q -t ed25519 -N "" -f "$imgc_v/key" && sshd -t -f "$1" -o HostKey="$imgc_v/key"',
    'imgc_vrc=$?',
    'rm -rf -- "$imgc_v"',
    'if [ -n "$imgc_vrun" ]; then rmdir /run/sshd; fi',
    'return "$imgc_vrc"',
  ],
};

/** The check as one `sh -c` command line, `%s` the file, for Ansible's `validate`. */
export const validatorCommand = (v: Validator): string => {
  const body = validatorBody[v].map((l) => l.replace(/return /g, 'exit ')).join('; ');
  return `/bin/sh -c '${body.replace(/'/g, "'\\''")}' imgc-validate %s`;
};
