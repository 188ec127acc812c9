// The command lines of `imgc build` and `imgc verify`; their flags are in the
// command table (src/cli/commands.ts).

/** The positionals after the command's own name (argv may start with it). */
export const afterCommand = (positionals: string[], command: string): string[] => (positionals[0] === command ? positionals.slice(1) : positionals);
