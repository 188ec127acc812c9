// The command lines of `imgc build` and `imgc verify`: their options, apart
// from build.ts so that main.ts can read a build's definition file (and start
// its type-check) before it loads the builder.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { commandNamed, flagsOf } from './commands.js';

/** parseArgs' options for a command of the table (src/cli/commands.ts). */
const optionsOf = (name: 'build' | 'verify'): NonNullable<ParseArgsConfig['options']> =>
  Object.fromEntries(flagsOf(commandNamed(name)!).map((f) => [f.name, { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.multiple ? { multiple: true } : {}) }]));

/** The positionals after the command's own name (argv may start with it). */
export const afterCommand = (positionals: string[], command: string): string[] => (positionals[0] === command ? positionals.slice(1) : positionals);

/**
 * The definition `imgc build|verify ARGV` will type-check, when its command
 * line parses and names one file without --no-typecheck or --help; else
 * undefined (the command itself then reports what is wrong).
 */
export const typecheckedFile = (command: 'build' | 'verify', argv: string[]): string | undefined => {
  try {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: optionsOf(command) });
    const files = afterCommand(positionals, command);
    return values.help || values['no-typecheck'] || files.length !== 1 ? undefined : files[0];
  } catch {
    return undefined;
  }
};
