// Variable values through Packer, which renders provisioner strings with its
// own `{{ }}` engine: hostile values (template actions, quotes, `$`, line
// breaks, Unicode) pass `packer validate` and come back byte for byte from a
// real `packer build` (null source, shell-local provisioner that prints each
// value in hex), and a sensitive one is on no process's command line while the
// build runs; the ansible provisioners' extra-vars file, written by a real
// build, holds them exactly. The target-side decoding (shell provisioner) runs in sh here.
import { execa } from 'execa';
import fc from 'fast-check';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { attr, block, bool, list, str, tmpl, writeHcl, type Item } from '../../src/compilers/packer/hcl.js';
import { localProvisioner } from '../../src/compilers/packer/index.js';
import { executeAsRootWithVars, withVariables } from '../../src/compilers/packer/variables.js';
import type { Image } from '../../src/ir/schema.js';
import { envName } from '../../src/core/variables.js';
import { tempDir } from '../helpers/cli.js';
import { imageOf, phase } from './ansible-support.js';
import { packer } from './packer-support.js';

const pieces = [
  '{{ lookup("env", "HOME") }}', '{{uuid}}', '{{ uuid }}', '{{ .Vars }}', '{{ .Path }}', '{{', '}}', '{{{', '}}}', '{{"{{"}}', '{{/* c */}}', '{{-', '-}}',
  '${var.x}', '$${', '%{ if true }', '"', "'", '\\', '$', '$(id)', '`id`', ';', '&', '|', '\n', '\r\n', '\t', ' ', '#', '=', 'é', '日本', '😀', '\u2028',
];
const value = fc
  .array(fc.oneof(fc.constantFrom(...pieces), fc.string({ unit: 'grapheme-ascii', maxLength: 4 })), { maxLength: 10 })
  .map((p) => p.join(''))
  .filter((s) => !s.includes('\0'));

const SECRET = `sekrit-{{ uuid }}-${Date.now().toString(36)}`;

