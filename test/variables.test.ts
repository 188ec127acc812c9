// Typed variables end to end through the real CLI: precedence, IMGC1008 with
// the value's source, IMGC0011, each backend's native references, the shell
// scripts reading IMGC_VAR_*, and a sensitive value that appears nowhere.
import { execa } from 'execa';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { imgc, repoRoot, tempDir } from './helpers/cli.js';

const example = path.join(repoRoot, 'test/fixtures/node-vars.ts');

const irVars = async (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) => {
  const r = await imgc(['ir', '--no-typecheck', example, ...args], opts);
  expect(r.exitCode, r.all).toBe(0);
  return (JSON.parse(r.stdout) as { variables: { name: string; value?: unknown; sensitive: boolean }[] }).variables;
};
const minorOf = (vars: { name: string; value?: unknown }[]) => vars.find((v) => v.name === 'k8s_minor')?.value;

const withToml = (text: string): string => {
  const dir = tempDir('vars-toml');
  writeFileSync(path.join(dir, 'imgc.toml'), text);
  return dir;
};

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });

describe('variables: values and precedence', () => {
  it('--var > IMGC_VAR_<NAME> > imgc.toml [vars] > default', async () => {
    const cwd = withToml('[vars]\nk8s_minor = "1.33"\n');
    expect(minorOf(await irVars([]))).toBe('1.30');
    expect(minorOf(await irVars([], { cwd }))).toBe('1.33');
    expect(minorOf(await irVars([], { cwd, env: { IMGC_VAR_K8S_MINOR: '1.32' } }))).toBe('1.32');
    expect(minorOf(await irVars(['--var', 'k8s_minor=1.31'], { cwd, env: { IMGC_VAR_K8S_MINOR: '1.32' } }))).toBe('1.31');
  });

  it('records a sensitive variable without a value', async () => {
    const vars = await irVars(['--var', 'join_token=abcdef.0123456789abcdef']);
    expect(vars.find((v) => v.name === 'join_token')).toEqual({
      name: 'join_token',
      type: 'string',
      description: expect.any(String),
      sensitive: true,
    });
  });

  it('refuses invalid values with IMGC1008 naming the source', async () => {
    const cli = await imgc(['check', '--no-typecheck', example, '--var', 'k8s_minor=one.two']);
    expect(cli.exitCode).toBe(2);
    expect(cli.all).toMatch(/IMGC1008: --var: invalid value for variable 'k8s_minor' "one.two"/);
    const env = await imgc(['check', '--no-typecheck', example], { env: { IMGC_VAR_K8S_MINOR: 'x' } });
    expect(env.all).toMatch(/IMGC1008: IMGC_VAR_K8S_MINOR: invalid value/);
    const cwd = withToml('# project\n[vars]\n\nk8s_minor = 130\n');
    const toml = await imgc(['check', '--no-typecheck', example], { cwd });
    expect(toml.exitCode).toBe(2);
    expect(toml.all).toMatch(/IMGC1008: imgc\.toml:4: invalid value for variable 'k8s_minor' 130/);
    const unknown = await imgc(['check', '--no-typecheck', example, '--var', 'k8s_major=1']);
    expect(unknown.all).toMatch(/IMGC1008: --var: no variable 'k8s_major'/);
    const strict = await imgc(['check', '--no-typecheck', example], { cwd: withToml('[vars]\nk8s_minor = [1]\n') });
    expect(strict.exitCode).toBe(2);
    expect(strict.all).toMatch(/imgc\.toml:2: vars\.k8s_minor/);
  });
});

const definition = (body: string): string => {
  const dir = tempDir('vars-def');
  const file = path.join(dir, 'def.ts');
  writeFileSync(
    file,
    `import { debian12, image, variable, z } from 'imgc';\n` +
      `const dir = variable('dir', z.string(), { default: '/tmp/x' });\n` +
      `const greeting = variable('greeting', z.string(), { default: 'hello' });\n` +
      `const token = variable('token', z.string(), { sensitive: true });\n` +
      `void dir; void greeting; void token;\n` +
      `export default image('vars').base(debian12()).customize((p) =>\n${body}\n);\n`,
  );
  return file;
};

