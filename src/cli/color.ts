// Whether to colour what imgc prints. The conventions users set once for every
// tool: NO_COLOR turns colour off, FORCE_COLOR on, FORCE_COLOR=0 (or false) off
// even on a terminal (as supports-color reads it), and without
// either a terminal gets colour and a pipe or file does not. --color and
// --no-color set them for this process, so the build's own display and the
// tools it runs see the same choice.
import type { FlagValues } from './commands.js';

export const colorWanted = (isTTY: boolean, env: NodeJS.ProcessEnv = process.env): boolean => {
  if (env['NO_COLOR']) return false;
  const force = env['FORCE_COLOR'];
  if (force === '0' || force === 'false') return false;
  if (force !== undefined) return true;
  return isTTY;
};

/** Applies --color / --no-color (the later one wins when both are given). */
export const chooseColor = (flags: FlagValues, argv: readonly string[] = process.argv): void => {
  const yes = flags['color'] === true;
  const no = flags['no-color'] === true;
  if (!yes && !no) return;
  const colour = yes && no ? argv.lastIndexOf('--color') > argv.lastIndexOf('--no-color') : yes;
  if (colour) {
    delete process.env['NO_COLOR'];
    process.env['FORCE_COLOR'] = '1';
  } else {
    delete process.env['FORCE_COLOR'];
    process.env['NO_COLOR'] = '1';
  }
};
