// The command lines of `imgc build` and `imgc verify`: their options.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export const commonOptions = {
  'no-typecheck': { type: 'boolean' },
  timeout: { type: 'string' },
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
  format: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** The positionals after the command's own name (argv may start with it). */
export const afterCommand = (positionals: string[], command: string): string[] => (positionals[0] === command ? positionals.slice(1) : positionals);