describe('variables: where they may stand', () => {
  it('a variable in a path is IMGC0011 at the step', async () => {
    const file = definition("  p.directory(`/srv${dir}`, { mode: '0755' }),");
    const r = await imgc(['check', '--no-typecheck', file]);
    expect(r.exitCode).toBe(1);
    expect(r.all).toMatch(/def\.ts:7:\d+ - error IMGC0011: customize\.1\.directory\.path uses variable 'dir' where a literal is needed/);
  });

  it('a private-use marker of no declared variable is IMGC2001', async () => {
    const file = definition("  p.file('/tmp/f', { content: '\\uE000var:nope\\uE001' }),");
    const r = await imgc(['check', '--no-typecheck', file]);
    expect(r.exitCode).toBe(1);
    expect(r.all).toMatch(/IMGC2001: customize\.1\.file\.content references undeclared variable 'nope'/);
  });

  it('the shell scripts read IMGC_VAR_* and write the exact bytes', async () => {
    const root = tempDir('vars-run');
    const target = path.join(root, 'greeting.txt');
    const file = definition(`  p.directory(${JSON.stringify(root)}).file(${JSON.stringify(target)}, { mode: '0644', content: \`\${greeting}, 'world' $HOME \\\${x}\\n\` }),`);
    const out = tempDir('vars-shell');
    const c = await imgc(['compile', '--no-typecheck', file, '--target', 'shell', '--out', out]);
    expect(c.exitCode, c.all).toBe(0);
    const script = path.join(out, 'phases/01-customize.sh');
    expect(readFileSync(script, 'utf8')).toContain('IMGC_VAR_GREETING=${IMGC_VAR_GREETING:-hello}');
    await execa('/bin/sh', [script]);
    expect(readFileSync(target, 'utf8')).toBe("hello, 'world' $HOME ${x}\n");
    await execa('/bin/sh', [script], { env: { IMGC_VAR_GREETING: "it's $(id) `x`" } });
    expect(readFileSync(target, 'utf8')).toBe("it's $(id) `x`, 'world' $HOME ${x}\n");
    await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', script]);
  });
});

describe('variables: a raw command takes values from its environment', () => {
  // The command's own shell expands the value: it is never on a command line (ps
  // shows argv to every user) and never read as shell code.
  const hostile = `s3cr"et' $(echo injected) \`x\` \${HOME}`;

  it('shell: not in the argv of the command, byte for byte in what it writes', async () => {
    const root = tempDir('vars-cmd');
    const file = definition(`  p.command(\`tr '\\\\000' ' ' </proc/$$/cmdline >${root}/argv; printf %s "\${token}" >${root}/value\`),`);
    const out = tempDir('vars-cmd-shell');
    const c = await imgc(['compile', '--no-typecheck', file, '--target', 'shell', '--out', out]);
    expect(c.exitCode, c.all).toBe(0);
    const script = path.join(out, 'phases/01-customize.sh');
    await execa('/bin/sh', [script], { env: { IMGC_VAR_TOKEN: hostile } });
    expect(readFileSync(path.join(root, 'value'), 'utf8')).toBe(hostile);
    const argv = readFileSync(path.join(root, 'argv'), 'utf8');
    expect(argv).toMatch(/^\/bin\/sh -ec /);
    expect(argv).not.toContain('s3cr');
    await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', script]);
  });

  it('ansible: the task passes it through environment, the command names it', async () => {
    const file = definition(`  p.command(\`printf %s "\${token}" >/tmp/x\`),`);
    const out = tempDir('vars-cmd-ansible');
    const c = await imgc(['compile', '--no-typecheck', file, '--target', 'ansible', '--out', out]);
    expect(c.exitCode, c.all).toBe(0);
    const tasks = readFileSync(path.join(out, 'roles/customize/tasks/main.yml'), 'utf8');
    expect(tasks).toContain(`cmd: !unsafe 'printf %s "\${IMGC_VAR_TOKEN}" >/tmp/x'`);
    expect(tasks).toMatch(/environment:\n\s+IMGC_VAR_TOKEN: '\{\{ \(token\) \| string \}\}'\n\s+no_log: true/);
  });
});

