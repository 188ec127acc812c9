// The command line as users of other tools expect it: help per command, flags
// only where they apply, did-you-mean, -V, colour conventions, --var-file and
// shell completions that offer what each command takes.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { commandHelp, commandNamed, commands, parseCommand } from '../src/cli/commands.js';
import { completionScript } from '../src/cli/completion.js';
import { imgc, imgcProcess, tempDir } from './helpers/cli.js';
import { needTools } from './helpers/tools.js';

const cmd = (name: string) => commandNamed(name) ?? expect.fail(`no command ${name}`);

describe('the command table', () => {
  it('accepts a flag only on the commands that take it, and says which do', () => {
    expect(parseCommand(cmd('explain'), ['--graph', 'dot', 'x.ts']).values['graph']).toBe('dot');
    expect(() => parseCommand(cmd('check'), ['--graph', 'dot', 'x.ts'])).toThrow("check does not take --graph (it is an option of explain)");
    expect(() => parseCommand(cmd('schema'), ['-t', 'packer'])).toThrow('schema does not take -t (it is an option of compile, build)');
  });

  it('suggests the flag or value that was probably meant', () => {
    expect(() => parseCommand(cmd('compile'), ['--taget', 'shell'])).toThrow('did you mean --target?');
    expect(() => parseCommand(cmd('explain'), ['--graph', 'dto'])).toThrow("--graph must be one of mermaid, dot, lifecycle (got 'dto'); did you mean 'dot'?");
  });

  it("a command's help lists its own flags and no other command's", () => {
    const check = commandHelp(cmd('check'));
    expect(check).toMatch(/^Usage: imgc check \[FILE\] \[options\]/);
    expect(check).toContain('--format text|json|sarif');
    expect(check).toContain('--var-file FILE');
    expect(check).not.toContain('--graph');
    expect(check).not.toContain('--target');
    // (--variants is schema's own: the JSON Schema of imgc variants' output)
    expect(commandHelp(cmd('schema'))).not.toMatch(/--var(-file)? /);
  });
});