describe('packer: variable values Packer never interprets', () => {
  it('hostile values pass packer validate and a real packer build prints each back exactly; the sensitive one is on no command line', async () => {
    const values = [...fc.sample(value, { numRuns: 40, seed: Number(process.env['IMGC_PROPERTY_SEED'] ?? 14014) }), '', '\n\n', 'x\n', SECRET];
    const names = values.map((_, i) => `v${i}`);
    const sensitive = names[names.length - 1]!;
    const ir: Image = {
      ...imageOf([phase('customize', [])], 'vars'),
      variables: names.map((name) => ({ name, type: 'string' as const, sensitive: name === sensitive, ...(name === sensitive ? {} : { value: 'default' }) })),
    };
    // The embedded hook script: each value in hex, then every process's command line.
    const script = [
      ...names.map((n) => `printf '%s=%s\\n' ${n} "$(printf %s "\${${envName(n)}}" | od -An -tx1 | tr -d ' \\n')"`),
      'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done > cmdlines.txt',
    ].join('\n');
    const embedded = { 'shell/hooks/01-customize-post.sh': `${script}\n` };
    const [provisioner] = withVariables(ir, [localProvisioner('shell/hooks/01-customize-post.sh', ['prints the values'])], embedded);
    const items: Item[] = [
      ...names.map((n) => block('variable', [n], [attr('type', { kind: 'type', name: 'string' }), ...(n === sensitive ? [attr('sensitive', bool(true))] : [])])),
      block('source', ['null', 'n'], [attr('communicator', str('none'))]),
      block('build', [], [attr('sources', list([str('source.null.n')])), provisioner!]),
    ];
    const dir = tempDir('packer-vars');
    writeFileSync(path.join(dir, 'vars.pkr.hcl'), writeHcl(items));
    await execa('mkdir', ['-p', path.join(dir, 'shell', 'hooks')]);
    writeFileSync(path.join(dir, 'shell', 'hooks', '01-customize-post.sh'), embedded['shell/hooks/01-customize-post.sh']);
    writeFileSync(path.join(dir, 'values.pkrvars.json'), JSON.stringify(Object.fromEntries(names.map((n, i) => [n, values[i]]))));

    const v = await packer(['validate', '-var-file=values.pkrvars.json', 'vars.pkr.hcl'], dir);
    expect(v.code, v.out).toBe(0);
    const b = await packer(['build', '-color=false', '-var-file=values.pkrvars.json', 'vars.pkr.hcl'], dir);
    expect(b.code, b.out).toBe(0);
    const printed = new Map([...b.out.matchAll(/\b(v\d+)=([0-9a-f]*)$/gm)].map((m) => [m[1]!, m[2]!]));
    for (const [i, n] of names.entries()) expect(Buffer.from(printed.get(n) ?? 'missing', 'hex').toString('utf8'), `${n} = ${JSON.stringify(values[i])}`).toBe(values[i]);
    const cmdlines = readFileSync(path.join(dir, 'cmdlines.txt'), 'utf8');
    expect(cmdlines).toContain('/bin/sh'); // it did see the build's processes
    expect(cmdlines).not.toContain(SECRET);
    expect(cmdlines).not.toContain(Buffer.from(SECRET).toString('base64'));
  }, 300_000);

  it('the target-side shell provisioner decodes every value from the env var file Packer uploads', async () => {
    const values = fc.sample(value, { numRuns: 30, seed: 1414 });
    const names = values.map((_, i) => envName(`v${i}`));
    const dir = tempDir('packer-decode');
    // As Packer writes it with use_env_var_file: export NAME='VALUE' (base64 needs no quoting).
    writeFileSync(path.join(dir, 'env'), names.map((n, i) => `export ${n}='${Buffer.from(values[i]!).toString('base64')}'\n`).join(''));
    writeFileSync(path.join(dir, 'script.sh'), names.map((n) => `printf '%s=%s\\n' ${n} "$(printf %s "$${n}" | od -An -tx1 | tr -d ' \\n')"`).join('\n'));
    const command = executeAsRootWithVars(names).replaceAll('{{ .Path }}', path.join(dir, 'script.sh')).replaceAll('{{ .EnvVarFile }}', path.join(dir, 'env'));
    const r = await execa('sh', ['-c', command], { reject: false, all: true });
    expect(r.exitCode, r.all).toBe(0);
    const printed = new Map([...r.stdout.matchAll(/^(\w+)=([0-9a-f]*)$/gm)].map((m) => [m[1]!, m[2]!]));
    for (const [i, n] of names.entries()) expect(Buffer.from(printed.get(n) ?? 'missing', 'hex').toString('utf8'), n).toBe(values[i]);
  });

  it('a template whose target-side provisioner gets hostile values passes packer validate', async () => {
    const values = fc.sample(value, { numRuns: 20, seed: 7 });
    const names = values.map((_, i) => `v${i}`);
    const ir: Image = { ...imageOf([phase('customize', [])], 'vars'), variables: names.map((name) => ({ name, type: 'string' as const, sensitive: true })) };
    const file = 'shell/phases/01-customize.sh';
    const embedded = { [file]: names.map((n) => `echo "\${${envName(n)}}"`).join('\n') };
    const dir = tempDir('packer-vars-target');
    await execa('mkdir', ['-p', path.join(dir, 'shell', 'phases')]);
    writeFileSync(path.join(dir, file), embedded[file]!);
    const target = block('provisioner', ['shell'], [attr('script', tmpl({ expr: 'path.root' }, `/${file}`)), attr('execute_command', str("sh '{{ .Path }}'"))]);
    const [provisioner] = withVariables(ir, [target], embedded);
    const items: Item[] = [
      ...names.map((n) => block('variable', [n], [attr('type', { kind: 'type', name: 'string' }), attr('sensitive', bool(true))])),
      block('source', ['null', 'n'], [attr('communicator', str('none'))]),
      block('build', [], [attr('sources', list([str('source.null.n')])), provisioner!]),
    ];
    writeFileSync(path.join(dir, 'vars.pkr.hcl'), writeHcl(items));
    writeFileSync(path.join(dir, 'values.pkrvars.json'), JSON.stringify(Object.fromEntries(names.map((n, i) => [n, values[i]]))));
    const v = await packer(['validate', '-var-file=values.pkrvars.json', 'vars.pkr.hcl'], dir);
    expect(v.code, v.out).toBe(0);
  }, 120_000);

  it('the ansible provisioners get hostile values exactly from a mode-0600 extra-vars file a real packer build writes, none on a command line', async () => {
    const values = [...fc.sample(value, { numRuns: 30, seed: Number(process.env['IMGC_PROPERTY_SEED'] ?? 2323) }), '', SECRET];
    const names = values.map((_, i) => `v${i}`);
    const ir: Image = { ...imageOf([phase('customize', [])], 'vars'), variables: names.map((name) => ({ name, type: 'string' as const, sensitive: true })) };
    const ansible = block('provisioner', ['ansible'], [attr('playbook_file', tmpl({ expr: 'path.root' }, '/ansible/site.yml')), attr('extra_arguments', list([str('--tags'), str('customize')]))]);
    const [write, withFile, remove] = withVariables(ir, [ansible], {});
    // ansible-playbook is given the file, not the values.
    expect(writeHcl([withFile!])).toMatch(/"-e",\s+"@\$\{path\.root\}\/ansible\/\.extra-vars-\$\{source\.name\}\.json"/);
    expect(writeHcl([withFile!])).not.toContain('var.');
    expect(writeHcl([remove!])).toContain('rm -f');
    // The writer runs for real (null source, no communicator); then every process's command line is listed.
    const check = block('provisioner', ['shell-local'], [attr('inline', list([str('for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null || true; echo; done > cmdlines.txt')]))]);
    const items: Item[] = [
      ...names.map((n) => block('variable', [n], [attr('type', { kind: 'type', name: 'string' }), attr('sensitive', bool(true))])),
      block('source', ['null', 'n'], [attr('communicator', str('none'))]),
      block('build', [], [attr('sources', list([str('source.null.n')])), write!, check]),
    ];
    const dir = tempDir('packer-vars-ansible');
    await execa('mkdir', ['-p', path.join(dir, 'ansible')]);
    writeFileSync(path.join(dir, 'vars.pkr.hcl'), writeHcl(items));
    writeFileSync(path.join(dir, 'values.pkrvars.json'), JSON.stringify(Object.fromEntries(names.map((n, i) => [n, values[i]]))));
    const b = await packer(['build', '-color=false', '-var-file=values.pkrvars.json', 'vars.pkr.hcl'], dir);
    expect(b.code, b.out).toBe(0);
    const file = path.join(dir, 'ansible', '.extra-vars-n.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(Object.fromEntries(names.map((n, i) => [n, values[i]])));
    const cmdlines = readFileSync(path.join(dir, 'cmdlines.txt'), 'utf8');
    expect(cmdlines).toContain('/bin/sh');
    expect(cmdlines).not.toContain(SECRET);
  }, 300_000);
});
