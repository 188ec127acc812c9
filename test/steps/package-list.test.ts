// A package list from a variable: `p.packages(extraDebs)` with
// `variable('extra_debs', z.array(z.string()), { default: [] })`. The names
// are known only when the output runs, so the step provides no fact; every
// target checks each item against the package-spec pattern before using it.
// Its outputs for every target, packer validate, the checker's reading,
// hostile values, and the shell rendering installing two packages in a real
// Debian root that verify then finds.
import { execa } from 'execa';
import fc from 'fast-check';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { validateImage } from '../../src/check/validate.js';
import { compilers } from '../../src/compilers/index.js';
import { runWith, valuesOf } from '../../src/core/conditions.js';
import { packageSpecPattern } from '../../src/core/packages.js';
import { image, variable, z } from '../../src/index.js';
import type { Image } from '../../src/ir/schema.js';
import { resolveVariables, type GivenValue } from '../../src/load/variables.js';
import { verifyRoot } from '../../src/verify/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { tempDir } from '../helpers/temp.js';
import { cannotChroot, freshRoot, inRoot, phaseInRoot, playInRoot, withAptReadyRoot, withPython } from '../runtime-support.js';
import { runtimePlan } from '../../src/compilers/runtime.js';
import { outcomes, parseProgress } from '../compilers/shell-support.js';
import { expectValid, parseHcl, requiredVars, writeOut } from '../compilers/packer-support.js';
import { outputTests, write } from './support.js';
import { run, workspace, writeFiles } from '../compilers/ansible-support.js';

const extraDebs = variable('extra_debs', z.array(z.string()), { default: [], description: 'more packages to install' });
const defined = image('package-list-test')
  .base(debian12())
  .customize((p) => p.packages(['curl']).packages(extraDebs))
  .artifact((a) => a.cloudImage('qemu', 'qemu', { disk_size: '8G', format: 'qcow2', headless: true }))
  .toIR('package-list-test.ts');
/** The IR as `imgc compile --var extra_debs='tree bc'` makes it. */
const withValue = (text: string): Image => {
  const given: GivenValue[] = [{ name: 'extra_debs', value: text, from: '--var', text: true }];
  const r = resolveVariables(defined.phases, given);
  expect(r.diagnostics).toEqual([]);
  return { ...defined, variables: r.variables };
};
const ir = withValue('tree bc');
const script = 'phases/01-customize.sh';
/** The same list in a phase that runs on existing hosts too (provision): what decommission undoes. */
const hostDefined = image('package-list-host').base(debian12()).provision((p) => p.packages(extraDebs)).toIR('package-list-host.ts');
const hostIr: Image = { ...hostDefined, variables: resolveVariables(hostDefined.phases, [{ name: 'extra_debs', value: 'tree bc', from: '--var', text: true }]).variables };

