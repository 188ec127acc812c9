// The system tools tests run, and the Debian package of each: .ci/run installs
// them on CI. A test that needs one that is missing says which package to
// install; outside CI it is then skipped, in CI (CI set) it fails, so CI never
// passes by skipping.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './cli.js';
import { toolPackages } from '../../src/build/tools.js';
import { archInfo, arches } from '../../src/core/arch.js';

/**
 * A command whose package is named otherwise (the rest are their own package): the build's tools (src/build/tools.ts),
 * each architecture's QEMU and UEFI firmware files (src/core/arch.ts), and the tests' own.
 */
const packageOf: Record<string, string> = {
  ...toolPackages,
  ...Object.fromEntries(
    arches.flatMap((a) => {
      const i = archInfo[a];
      return [[i.qemuSystem, i.qemuPackage], ...[...i.firmware.code, ...i.firmware.vars].map((f) => [f, i.firmwarePackage])];
    }),
  ),
  dot: 'graphviz',
  'mkfs.vfat': 'dosfstools',
  visudo: 'sudo',
  sshd: 'openssh-server',
};

/** The packages .ci/run installs with apt-get. */
export const ciPackages = (): string[] => {
  const text = readFileSync(path.join(repoRoot, '.ci', 'run'), 'utf8');
  const install = /apt-get install [^\n]*\\\n((?:[^\n]*\\\n)*[^\n]*)/.exec(text)?.[1] ?? '';
  return install.replace(/\\\n/g, ' ').replace(/>.*$/, '').split(/\s+/).filter((w) => w && !w.startsWith('-'));
};

export const debianPackage = (command: string): string => packageOf[command] ?? command;

/** A command on PATH (or in sbin), or a file by its absolute path. */
const found = (command: string): boolean =>
  command.startsWith('/')
    ? existsSync(command)
    : spawnSync('sh', ['-c', `command -v '${command}'`], { stdio: 'ignore', env: { ...process.env, PATH: `${process.env['PATH'] ?? ''}:/usr/sbin:/sbin` } }).status === 0;

/** Why the test cannot run here ("zsh is not installed: apt-get install zsh …"), or undefined when every command is. */
export const missingTools = (...commands: string[]): string | undefined => {
  const missing = commands.filter((c) => !found(c));
  if (!missing.length) return undefined;
  const packages = [...new Set(missing.map(debianPackage))];
  return `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed: apt-get install ${packages.join(' ')} (every package the tests use: .ci/run)`;
};

/** In a test: skips it (outside CI) or fails it (in CI) with the package to install, when a command is missing. */
export const needTools = (ctx: { skip: (note?: string) => void }, ...commands: string[]): void => {
  const why = missingTools(...commands);
  if (!why) return;
  if (process.env['CI']) throw new Error(why);
  ctx.skip(why);
};