describe('imgc on the command line', () => {
  it('help, --help and -V', async () => {
    const help = await imgc(['help', 'compile']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('--provisioner shell|ansible');
    expect((await imgc(['compile', '--help'])).stdout).toBe(help.stdout);
    expect((await imgc(['build', '-h'])).stdout).toContain('--from-tar FILE');
    const overview = await imgc(['help']);
    for (const c of commands) expect(overview.stdout).toContain(`\n  ${c.name}`);
    expect((await imgc(['-V'])).stdout).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('a mistyped command gets a suggestion, every usage error one "imgc:" prefix and exit 2', async () => {
    const r = await imgc(['chek', 'examples/node-image.ts']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("imgc: unknown command 'chek'; did you mean 'check'?");
    for (const args of [['check', '--graph', 'dot'], ['build'], ['verify', 'x.ts'], ['compile', 'examples/node-image.ts'], ['help', 'nope']]) {
      const u = await imgc(args);
      expect(u.exitCode, args.join(' ')).toBe(2);
      expect(u.stderr, args.join(' ')).toMatch(/^imgc: /);
      expect(u.stderr, args.join(' ')).not.toMatch(/imgc: imgc/);
    }
  });

  // A process whose stdout is a pipe: what a user's `imgc check | less` meets.
  it('colour: a pipe gets none; --color and FORCE_COLOR turn it on, --no-color and NO_COLOR off', async () => {
    const file = 'examples/broken/owner-missing.ts';
    const esc = '\u001b[';
    expect((await imgcProcess(['check', '--no-typecheck', file])).stdout).not.toContain(esc);
    expect((await imgcProcess(['check', '--no-typecheck', '--color', file])).stdout).toContain(esc);
    expect((await imgcProcess(['check', '--no-typecheck', file], { env: { FORCE_COLOR: '1' } })).stdout).toContain(esc);
    expect((await imgcProcess(['check', '--no-typecheck', '--no-color', file], { env: { FORCE_COLOR: '1' } })).stdout).not.toContain(esc);
    expect((await imgcProcess(['check', '--no-typecheck', file], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).stdout).not.toContain(esc);
  });

  it('--var-file reads TOML or JSON, below --var and above the environment; its errors name the file and line', async () => {
    const dir = tempDir('var-file');
    const tomlFile = path.join(dir, 'vars.toml');
    const jsonFile = path.join(dir, 'vars.json');
    writeFileSync(tomlFile, '# team defaults\nk8s_minor = "1.31"\n');
    writeFileSync(jsonFile, '{ "k8s_minor": "1.32" }');
    const minor = async (args: string[], env: Record<string, string> = {}) => {
      const r = await imgc(['ir', '--no-typecheck', 'test/fixtures/node-vars.ts', ...args], { env });
      expect(r.exitCode, r.all).toBe(0);
      return (JSON.parse(r.stdout) as { variables: { name: string; value?: unknown }[] }).variables.find((v) => v.name === 'k8s_minor')?.value;
    };
    expect(await minor(['--var-file', tomlFile], { IMGC_VAR_K8S_MINOR: '1.29' })).toBe('1.31');
    expect(await minor(['--var-file', tomlFile, '--var-file', jsonFile])).toBe('1.32');
    expect(await minor(['--var-file', jsonFile, '--var', 'k8s_minor=1.33'])).toBe('1.33');
    writeFileSync(tomlFile, '# team defaults\nk8s_minor = "1.31"\nk8s_minor = "1.32"\n');
    const dup = await imgc(['check', '--no-typecheck', 'test/fixtures/node-vars.ts', '--var-file', tomlFile]);
    expect(dup.exitCode).toBe(2);
    expect(dup.stderr).toContain(`imgc: ${tomlFile}:3:`);
    writeFileSync(tomlFile, 'k8s_minor = "nope"\n');
    const bad = await imgc(['check', '--no-typecheck', 'test/fixtures/node-vars.ts', '--var-file', tomlFile]);
    expect(bad.exitCode).toBe(2);
    expect(bad.all).toContain(`${tomlFile}:1`);
  });
});

describe('imgc completion', () => {
  const script = (shell: 'bash' | 'zsh' | 'fish') => {
    const file = path.join(tempDir(`completion-${shell}`), `imgc.${shell}`);
    writeFileSync(file, completionScript(shell));
    return file;
  };

  it('bash offers commands, the flags of the command at hand, and the values of a flag', async () => {
    const file = script('bash');
    const complete = async (...words: string[]) => {
      const r = await execa('bash', ['-c', `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _imgc; printf '%s\\n' "\${COMPREPLY[@]}"`]);
      return r.stdout.split('\n').filter(Boolean).sort();
    };
    expect(await complete('imgc', 'ch')).toEqual(['check']);
    expect(await complete('imgc', 'check', '--f')).toEqual(['--format']);
    expect(await complete('imgc', 'explain', 'x.ts', '--graph', '')).toEqual(['dot', 'lifecycle', 'mermaid']);
    expect(await complete('imgc', 'check', '--gr')).toEqual([]);
    expect(await complete('imgc', 'completion', '')).toEqual(['bash', 'fish', 'zsh']);
  });

  it('fish offers the same, and zsh accepts its script', async (ctx) => {
    needTools(ctx, 'fish', 'zsh');
    const fish = script('fish');
    const complete = async (line: string) => (await execa('fish', ['--no-config', '-c', `source ${fish}; complete -C '${line}'`])).stdout.split('\n').map((l) => l.split('\t')[0]).filter(Boolean).sort();
    expect(await complete('imgc ch')).toEqual(['check']);
    expect(await complete('imgc check --fo')).toEqual(['--format']);
    expect(await complete('imgc compile --target ')).toEqual(['ansible', 'cloud-init', 'packer', 'shell']);
    const zsh = script('zsh');
    const z = await execa('zsh', ['-f', '-c', `autoload -U compinit && compinit -u -D && source ${zsh} && print -r -- $_comps[imgc]`], { reject: false, all: true });
    expect(z.exitCode, z.all).toBe(0);
    expect(z.stdout.trim()).toBe('_imgc');
  });
});
