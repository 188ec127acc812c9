// The upgrade kind: its outputs for every target (golden and real tools), the
// IR's refusal on a base without apt, and a run of the shell rendering in a
// real Debian root against the mirror, twice: the second run finds nothing to
// do, and verify finds every package fully installed. The install between the
// upgrades pins jq to a version from a variable (the value the mirror has,
// given through IMGC_VAR_JQ_VERSION when the script runs).
import { beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { validateImage } from '../../src/check/validate.js';
import { image, variable, z } from '../../src/index.js';
import type { Image } from '../../src/ir/schema.js';
import { resolveVariables } from '../../src/load/variables.js';
import { kinds } from '../../src/steps/index.js';
import { verifyRoot } from '../../src/verify/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { cannotChroot, freshRoot, inRoot, phaseInRoot, withAptReadyRoot } from '../runtime-support.js';
import { outcomes, parseProgress } from '../compilers/shell-support.js';
import { outputTests } from './support.js';

const jq = variable('jq_version', z.string().regex(/^[0-9][A-Za-z0-9.+~:-]*$/), { default: '1.6-2.1', description: 'the jq version to install' });
const defined = image('upgrade-test')
  .base(debian12())
  .customize((p) => p.upgrade().packages([`jq=${jq}`]).upgrade({ dist: true }))
  .toIR('upgrade-test.ts');
const ir: Image = { ...defined, variables: resolveVariables(defined.phases, []).variables };

describe('upgrade: apt-get upgrade and dist-upgrade', () => {
  it('checks clean, and is valid IR', () => {
    expect(validateImage(ir).diagnostics).toEqual([]);
    expect(checkImage(ir)).toEqual([]);
  });

  it('is refused on a base without apt, and described by its apt-get command', () => {
    expect(kinds.upgrade.onBase('dnf')).toMatch(/written for apt/);
    expect(kinds.upgrade.onBase('apt')).toBeUndefined();
    const [up, , dist] = ir.phases[0]!.steps as [never, never, never];
    expect(kinds.upgrade.describe(up)).toBe('upgrade of the installed packages');
    expect(kinds.upgrade.describe(dist)).toBe('dist-upgrade of the installed packages');
  });

  outputTests(ir, 'steps-upgrade');
});

describe.skipIf(cannotChroot)('upgrade: the shell rendering in a real Debian root', () => {
  const files = compilers.shell.compile(ir, {});
  let root: string;
  let first: Awaited<ReturnType<typeof inRoot>>;
  let second: Awaited<ReturnType<typeof inRoot>>;
  let failures: string[] = [];
  let candidate = '';
  let installed = '';
  beforeAll(async () => {
    root = await freshRoot(ir, 'upgrade-root');
    // withAptReadyRoot removes the root afterwards.
    await withAptReadyRoot(root, async () => {
      const policy = await inRoot(root, 'apt-get update -qq >/dev/null && LC_ALL=C apt-cache policy jq');
      candidate = /Candidate: (\S+)/.exec(policy.stdout)?.[1] ?? `no candidate: ${policy.stdout}${policy.stderr}`;
      const env = { IMGC_VAR_JQ_VERSION: candidate };
      first = await phaseInRoot(root, files, 'phases/01-customize.sh', env);
      second = await phaseInRoot(root, files, 'phases/01-customize.sh', env);
      installed = (await inRoot(root, "dpkg-query -W -f='${Version}' jq")).stdout;
      failures = verifyRoot(ir, root).failures.map((f) => `${f.what}: ${f.reason}`);
    });
  }, 900_000);

  it('runs, then finds nothing to upgrade the second time, and verify agrees', () => {
    expect(first.exitCode, first.stderr).toBe(0);
    expect(second.exitCode, second.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${second.stdout}\n`)).values()]).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(failures).toEqual([]);
    expect(installed).toBe(candidate);
  });
});
