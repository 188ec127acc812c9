// The puppetApply kind: an existing Puppet manifest (with its modules) as one
// step with declared facts. Its outputs for every target (golden files and
// the real tools: shellcheck, ansible-playbook --syntax-check and ansible-lint
// --profile production, cloud-init schema, packer validate with either
// provisioner); the checker sees the facts it declares and wants the puppet
// package; a missing manifest or module directory stops the definition at
// the step. test/build/puppet-apply-build.test.ts applies it for real.
import { execa } from 'execa';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { image } from '../../src/index.js';
import { loadDefinition } from '../../src/load/index.js';
import { kinds } from '../../src/steps/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { expectGolden } from '../helpers/golden.js';
import { tempDir } from '../helpers/temp.js';
import { expectValid, parseHcl, requiredVars, writeOut } from '../compilers/packer-support.js';
import { lintClean, outputTests, write } from './support.js';

const manifest = '../fixtures/puppet/site.pp';
const modulePath = '../fixtures/puppet/modules';
const definition = image('puppet-apply-test')
  .base(debian12())
  .customize((p) =>
    p
      .packages(['puppet'])
      .puppetApply(manifest, { modulePath, provides: { user: ['deploy'], package: ['tree'], path: ['/etc/motd-puppet'] } })
      // The manifest's declared user reaches this step's types.
      .file('/etc/deploy-owned', { owner: 'deploy', mode: '0644', content: 'deploy\n' }),
  )
  .provision((p) => p.puppetApply(manifest, { modulePath, description: 'again on a live host', requires: { path: ['/etc/motd-puppet'] } }))
  // A Packer source, so that the template validates.
  .artifact((a) => a.cloudImage('qemu', 'qemu', { disk_size: '8G', format: 'qcow2', headless: true }));
const ir = definition.toIR('puppet-apply-test.ts');

describe('puppetApply: outputs', () => {
  it('carries the manifest and every module file in the IR', () => {
    const s = ir.phases[0]!.steps[1]!;
    expect(s.kind).toBe('puppetApply');
    if (s.kind !== 'puppetApply') return;
    expect(s.manifest.name).toBe('site.pp');
    expect(s.manifest.text).toContain("package { 'tree':");
    expect(s.modules?.files.map((f) => f.path)).toEqual(['motd/manifests/init.pp']);
    expect(s.requires).toContainEqual({ kind: 'package', key: 'puppet' });
    expect(kinds.puppetApply.describe(s)).toBe("puppet manifest '../fixtures/puppet/site.pp'");
  });

  outputTests(ir, 'steps-puppet-apply');

  // On live hosts: provision.sh carries the files in its own text, runtime.yml in its tasks.
  it('shell --runtime: provision.sh matches the golden files and passes shellcheck', async () => {
    const files = compilers.shell.compile(ir, { runtime: true });
    expectGolden('steps-puppet-apply/shell-runtime', files);
    const dir = tempDir('puppet-apply-shell-runtime');
    write(dir, files);
    const r = await execa('shellcheck', ['-x', '-P', 'SCRIPTDIR', '-s', 'sh', '-S', 'style', ...Object.keys(files).filter((f) => f.endsWith('.sh'))], { cwd: dir, reject: false });
    expect(r.stdout + r.stderr).toBe('');
  });

  it('ansible --runtime: runtime.yml matches the golden files and passes --syntax-check and ansible-lint --profile production', async () => {
    const files = compilers.ansible.compile(ir, { runtime: true });
    expectGolden('steps-puppet-apply/ansible-runtime', files);
    const dir = tempDir('puppet-apply-ansible-runtime');
    write(dir, files);
    await lintClean(dir, 'runtime.yml', tempDir('puppet-apply-ansible-home'));
  }, 120_000);

  it.each(['shell', 'ansible'] as const)('packer: the template with the %s provisioner passes packer validate', async (provisioner) => {
    const files = compilers.packer.compile(ir, { packerVersion: '1.6', provisioner } as never);
    const dir = writeOut(files, `puppet-apply-packer-${provisioner}`);
    await expectValid(dir, '.', requiredVars(await parseHcl(files['puppet-apply-test.pkr.hcl'] ?? '')));
  }, 120_000);
});

describe('puppetApply: the checker sees the facts it declares', () => {
  it('without the puppet package earlier: IMGC0001 naming it', () => {
    const bare = image('x').base(debian12()).customize((p) => p.puppetApply(manifest)).toIR('x.ts');
    const d = checkImage(bare);
    expect(d.map((x) => x.code)).toEqual(['IMGC0001']);
    expect(d[0]!.message).toContain("package 'puppet'");
    expect(d[0]!.hint).toBe("install it in an earlier step: p.packages(['puppet'])");
  });

  it('what it declares reaches later steps; what it does not declare does not', () => {
    expect(checkImage(ir)).toEqual([]);
    const undeclared = image('x')
      .base(debian12())
      .customize((p) => p.packages(['puppet']).puppetApply(manifest).command('cat /etc/motd-puppet', { requires: { path: ['/etc/motd-puppet'] } }))
      .toIR('x.ts');
    expect(checkImage(undeclared).map((x) => x.code)).toEqual(['IMGC0001']);
  });
});

describe('puppetApply: the files it reads', () => {
  it('a missing manifest, a missing or empty module directory: IMGC1002 at the step', async () => {
    const dir = tempDir('puppet-apply-missing');
    writeFileSync(path.join(dir, 'site.pp'), "notify { 'x': }\n");
    mkdirSync(path.join(dir, 'empty'));
    for (const [name, args, why] of [
      ['no-manifest.ts', "'./absent.pp'", `no such file (${path.join(dir, 'absent.pp')})`],
      ['no-modules.ts', "'./site.pp', { modulePath: './modules' }", `no such directory (${path.join(dir, 'modules')})`],
      ['empty-modules.ts', "'./site.pp', { modulePath: './empty' }", `${path.join(dir, 'empty')} holds no files: not a Puppet module directory`],
    ] as const) {
      const def = path.join(dir, name);
      writeFileSync(def, ["import { debian12, image } from 'imgc';", "export default image('x')", '  .base(debian12())', `  .customize((p) => p.puppetApply(${args}));`, ''].join('\n'));
      const r = await loadDefinition(def, { typecheck: false });
      expect(r.diagnostics.map((d) => [d.code, d.message, d.loc?.line])).toEqual([['IMGC1002', `DefinitionError: puppetApply('${args.split("'")[1]}'): ${why}`, 4]]);
    }
  });
});