describe('packages(listVariable)', () => {
  it('checks clean; the step provides no fact, so nothing may require what it installs', () => {
    expect(validateImage(ir).diagnostics).toEqual([]);
    expect(checkImage(ir)).toEqual([]);
    expect(ir.variables).toEqual([{ name: 'extra_debs', type: 'list', description: 'more packages to install', sensitive: false, value: ['tree', 'bc'] }]);
    const step = ir.phases[0]!.steps[1]!;
    expect(step).toMatchObject({ kind: 'packageList', provides: [], requires: [] });
    const needs = image('x')
      .base(debian12())
      .customize((p) => p.packages(extraDebs).command('tree /', { requires: { command: ['tree'] } } as never))
      .toIR('x.ts');
    expect(checkImage({ ...needs, variables: ir.variables }).map((d) => d.code)).toContain('IMGC0001');
  });

  it('a list is no text: in a template string it is a definition error; by hand in IR, IMGC0011', () => {
    expect(() => image('x').base(debian12()).customize((p) => p.file('/etc/x', { content: `${extraDebs}` })).toIR('x.ts')).toThrow(/is a list: it cannot stand in a string/);
    const step = { ...ir.phases[0]!.steps[0]!, names: ['curl'] };
    const file = { kind: 'file', id: 'customize.3.file', path: '/etc/x', content: (ir.phases[0]!.steps[1] as { list: string }).list, provides: [{ kind: 'path', key: '/etc/x' }], requires: [], removes: [] };
    const bad = { ...ir, phases: [{ ...ir.phases[0]!, steps: [step, file] }] } as unknown as Image;
    expect(checkImage(bad).map((d) => `${d.code} ${d.message}`)).toEqual(["IMGC0011 customize.3.file.content uses list variable 'extra_debs' where text is needed"]);
  });

  it('every item is a package spec: a value that is not is IMGC1008 (command line) or invalid IR', () => {
    const r = resolveVariables(defined.phases, [{ name: 'extra_debs', value: 'tree $(id)', from: '--var', text: true }]);
    expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual(['IMGC1008 --var: item "$(id)" of list variable \'extra_debs\' is not a package spec']);
    // imgc.toml's [vars] may give a TOML list or a string of words.
    for (const value of [['tree', 'bc'], 'tree  bc']) expect(resolveVariables(defined.phases, [{ name: 'extra_debs', value, from: 'imgc.toml:3' }]).variables![0]!.value).toEqual(['tree', 'bc']);
    expect(resolveVariables(defined.phases, [{ name: 'extra_debs', value: ['tree', 'a b'], from: 'imgc.toml:3' }]).diagnostics.map((d) => d.message)).toEqual([
      'imgc.toml:3: item "a b" of list variable \'extra_debs\' is not a package spec',
    ]);
    const handMade = { ...ir, variables: [{ ...ir.variables![0]!, value: ['tree', '-oAPT::x=1'] }] };
    expect(validateImage(handMade).diagnostics.map((d) => d.code)).toEqual(['IMGC1004']);
  });

  it('an empty list does nothing: no apt-get, no cloud-init packages, no verify expectation', () => {
    const empty = withValue('');
    expect(empty.variables![0]!.value).toEqual([]);
    expect(checkImage(empty)).toEqual([]);
    const userData = compilers['cloud-init'].compile(empty, {})['user-data']!;
    expect(userData).not.toMatch(/\btree\b/);
    expect(verifyRoot(runWith(empty, valuesOf(empty.variables) as never), '/').failures.filter((f) => f.stepId === 'customize.2.packageList')).toEqual([]);
  });

  it('each target takes the list its own way: shell from IMGC_VAR_EXTRA_DEBS (space-separated), Ansible a YAML list, Packer list(string), cloud-init at compile time', () => {
    const sh = compilers.shell.compile(ir, {});
    expect(sh[script]).toContain("IMGC_VAR_EXTRA_DEBS=${IMGC_VAR_EXTRA_DEBS-'tree bc'}");
    const ansible = compilers.ansible.compile(ir, {});
    expect(ansible['group_vars/all.yml']).toMatch(/extra_debs:\n {2}- !unsafe 'tree'\n {2}- !unsafe 'bc'/);
    const template = Object.entries(compilers.packer.compile(ir, { packerVersion: '1.6' } as never)).find(([f]) => f.endsWith('.pkr.hcl'))![1];
    expect(template).toMatch(/type += list\(string\)/);
    expect(compilers['cloud-init'].compile(ir, {})['user-data']).toMatch(/- tree\n\s*- bc/);
  });

  for (const opts of [{ json: true, packerVersion: '1.6' }, { provisioner: 'ansible', json: true, packerVersion: '1.6' }] as const) {
    it(`packer 1.6 (${opts.provisioner ?? 'shell'}, HCL and JSON): packer validate passes with the default and with a list given by -var`, async () => {
      const dir = writeOut(compilers.packer.compile(ir, opts as never), 'package-list-packer');
      const hcl = `package-list-test.pkr.hcl`;
      const vars = requiredVars(await parseHcl(compilers.packer.compile(ir, opts as never)[hcl]!));
      for (const template of opts.json ? [hcl, 'package-list-test.pkr.json'] : [hcl]) {
        await expectValid(dir, template, vars);
        await expectValid(dir, template, [...vars, '-var', 'extra_debs=["jq=1.6*", "libc6:amd64"]']);
      }
    }, 120_000);
  }

  it('packer (newer than 1.6): the variable is list(string) with a validation block of the package-spec pattern, in HCL and JSON', async () => {
    const files = compilers.packer.compile(ir, { json: true });
    const parsed = await parseHcl(files['package-list-test.pkr.hcl']!);
    const [v] = parsed['variable']['extra_debs'];
    expect(v.type).toBe('${list(string)}');
    expect(v.default).toEqual(['tree', 'bc']);
    expect(v.validation[0].condition).toBe(`\${length([for p in var.extra_debs : p if can(regex(${JSON.stringify(packageSpecPattern.source)}, p))]) == length(var.extra_debs)}`);
    expect(JSON.parse(files['package-list-test.pkr.json']!).variable.extra_debs.validation.condition).toContain('can(regex(');
  });

  it("decommission: provisioning records the value's packages it installed; decommission removes those", () => {
    const plan = runtimePlan(hostIr);
    expect(plan.phases[0]!.steps[0]!.creations).toEqual([
      { token: 'provision.1.packageList#0', kind: 'package', name: 'tree' },
      { token: 'provision.1.packageList#1', kind: 'package', name: 'bc' },
    ]);
    const sh = compilers.shell.compile(hostIr, { runtime: true, decommission: true });
    expect(sh['decommission.sh']).toMatch(/provision\.1\.packageList#1[\s\S]*\bbc\b/);
    expect(compilers.ansible.compile(hostIr, { decommission: true })['decommission.yml']).toContain("'tree'");
  });

  outputTests(ir, 'steps-package-list');
});

describe('packages(listVariable): hostile values', () => {
  // Any item: most are not package specs (white space, quotes, $, ;, newlines, a leading -).
  const item = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('$(touch CANARY)', '`touch CANARY`', '-oAPT::Update::Pre-Invoke::=touch CANARY', "a'b", 'a;touch CANARY', '{{ lookup("pipe","touch CANARY") }}', '${IFS}'));

  it('resolution takes a value only when every item is a package spec', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 4 }), (items) => {
        const text = items.join(' ').replace(/\0/g, '');
        const r = resolveVariables(defined.phases, [{ name: 'extra_debs', value: text, from: '--var', text: true }]);
        const words = text.split(/\s+/).filter((w) => w !== '');
        expect(r.diagnostics.length === 0).toBe(words.every((w) => packageSpecPattern.test(w)));
      }),
      { numRuns: 300, seed: Number(process.env['IMGC_PROPERTY_SEED'] ?? 19) },
    );
  });

  it('the shell script refuses a hostile value from the environment before running anything (exit 2, no canary)', async () => {
    const dir = tempDir('package-list-hostile');
    write(dir, compilers.shell.compile(ir, {}));
    const values = [...fc.sample(fc.array(item, { minLength: 1, maxLength: 3 }), { numRuns: 25, seed: 1919 }).map((a) => a.join(' ').replace(/\0/g, '')), '$(touch CANARY)', 'tree -oAPT::x=1']
      .filter((v) => !v.split(/\s+/).filter(Boolean).every((w) => packageSpecPattern.test(w)));
    // A stand-in apt-get on PATH: reached only if the check let a value through.
    writeFileSync(path.join(dir, 'apt-get'), '#!/bin/sh\ntouch APT_RAN\n', { mode: 0o755 });
    for (const v of values) {
      const r = await execa('/bin/sh', [script], { cwd: dir, env: { PATH: `${dir}:/usr/bin:/bin`, IMGC_VAR_EXTRA_DEBS: v }, extendEnv: false, reject: false, all: true });
      expect(r.exitCode, `${JSON.stringify(v)}: ${r.all}`).toBe(2);
      expect(r.all).toContain('is not a package spec');
      expect(existsSync(path.join(dir, 'CANARY')) || existsSync(path.join(dir, 'APT_RAN'))).toBe(false);
    }
  }, 60_000);
});

