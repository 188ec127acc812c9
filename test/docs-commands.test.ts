// The commands the docs and generated comments show, run as shown: the Packer
// template's header (its `packer validate` line, the placeholders filled in
// with values of the kind it asks for) and the tests docs/build-faults.md
// names as the proof of each claim.
import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { imgc, repoRoot } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { packerEnv } from './compilers/packer-support.js';

const havePacker = execa('packer', ['version'], { reject: false }).then((r) => r.exitCode === 0);

/** A value of the shape a header placeholder stands for: `sha512:…` a checksum, `…` any word. */
const fill = (placeholder: string): string => (placeholder.startsWith('sha512:') ? `sha512:${'a'.repeat(128)}` : 'abcdef.0123456789abcdef');

describe('the Packer template header', () => {
  it.each(['examples/node-image.ts', 'examples/node-image-debian.ts'])('%s: its packer validate line passes with the required variables, and names one left out', async (example) => {
    if (!(await havePacker)) return expect.fail('packer is not installed (.ci/run installs it)');
    const out = path.join(tempDir('header-commands'), 'packer');
    const c = await imgc(['compile', '--no-typecheck', example, '--target', 'packer', '--packer-version', '1.6', '--out', out]);
    expect(c.exitCode, c.all).toBe(0);
    const file = readdirSync(out).find((f) => f.endsWith('.pkr.hcl'))!;
    const header = readFileSync(path.join(out, file), 'utf8').split('\n').filter((l) => l.startsWith('#')).join('\n');
    expect(header).toMatch(/^# From this directory:$/m);
    const line = /^# {3}(packer validate .*)$/m.exec(header)?.[1];
    expect(line, header).toBeDefined();
    const args = line!.split(' ').slice(1).map((a) => a.replace(/=(sha512:)?…$/, (m) => `=${fill(m.slice(1))}`));
    expect(args.join(' ')).not.toContain('…');
    // The build's key pair, as the person building makes it (the qemu source's seed carries its .pub).
    await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(out, fill('…'))]);
    const env = packerEnv();
    const ok = await execa('packer', args, { cwd: out, env, extendEnv: false, reject: false, all: true });
    expect(ok.exitCode, ok.all).toBe(0);
    // "Required variables: …": each one is, Packer says so by name when it is left out.
    const required = /^# Required variables: (.*); the others have defaults\.$/m.exec(header)?.[1]?.split(', ') ?? [];
    expect(required.length).toBeGreaterThan(0);
    const without = args.filter((a, i) => !(args[i - 1] === '-var' && a.startsWith(`${required[0]}=`)) && !(a === '-var' && args[i + 1]?.startsWith(`${required[0]}=`)));
    const missing = await execa('packer', without, { cwd: out, env, extendEnv: false, reject: false, all: true });
    expect(missing.exitCode).not.toBe(0);
    expect(missing.all).toContain(required[0]);
  }, 180_000);
});

describe('docs/build-faults.md', () => {
  const text = readFileSync(path.join(repoRoot, 'docs', 'build-faults.md'), 'utf8');

  it('names tests that exist as the proof of its claims', () => {
    const named = [...new Set([...text.matchAll(/`(test\/[^`]+\.test\.ts)`/g)].map((m) => m[1]!))];
    expect(named.length).toBeGreaterThan(4);
    for (const t of named) expect(existsSync(path.join(repoRoot, t)), t).toBe(true);
  });

  it('no longer says a raw command carries a sensitive value on its command line', () => {
    expect(text).not.toMatch(/splices a variable's value into a raw/);
    expect(text).toMatch(/value is on no command line/);
  });
});
