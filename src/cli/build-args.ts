// The command lines of `imgc build` and `imgc verify`: their options, apart
// from build.ts so that main.ts can read a build's definition file (and start
// its type-check) before it loads the builder.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export const commonOptions = {
  'no-typecheck': { type: 'boolean' },
  var: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const buildOptions = {
  target: { type: 'string', short: 't' },
  out: { type: 'string', short: 'o' },
  'from-tar': { type: 'string' },
  'from-dir': { type: 'string' },
  'no-cache': { type: 'boolean' },
  'keep-root': { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

export const verifyOptions = {
  root: { type: 'string' },
  image: { type: 'string' },
  boot: { type: 'string' },
  'boot-timeout': { type: 'string' },
  format: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** The positionals after the command's own name (argv may start with it). */
export const afterCommand = (positionals: string[], command: string): string[] => (positionals[0] === command ? positionals.slice(1) : positionals);

/**
 * The definition `imgc build|verify ARGV` will type-check, when its command
 * line parses and names one file without --no-typecheck or --help; else
 * undefined (the command itself then reports what is wrong).
 */
export const typecheckedFile = (command: 'build' | 'verify', argv: string[]): string | undefined => {
  try {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...commonOptions, ...(command === 'build' ? buildOptions : verifyOptions) } });
    const files = afterCommand(positionals, command);
    return values.help || values['no-typecheck'] || files.length !== 1 ? undefined : files[0];
  } catch {
    return undefined;
  }
};