describe('packages(listVariable): hostile values in Ansible', () => {
  it('the play refuses a hostile -e value at its assert, before apt (check mode, this machine)', async () => {
    const ws = workspace('package-list-ansible');
    try {
      writeFiles(ws.out, compilers.ansible.compile(hostIr, {}));
      // Not `{{ }}`: Ansible templates every -e value itself, before any task sees it (README, Variables).
      for (const v of ['tree $(touch CANARY)', '["tree", "-oAPT::Update::Pre-Invoke::=touch CANARY"]', '["tree", "a b;touch CANARY"]', '[["tree"]]']) {
        const extra = v.startsWith('[') ? `{"extra_debs": ${v}}` : `extra_debs=${JSON.stringify(v)}`;
        const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', '--check', 'site.yml', '-e', extra], ws.out, ws.home);
        expect(r.exitCode, r.all).not.toBe(0);
        expect(r.all).toContain('is not a package spec');
        expect(r.all).not.toMatch(/TASK \[provision : Install the packages/);
        expect(existsSync(path.join(ws.out, 'CANARY'))).toBe(false);
      }
    } finally {
      ws.remove();
    }
  }, 120_000);
});

describe.skipIf(cannotChroot)('packages(listVariable): the shell rendering in a real Debian root', () => {
  const files = compilers.shell.compile(ir, {});
  const host = compilers.shell.compile(hostIr, { runtime: true, decommission: true });
  const resolved = runWith(ir, valuesOf(ir.variables) as ReadonlyMap<string, string>);
  type Run = Awaited<ReturnType<typeof phaseInRoot>>;
  const runs: Record<string, Run> = {};
  const seen: Record<string, unknown> = {};
  beforeAll(async () => {
    const root = await freshRoot(ir, 'package-list-root');
    const installed = async () =>
      (await Promise.all(['tree', 'bc'].map(async (p) => (await execa('chroot', [root, 'dpkg-query', '-W', '-f=${Status}', p], { reject: false })).stdout === 'install ok installed')));
    // withAptReadyRoot removes the root afterwards.
    await withAptReadyRoot(root, async () => {
      // Runtime first: provision.sh installs the list, decommission.sh removes what it installed.
      runs['provision'] = await inRoot(root, host['provision.sh']!);
      seen['provisioned'] = await installed();
      runs['decommission'] = await inRoot(root, host['decommission.sh']!);
      seen['decommissioned'] = await installed();
      // The build's phase script: an empty value, then the compile-time value (--var), twice.
      seen['verifyBefore'] = verifyRoot(resolved, root).failures.map((f) => f.what);
      runs['empty'] = await phaseInRoot(root, files, script, { IMGC_VAR_EXTRA_DEBS: '' });
      seen['afterEmpty'] = await installed();
      runs['first'] = await phaseInRoot(root, files, script);
      seen['verifyAfter'] = verifyRoot(resolved, root).failures.map((f) => `${f.what}: ${f.reason}`);
      runs['second'] = await phaseInRoot(root, files, script);
      // Ansible, with the value as `-e extra_debs="tree bc"` gives it (a string of words): in place of group_vars' list.
      runs['purge'] = await inRoot(root, 'apt-get purge -y -q tree bc >/dev/null');
      seen['purged'] = await installed();
      await withPython(root);
      const play = { ...compilers.ansible.compile(ir, {}) };
      play['group_vars/all.yml'] = play['group_vars/all.yml']!.replace(/extra_debs:\n(  - .*\n)+/, "extra_debs: 'tree bc'\n");
      seen['playVars'] = play['group_vars/all.yml'];
      const r = await playInRoot(root, play, 'site.yml');
      runs['ansible'] = { exitCode: r.exitCode, stdout: r.all ?? '', stderr: r.all ?? '' } as Run;
      seen['afterAnsible'] = await installed();
      seen['verifyAnsible'] = verifyRoot(resolved, root).failures.map((f) => `${f.what}: ${f.reason}`);
    });
  }, 900_000);
  const steps = (r: Run) => [...outcomes(parseProgress(`${r.stdout}\n`))].map(([, o]) => o);

  it('runtime: provision.sh installs the list, decommission.sh removes what it installed', () => {
    expect(runs['provision']!.exitCode, runs['provision']!.stderr).toBe(0);
    expect(seen['provisioned']).toEqual([true, true]);
    expect(runs['decommission']!.exitCode, runs['decommission']!.stderr).toBe(0);
    expect(seen['decommissioned']).toEqual([false, false]);
  });

  it('an empty value installs nothing; the --var value installs both, verify agrees, and a second run changes nothing', () => {
    expect(seen['verifyBefore']).toEqual(expect.arrayContaining(["package 'tree' installed", "package 'bc' installed"]));
    expect(runs['empty']!.exitCode, runs['empty']!.stderr).toBe(0);
    expect(steps(runs['empty']!)).toEqual(['changed', 'unchanged']);
    expect(seen['afterEmpty']).toEqual([false, false]);
    expect(runs['first']!.exitCode, runs['first']!.stderr).toBe(0);
    expect(steps(runs['first']!)).toEqual(['unchanged', 'changed']);
    expect(seen['verifyAfter']).toEqual([]);
    expect(steps(runs['second']!)).toEqual(['unchanged', 'unchanged']);
  });

  it('ansible: the play takes the value as a string of words too (-e extra_debs="tree bc"), installs both, and verify agrees', () => {
    expect(seen['purged']).toEqual([false, false]);
    expect(seen['playVars']).toContain("extra_debs: 'tree bc'\n");
    expect(runs['ansible']!.exitCode, runs['ansible']!.stdout).toBe(0);
    expect(seen['afterAnsible']).toEqual([true, true]);
    expect(seen['verifyAnsible']).toEqual([]);
  });
});
