// What every step kind's test does with its outputs: golden files per target,
// and the real tools on them (shellcheck, ansible-playbook --syntax-check and
// ansible-lint --profile production, cloud-init schema).
import { execa } from 'execa';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { compilers } from '../../src/compilers/index.js';
import type { Image } from '../../src/ir/schema.js';
import { verifyRoot } from '../../src/verify/index.js';
import { expectGolden } from '../helpers/golden.js';
import { tempDir } from '../helpers/temp.js';
import { ansibleEnv, run, workspace, writeFiles } from '../compilers/ansible-support.js';
import { outcomes, parseProgress, runSh } from '../compilers/shell-support.js';
import { cloudInitView } from '../compilers/cloud-init-support.js';

export const write = (dir: string, files: Record<string, string>): void => {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text, { mode: rel.endsWith('.sh') ? 0o755 : 0o644 });
  }
};

/** `playbook` in `dir` passes ansible-playbook --syntax-check, and the directory ansible-lint --profile production; `home` is Ansible's. */
export const lintClean = async (dir: string, playbook: string, home: string): Promise<void> => {
  const env = ansibleEnv(home);
  const syntax = await execa('ansible-playbook', ['--syntax-check', '-i', 'localhost,', playbook], { cwd: dir, env, reject: false, all: true });
  expect(syntax.exitCode, syntax.all).toBe(0);
  const lint = await execa('ansible-lint', ['--offline', '--profile', 'production', '--strict', '--nocolor', '-p'], { cwd: dir, env, reject: false, all: true });
  expect(lint.exitCode, lint.all).toBe(0);
};

/** The tests of a kind's outputs: `ir` holds its steps; goldens go to test/golden/<name>/<target>. */
export const outputTests = (ir: Image, name: string): void => {
  for (const target of ['shell', 'ansible', 'cloud-init', 'packer'] as const) {
    it(`${target}: matches the golden files`, () => {
      expectGolden(`${name}/${target}`, compilers[target].compile(ir, { packerVersion: '1.6' } as never));
    });
  }

  it('shell: passes shellcheck', async () => {
    const dir = tempDir(`${name}-shell`);
    const files = compilers.shell.compile(ir, {});
    write(dir, files);
    const r = await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', '-S', 'style', ...Object.keys(files).filter((f) => f.endsWith('.sh'))], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
  });

  it('ansible: ansible-lint --profile production and --syntax-check pass', async () => {
    const dir = tempDir(`${name}-ansible`);
    write(dir, compilers.ansible.compile(ir, {}));
    await lintClean(dir, 'site.yml', tempDir(`${name}-ansible-home`));
  });

  it('cloud-init: passes cloud-init schema; its runcmd and bootcmd, as cloud-init writes them, are sh', async () => {
    const dir = tempDir(`${name}-cloud-init`);
    write(dir, compilers['cloud-init'].compile(ir, {}));
    const r = await execa('cloud-init', ['schema', '-c', path.join(dir, 'user-data')], { reject: false, all: true, env: { HOME: dir } });
    expect(r.exitCode, r.all).toBe(0);
    const cfg = await cloudInitView(dir, dir);
    for (const script of ['runcmd', 'bootcmd'].filter((k) => k in cfg).map((k) => `${k}.sh`)) {
      const n = await execa('sh', ['-n', script], { cwd: dir, reject: false });
      expect(n.stderr, `sh -n ${script}`).toBe('');
    }
  });
};

/**
 * A phase of edits run by the shell output and by Ansible (local connection)
 * on two copies of the same files: `before` names the files and their text,
 * `extra` adds what text cannot say (modes, links), and `cases` is the
 * one-phase image that edits a directory's files.
 */
export const onSameFiles = (name: string, cases: (dir: string) => Image, before: Readonly<Record<string, string>>, extra: (dir: string) => void = () => {}) => {
  /** The files of `before` in `dir`, as they were before any edit. */
  const seed = (dir: string): void => {
    mkdirSync(dir, { recursive: true });
    for (const [n, text] of Object.entries(before)) writeFileSync(path.join(dir, n), text);
    extra(dir);
  };
  const ws = workspace(name);
  const sh = path.join(ws.root, 'sh');
  const ansible = path.join(ws.root, 'ansible');
  const out = path.join(ws.root, 'sh-out');
  const ir = cases(sh);
  beforeAll(() => {
    seed(sh);
    seed(ansible);
    writeFiles(out, compilers.shell.compile(ir, {}));
    writeFiles(ws.out, compilers.ansible.compile(cases(ansible), {}));
  });
  afterAll(() => ws.remove());
  return {
    sh,
    ansible,
    root: ws.root,
    seed,
    /** The text of each file of `before` in `dir`. */
    contents: (dir: string): Record<string, string> => Object.fromEntries(Object.keys(before).map((n) => [n, readFileSync(path.join(dir, n), 'utf8')])),
    ids: ir.phases[0]!.steps.map((s) => s.id),
    /** Runs the shell output once; it must succeed. The outcome of each step. */
    shell: async () => {
      const r = await runSh(path.join(out, 'phases', `01-${ir.phases[0]!.name}.sh`));
      expect(r.exitCode, r.stderr).toBe(0);
      return outcomes(parseProgress(r.stdout));
    },
    /** Runs the playbook twice: both succeed, and the second changes nothing. */
    ansibleTwice: async () => {
      const play = () => run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'site.yml'], ws.out, ws.home);
      const first = await play();
      expect(first.exitCode, first.all).toBe(0);
      const second = await play();
      expect(second.exitCode, second.all).toBe(0);
      expect(second.all).toMatch(/localhost\s*:\s*ok=\d+\s+changed=0\s/);
    },
    /** What verify finds wrong with the edits of `dir`'s files. */
    failures: (dir: string) =>
      verifyRoot(cases(dir), '/')
        .failures.filter((f) => f.what.includes(dir))
        .map((f) => f.what),
  };
};