describe('variables: every backend renders references', () => {
  it('native references, no resolved value where one is expected', async () => {
    const out = tempDir('vars-backends');
    const compile = async (target: string, extra: string[] = []) => {
      const r = await imgc(['compile', '--no-typecheck', example, '--target', target, '--out', path.join(out, target), ...extra]);
      expect(r.exitCode, r.all).toBe(0);
      return (f: string) => readFileSync(path.join(out, target, f), 'utf8');
    };
    const shell = await compile('shell');
    expect(shell('phases/02-provision.sh')).toContain(`URIs: https://pkgs.k8s.io/core:/stable:/v'"\${IMGC_VAR_K8S_MINOR}"'/deb/`);
    expect(shell('phases/02-provision.sh')).toContain(': "${IMGC_VAR_JOIN_TOKEN:?set IMGC_VAR_JOIN_TOKEN (sensitive variable join_token)}"');
    expect(shell('phases/02-provision.sh')).not.toContain('v1.30/deb');
    const ansible = await compile('ansible');
    const tasks = ansible('roles/provision/tasks/main.yml');
    expect(tasks).toContain("url: '{{ (''https://pkgs.k8s.io/core:/stable:/v'' ~ k8s_minor ~ ''/deb/Release.key'') | string }}'");
    expect(tasks).toContain('content: "{{ (join_token ~ \'\\n\') | string }}"');
    expect(tasks).toMatch(/ansible\.builtin\.assert:\n {4}that:\n {6}- 'join_token is defined'/);
    expect(tasks).not.toContain('v1.30/deb');
    expect(ansible('group_vars/all.yml')).toContain("k8s_minor: !unsafe '1.30'");
    const packer = await compile('packer');
    const hcl = packer('k8s-node.pkr.hcl');
    expect(hcl).toMatch(/variable "join_token" \{\n[^}]*sensitive {3}= true\n\}/);
    expect(hcl).toContain('"IMGC_VAR_JOIN_TOKEN=${base64encode(var.join_token)}"');
    const packerAnsible = await compile('packer', ['--provisioner', 'ansible']);
    // Values reach ansible-playbook through a mode-0600 extra-vars file, never its command line.
    expect(packerAnsible('k8s-node.pkr.hcl')).toContain("base64encode(jsonencode({ k8s_minor = var.k8s_minor, join_token = var.join_token }))");
    expect(packerAnsible('k8s-node.pkr.hcl')).toContain('"@${path.root}/ansible/.extra-vars-${source.name}.json"');
    const ci = await imgc(['compile', '--no-typecheck', example, '--target', 'cloud-init', '--out', path.join(out, 'ci')]);
    expect(ci.exitCode).toBe(1);
    expect(ci.all).toMatch(/IMGC2002: cloud-init cannot take sensitive variable 'join_token'/);
  });
});

describe('variables: a sensitive value appears nowhere', () => {
  it('not in stdout, stderr or any file written, whatever the command or target', async () => {
    const secret = `${randomBytes(3).toString('hex')}.${randomBytes(8).toString('hex')}`;
    const cwd = withToml(`[vars]\njoin_token = "${secret}"\n`);
    const env = { IMGC_VAR_JOIN_TOKEN: secret };
    const outputs: string[] = [];
    const run = async (args: string[]) => {
      const r = await imgc([...args.slice(0, 1), example, ...args.slice(1), '--var', `join_token=${secret}`], { cwd, env });
      outputs.push(r.stdout, r.stderr);
      return r;
    };
    expect((await run(['check'])).exitCode).toBe(0);
    expect((await run(['ir', '--no-typecheck'])).exitCode).toBe(0);
    const explained = await run(['explain', '--no-typecheck']);
    expect(explained.stdout, `exit ${explained.exitCode}: ${explained.all}`).toContain('variable join_token (string) = <sensitive>');
    const out = path.join(cwd, 'out');
    mkdirSync(out);
    for (const [target, extra] of [['shell', []], ['ansible', []], ['packer', []], ['packer', ['--provisioner', 'ansible', '--json']], ['cloud-init', []]] as const) {
      const r = await run(['compile', '--no-typecheck', '--target', target, '--out', path.join(out, `${target}-${extra.length}`), ...extra]);
      expect(r.exitCode, r.all).toBe(target === 'cloud-init' ? 1 : 0);
    }
    // A wrong secret is reported without its value, too.
    const bad = await imgc(['check', '--no-typecheck', example, '--var', `join_token=${secret}!`], { cwd });
    expect(bad.all).toMatch(/IMGC1008: --var: invalid value for variable 'join_token' \(sensitive, not shown\)/);
    outputs.push(bad.stdout, bad.stderr);
    const written = filesUnder(out);
    expect(written.length).toBeGreaterThan(20);
    for (const text of [...outputs, ...written.map((f) => readFileSync(f, 'utf8'))]) expect(text.includes(secret)).toBe(false);
  });
});
