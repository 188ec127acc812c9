// Files that lock people out when broken (sudoers, sshd's configuration) are
// checked by the tool that reads them before they take their place, in every
// target: the shell helpers (also cloud-init's runcmd), and Ansible's copy
// `validate`. Run for real with visudo and sshd; the old file stays when the
// check fails.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ansibleCompiler } from '../../src/compilers/ansible/index.js';
import { cloudInitCompiler } from '../../src/compilers/cloud-init/index.js';
import { helperCode } from '../../src/compilers/shell/helpers.js';
import { word } from '../../src/emit/shell/quote.js';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import { validatorCommand, validatorFor } from '../../src/emit/validators.js';
import { bool, label, str, unsafe, word as yamlWord } from '../../src/emit/ansible/quote.js';
import { document, map, seq } from '../../src/emit/ansible/yaml.js';
import { tempDir } from '../helpers/cli.js';
import { run, workspace, writeFiles } from '../compilers/ansible-support.js';
import { imageOf, phase, runSh, step } from '../compilers/shell-support.js';

const goodSudoers = '%admins ALL=(ALL:ALL) NOPASSWD: ALL\n';
const badSudoers = '%admins ALL=(ALL:ALL NOPASSWD ALL\n';
const goodSshd = 'PasswordAuthentication no\nPermitRootLogin no\n';
const badSshd = 'PasswordAuthentication maybe\n';

describe('which files are checked', () => {
  it('sudoers and its drop-ins, sshd_config and its drop-ins; nothing else', () => {
    expect(validatorFor('/etc/sudoers')).toBe('sudoers');
    expect(validatorFor('/etc/sudoers.d/admins')).toBe('sudoers');
    expect(validatorFor('/etc/ssh/sshd_config')).toBe('sshd');
    expect(validatorFor('/etc/ssh/sshd_config.d/50-x.conf')).toBe('sshd');
    expect(validatorFor('/etc/sudoers.d/deeper/x')).toBeUndefined();
    expect(validatorFor('/etc/ssh/ssh_config')).toBeUndefined();
  });

  it('each target routes them through the check', () => {
    const ir = imageOf([
      phase('customize', [
        step({ id: 'customize.1.file', kind: 'file', path: '/etc/sudoers.d/admins', content: goodSudoers, mode: '0440' }),
        step({ id: 'customize.2.file', kind: 'file', path: '/etc/ssh/sshd_config.d/50-x.conf', content: goodSshd }),
        step({ id: 'customize.3.file', kind: 'file', path: '/etc/motd', content: 'hi\n' }),
      ]),
    ]);
    const shell = Object.values(shellCompiler.compile(ir, {})).join('\n');
    expect(shell).toContain('imgc_checked imgc_check_sudoers imgc_file /etc/sudoers.d/admins ');
    expect(shell).toContain('imgc_checked imgc_check_sshd imgc_file /etc/ssh/sshd_config.d/50-x.conf ');
    expect(shell).toMatch(/\n {2}imgc_file \/etc\/motd /);
    const ansible = Object.values(ansibleCompiler.compile(ir, {})).join('\n');
    expect(ansible.match(/\n {4}validate: /g)).toHaveLength(2);
    const userData = cloudInitCompiler.compile(ir, {})['user-data']!;
    expect(userData).toMatch(/- imgc_checked\n +- imgc_check_sudoers\n +- imgc_file\n +- \/etc\/sudoers\.d\/admins\n/);
    expect(userData).toMatch(/- imgc_checked\n +- imgc_check_sshd\n +- imgc_file\n +- \/etc\/ssh\/sshd_config\.d\/50-x\.conf\n/);
    expect(userData).not.toMatch(/path: \/etc\/sudoers\.d/);
  });
});

describe('the checks, run for real', () => {
  const cases = [
    { check: 'imgc_check_sudoers', good: goodSudoers, bad: badSudoers, mode: '0440' },
    { check: 'imgc_check_sshd', good: goodSshd, bad: badSshd, mode: '0644' },
  ];

  it.each(cases)('the shell helper $check lets a good file in and keeps the old one when the new one is bad', async ({ check, good, bad, mode }) => {
    const dir = tempDir('validate-sh');
    const target = path.join(dir, 'conf');
    const script = path.join(dir, 'run.sh');
    const call = (content: string) => `imgc_checked ${check} imgc_file ${word(target)} ${word(mode)} '' '' ${word(content)}`;
    writeFileSync(script, [...helperCode(['checked', 'checkSudoers', 'checkSshd', 'file']), 'set -e', call(good), 'echo first', call(bad), 'echo second', ''].join('\n'));
    const r = await runSh(script, { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
    expect(r.stdout).toBe('first\n');
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(`imgc: ${target}: refused by ${check}; the file was left as it was`);
    expect(readFileSync(target, 'utf8')).toBe(good);
  });

  it('Ansible copy with the validate of each check writes a good file and refuses a bad one', async () => {
    const ws = workspace('validate');
    mkdirSync(ws.out, { recursive: true });
    const tasks = cases.flatMap(({ good, bad }, i) => {
      const dest = path.join(ws.root, `conf-${i}`);
      const validate = unsafe(validatorCommand(i === 0 ? 'sudoers' : 'sshd'));
      return [
        map({ name: label(`Good ${i}`), 'ansible.builtin.copy': map({ content: unsafe(good), dest: unsafe(dest), mode: str('0644'), validate }) }),
        map({ name: label(`Bad ${i}`), 'ansible.builtin.copy': map({ content: unsafe(bad), dest: unsafe(dest), mode: str('0644'), validate }), ignore_errors: bool(true) }),
      ];
    });
    writeFiles(ws.out, { 'play.yml': document(seq([map({ name: label('Validate'), hosts: yamlWord('all'), gather_facts: bool(false), tasks: seq(tasks) })])) });
    const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'play.yml'], ws.out, ws.home, { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toMatch(/failed=0 .*ignored=2/);
    cases.forEach(({ good }, i) => expect(readFileSync(path.join(ws.root, `conf-${i}`), 'utf8')).toBe(good));
  });
});
