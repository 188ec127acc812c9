// Package versions from variables: `packages([`kubelet=${v}`])`. The name
// stays a literal (the package is a fact for the checker, the types and a
// later hold); the version is the variable's, resolved when the output runs
// (shell and Ansible) or at compile time (cloud-init). A variable anywhere
// else in a spec is refused. The real install of a pin from a variable runs
// in test/steps/upgrade.test.ts's root.
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { validateImage } from '../../src/check/validate.js';
import { image, variable, z } from '../../src/index.js';
import type { Image } from '../../src/ir/schema.js';
import { resolveVariables } from '../../src/load/variables.js';
import { debian12 } from '../../stdlib/bases.js';
import { outputTests } from './support.js';

const jq = variable('jq_version', z.string().regex(/^[0-9][A-Za-z0-9.+~:-]*$/), { default: '1.6-2.1', description: 'the jq version to install' });
const defined = image('pins-test')
  .base(debian12())
  .customize((p) => p.packages([`jq=${jq}`, `socat=${jq}+x*`, 'curl']).hold(['jq', 'socat']))
  .toIR('pins-test.ts');
// What the loader adds (imgc check/compile): the variables the phases use, with their defaults.
const ir: Image = { ...defined, variables: resolveVariables(defined.phases, []).variables };

describe('packages: versions from variables', () => {
  it('check clean: the pinned names are package facts a hold can require', () => {
    expect(validateImage(ir).diagnostics).toEqual([]);
    expect(checkImage(ir)).toEqual([]);
    expect(ir.phases[0]!.steps[0]!.provides).toEqual(expect.arrayContaining([{ kind: 'package', key: 'jq' }, { kind: 'package', key: 'socat' }]));
  });

  it('a variable in the name of a spec is IMGC0011 at the step; an invalid version around one is IMGC1004', () => {
    const step = ir.phases[0]!.steps[0]!;
    const withNames = (names: string[]) => ({ ...ir, phases: [{ ...ir.phases[0]!, steps: [{ ...step, provides: [], names }] }] }) as Image;
    expect(validateImage(withNames([`${jq}=1`])).diagnostics).toEqual([]);
    expect(checkImage(withNames([`${jq}=1`])).map((d) => `${d.code} ${d.message}`)).toEqual([
      "IMGC0011 customize.1.packages.names[0] uses variable 'jq_version' where a literal is needed",
    ]);
    expect(validateImage(withNames([`jq=${jq} x`])).diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
      'IMGC1004 invalid phases.0.steps.0.names.0: a variable may stand only in the version of a package spec (name=${version}); the name is a literal',
    ]);
  });

  it('each target takes the value when it runs: shell from IMGC_VAR_*, Ansible from its variable, cloud-init at compile time', () => {
    const sh = compilers.shell.compile(ir, {})['phases/01-customize.sh']!;
    expect(sh).toContain(`imgc_apt_install 'jq='"\${IMGC_VAR_JQ_VERSION}" 'socat='"\${IMGC_VAR_JQ_VERSION}"'+x*' curl`);
    const tasks = Object.entries(compilers.ansible.compile(ir, {})).find(([f]) => f.endsWith('tasks/main.yml'))![1];
    expect(tasks).toContain("'{{ (''jq='' ~ jq_version) | string }}'");
    expect(compilers['cloud-init'].compile(ir, {})['user-data']).toContain('jq=1.6-2.1');
  });

  outputTests(ir, 'steps-package-pins');
});
