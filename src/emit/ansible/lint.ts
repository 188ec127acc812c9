// Which ansible-lint rules a raw command string trips, so its task can carry
// exactly those `# noqa` names. A raw command is the definition's own code,
// run as written: ansible-lint's advice to use a module instead does not
// apply to it. The rules look at the first word of `cmd` as Python's
// `str.split()` cuts it, by basename (ansiblelint.utils.get_first_cmd_arg).

/** Characters Python's `str.isspace()` is true for: where `str.split()` cuts. */
const PY_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

/** deprecated-command-syntax: a command that a file-module argument would say. */
const FILE_ARGUMENT_COMMANDS = new Set(['chown', 'chmod', 'chgrp', 'ln', 'mkdir', 'rmdir', 'rm']);

/** The first word ansible-lint sees in `cmd`, by basename; undefined for an empty command. */
export const lintFirstWord = (cmd: string): string | undefined => {
  const first = cmd.split(PY_SPACE).find((w) => w !== '');
  return first === undefined ? undefined : first.slice(first.lastIndexOf('/') + 1);
};

/**
 * The noqa names of a raw command's `ansible.builtin.shell` task:
 * command-instead-of-module always (the definition chose a command), and
 * deprecated-command-syntax when the first word is one that rule names.
 * (command-instead-of-shell and risky-shell-pipe do not apply: the task sets
 * `executable` and passes `cmd`; no-changed-when is met by the task itself.)
 */
export const rawCommandNoqa = (cmd: string): string[] => {
  const first = lintFirstWord(cmd);
  return ['command-instead-of-module', ...(first !== undefined && FILE_ARGUMENT_COMMANDS.has(first) ? ['deprecated-command-syntax'] : [])];
};
