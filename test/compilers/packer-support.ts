// Shared by the packer backend's tests: running Packer 1.6.6 without touching
// ~ or the network, writing compiled output, and reading templates back.
import { parse } from '@cdktf/hcl2json';
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { writeTreeAtomically } from '../../src/host/write.js';
import type { CompiledFiles } from '../../src/compilers/types.js';
import { tempDir } from '../helpers/cli.js';

/** Packer with its home, plugin directory and cache in a temp dir, no checkpoint calls, no AWS credentials. */
export const packerEnv = (): Record<string, string> => {
  const home = tempDir('packer-home');
  mkdirSync(path.join(home, 'plugins'), { recursive: true });
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    PACKER_PLUGIN_PATH: path.join(home, 'plugins'),
    PACKER_CACHE_DIR: path.join(home, 'cache'),
    CHECKPOINT_DISABLE: '1',
    TMPDIR: home,
  };
};

export const packer = async (args: string[], cwd: string) => {
  const r = await execa('packer', args, { cwd, env: packerEnv(), extendEnv: false, reject: false, all: true });
  return { code: r.exitCode ?? -1, out: r.all ?? '' };
};

/** Writes the files as `imgc compile --out` does (same writer, same modes). */
export const writeOut = (files: CompiledFiles, prefix: string): string => {
  const dir = path.join(tempDir(prefix), 'out');
  writeTreeAtomically(dir, files);
  return dir;
};

export type Parsed = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The template as HashiCorp's HCL parser (hcl2json) reads it. */
export const parseHcl = async (text: string): Promise<Parsed> => (await parse('template.pkr.hcl', text)) as Parsed;

let key: string | undefined;
/** A key pair made for the test file (as a user makes one per build): the private key's path; the public key is beside it, `.pub`. */
export const buildKey = (): string => {
  if (!key) {
    const file = path.join(tempDir('packer-key'), 'build_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'imgc-test-build', '-f', file]);
    key = file;
  }
  return key;
};

/** `-var` arguments for the variables without a default, with values packer validate accepts (it reads the seed's key file). */
export const requiredVars = (parsed: Parsed): string[] =>
  Object.entries((parsed['variable'] ?? {}) as Record<string, Parsed[]>)
    .filter(([, [v]]) => v && !('default' in v))
    .flatMap(([name]) => ['-var', `${name}=${name.endsWith('_checksum') ? `sha512:${'a'.repeat(128)}` : name.endsWith('_ssh_private_key_file') ? buildKey() : 'example'}`]);

/** packer validate (full, not -syntax-only) must pass. */
export const expectValid = async (dir: string, target: string, vars: string[]): Promise<void> => {
  const r = await packer(['validate', ...vars, target], dir);
  expect(r.code, `packer validate ${target}:\n${r.out}`).toBe(0);
};

/** The provisioner types of the build, in order, as `packer inspect` lists them. */
export const inspectProvisioners = async (dir: string, target: string, vars: string[]): Promise<{ provisioners: string[]; text: string }> => {
  const r = await packer(['inspect', ...vars, target], dir);
  expect(r.code, `packer inspect ${target}:\n${r.out}`).toBe(0);
  const lines = r.out.split('\n').map((l) => l.trim());
  const start = lines.indexOf('provisioners:');
  const end = lines.indexOf('post-processors:');
  expect(start, r.out).toBeGreaterThan(-1);
  return { provisioners: lines.slice(start + 1, end).filter(Boolean), text: r.out };
};
