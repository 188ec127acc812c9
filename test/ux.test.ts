// How check output looks to a person: colour only on a terminal, --quiet
// for errors only, --verbose for what was checked.
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { imgc, imgcBin, repoRoot } from './helpers/cli.js';

describe('check output', () => {
  it('is coloured like tsc --pretty on a terminal, plain otherwise', async () => {
    // script(1) gives the command a pseudo-terminal as stdout.
    const tty = await execa('script', ['-qec', `node ${imgcBin} check examples/broken/owner-missing.ts`, '/dev/null'], { cwd: repoRoot, reject: false, env: { NO_COLOR: '' } });
    expect(tty.stdout).toContain('\u001b[31merror\u001b[0m');
    expect(tty.stdout).toContain('IMGC0003');
    const plain = await imgc(['check', 'examples/broken/owner-missing.ts']);
    expect(plain.stdout).not.toContain('\u001b[');
    const noColor = await execa('script', ['-qec', `node ${imgcBin} check examples/broken/owner-missing.ts`, '/dev/null'], { cwd: repoRoot, reject: false, env: { NO_COLOR: '1' } });
    expect(noColor.stdout).not.toContain('\u001b[31m');
    // FORCE_COLOR=0 is off, as supports-color and the tools that follow it read it, on a terminal too.
    const forcedOff = await execa('script', ['-qec', `node ${imgcBin} check examples/broken/owner-missing.ts`, '/dev/null'], { cwd: repoRoot, reject: false, env: { NO_COLOR: '', FORCE_COLOR: '0' } });
    expect(forcedOff.stdout).toContain('IMGC0003');
    expect(forcedOff.stdout).not.toContain('\u001b[');
  });

  it('--quiet prints errors only; --verbose adds the steps and their facts', async () => {
    const quiet = await imgc(['check', '--quiet', 'examples/broken/warnings.ts']);
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stdout).toBe('');
    const loud = await imgc(['check', 'examples/broken/warnings.ts']);
    expect(loud.stdout).toContain('IMGC0007');
    const verbose = await imgc(['check', '--verbose', 'examples/node-image.ts']);
    expect(verbose.stdout).toContain('contracts hold');
    expect(verbose.stdout).toContain("customize.2.user: user 'ops'");
    expect(verbose.stdout).toContain("requires group 'admins', group 'sudo', path '/home'");
  });
});
