// Every diagnostic imgc reports, in one table. The README's table is checked
// against this one by a test; codes are stable once released.
export const diagnosticCodes = {
  IMGC0001: { severity: 'error', title: 'requirement never provided', fix: 'add a step (or a base package) that provides it, or declare it in a raw step\'s `provides`' },
  IMGC0002: { severity: 'error', title: 'requirement provided only later', fix: 'move the providing step before this one, or this step into a later phase' },
  IMGC0003: { severity: 'error', title: 'owner or group of a path does not exist', fix: 'create the user/group in an earlier step, or fix the name' },
  IMGC0004: { severity: 'error', title: 'service enabled without the package that provides it', fix: 'install the package that ships the unit before enabling it' },
  IMGC0005: { severity: 'error', title: 'requirement removed by an earlier step', fix: 'drop the removal, or move it after the last step that needs the fact' },
  IMGC0006: { severity: 'error', title: 'path written twice with different content', fix: 'keep one writer per path, or merge the contents into one step' },
  IMGC0007: { severity: 'warning', title: 'path written twice with the same content', fix: 'drop the second step' },
  IMGC0008: { severity: 'warning', title: 'user or group created twice', fix: 'drop the second step' },
  IMGC0009: { severity: 'warning', title: 'package installed twice', fix: 'drop the second install' },
  IMGC0010: { severity: 'warning', title: 'artifact output named twice', fix: 'give each artifact its own output name' },
  IMGC0011: { severity: 'error', title: 'variable used where a literal is needed', fix: 'use variables only in file contents, commands, script hooks, apt repository and webhook URLs, package versions and cloud image settings; write a literal here' },
  IMGC0012: { severity: 'error', title: 'a path made a different kind of thing than an earlier step made it', fix: 'remove the path before making it again as another kind, or use another path' },
  IMGC0013: { severity: 'error', title: 'requirement met only under some conditions', fix: 'put the step in the same when(...) block as the step that provides the fact, or provide it on every branch' },
  IMGC0014: { severity: 'error', title: 'more combinations of condition values than the checker walks', fix: 'decide some conditions in the definition itself (a TypeScript if on a constant), or test fewer values' },
  IMGC0015: { severity: 'warning', title: 'file written whole, then edited', fix: 'write the edited text in the file step\'s content, or leave the file to its package and keep the edit' },
  IMGC1001: { severity: 'error', title: 'TypeScript error in the definition', fix: 'fix the reported TypeScript error; many are broken contracts caught by the types' },
  IMGC1002: { severity: 'error', title: 'the definition threw while it ran', fix: 'fix the error at the reported line' },
  IMGC1003: { severity: 'error', title: 'the definition does not export an image', fix: '`export default image(...).base(...)...` from the file' },
  IMGC1004: { severity: 'error', title: 'the definition produced invalid IR', fix: 'fix the value named in the message' },
  IMGC1005: { severity: 'error', title: 'definition file not found or unreadable', fix: 'check the path' },
  IMGC1006: { severity: 'error', title: 'TypeScript syntax error in the definition', fix: 'fix the syntax at the reported location' },
  IMGC1007: { severity: 'error', title: 'the definition did not finish in time', fix: 'end the loop or await that never finishes at the top level of the definition, or give it longer with --timeout SECONDS' },
  IMGC1008: { severity: 'error', title: 'variable value invalid', fix: 'give a value that matches the variable\'s schema (--var, IMGC_VAR_<NAME> or imgc.toml [vars]), or declare the variable' },
  IMGC2001: { severity: 'error', title: 'a string cannot be represented safely in the target', fix: 'remove the NUL, control character or lone UTF-16 surrogate from the value' },
  IMGC2002: { severity: 'error', title: 'the target cannot express this value or feature', fix: 'use another target for this image, or change the step to something the target supports' },
  IMGC2003: { severity: 'error', title: 'a path not written as it resolves, or a name or path longer than the filesystem allows', fix: 'write the path as the message shows it (no ".", "..", repeated or trailing "/"); keep a file name within 255 bytes, a path within 4,096, an image name within 200' },
  IMGC3001: { severity: 'error', title: 'a fact of the old contract is gone from the new one', fix: 'provide the fact again, or make sure no phase built on the contract requires it' },
  IMGC3002: { severity: 'error', title: 'a fact of the old contract changed in the new one', fix: 'keep the old details (owner, group, mode, version, base), or update the phases built on the contract' },
} as const;

export type DiagnosticCode = keyof typeof diagnosticCodes;
