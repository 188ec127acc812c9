// The clean kind (remove and truncate): its outputs for every target (golden
// and real tools), the checker's reading of globs, and a run of the shell
// rendering in a real Debian root, twice, with verify's expectations before
// and after.
import { execa } from 'execa';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { compilers } from '../../src/compilers/index.js';
import { validateImage } from '../../src/check/validate.js';
import { image } from '../../src/index.js';
import { expectationsOf, verifyRoot } from '../../src/verify/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { cannotChroot, freshRoot, phaseInRoot, removeRoot } from '../runtime-support.js';
import { parseProgress, outcomes } from '../compilers/shell-support.js';
import { outputTests } from './support.js';

const definition = image('clean-test')
  .base(debian12())
  .phase('sysprep', (p) =>
    p
      .remove(['/etc/machine-id.old', '/var/tmp/imgc-clean/*', '/var/cache/debconf/*-old'])
      .truncate(['/etc/machine-id', '/etc/imgc-*.log', '/var/log/*.log']),
  );
const ir = definition.toIR('clean-test.ts');
describe('clean: remove and truncate', () => {
  it('checks clean, and is valid IR', () => {
    expect(validateImage(ir).diagnostics).toEqual([]);
    expect(checkImage(ir)).toEqual([]);
  });

  it('refuses paths a shell would split or that climb out (IMGC1004)', () => {
    for (const bad of ['/', '/a b', '/etc/../x', '/etc/*/x', '/var/**']) {
      const broken = image('x').base(debian12()).customize((p) => p.remove([bad as '/x'])).toIR('x.ts');
      expect(validateImage(broken).diagnostics.map((d) => d.code), bad).toEqual(['IMGC1004']);
    }
  });

  it('a path a glob removed is gone for the checker, with what lies below it (IMGC0005)', () => {
    const later = image('x')
      .base(debian12())
      .customize((p) => p.directory('/opt/app').directory('/opt/app/conf').remove(['/opt/app/*']).file('/opt/app/conf/x', { content: '' }))
      .toIR('x.ts');
    expect(checkImage(later).map((d) => `${d.code} ${d.message}`)).toEqual([
      "IMGC0005 file '/opt/app/conf/x' requires path '/opt/app/conf', but path '/opt/app/conf' is removed earlier, in phase 'customize' (removal of '/opt/app/*')",
    ]);
  });

  it("verify expects nothing a glob or a directory removed: the base's paths it names and what lies below them", () => {
    const removed = image('x')
      .base(debian12())
      .customize((p) => p.directory('/opt/app').directory('/opt/app/conf').file('/opt/app/conf/x', { content: '' }).remove(['/var/lib/apt/lists/*', '/opt/app']))
      .toIR('x.ts');
    const subjects = expectationsOf(removed).map((e) => `${e.subject} ${e.stepId}`);
    expect(subjects.filter((s) => s.startsWith('fact:path:/var/lib/apt/lists/'))).toEqual([]);
    // Only the removal's own: that /opt/app is gone.
    expect(subjects.filter((s) => s.startsWith('fact:path:/opt/app'))).toEqual(['fact:path:/opt/app customize.4.clean']);
    expect(subjects).toContain('fact:path:/var/lib/apt base');
  });

  outputTests(ir, 'steps-clean');
});

describe.skipIf(cannotChroot)('clean: the shell rendering in a real Debian root', () => {
  let root: string;
  const files = compilers.shell.compile(ir, {});
  beforeAll(async () => {
    root = await freshRoot(ir, 'clean-root');
    // What a used root has: an old machine-id, logs, temporary files.
    writeFileSync(path.join(root, 'etc/machine-id'), '0123456789abcdef0123456789abcdef\n', { mode: 0o444 });
    writeFileSync(path.join(root, 'etc/machine-id.old'), 'old\n');
    writeFileSync(path.join(root, 'etc/imgc-clean.log'), 'log line\n', { mode: 0o640 });
    writeFileSync(path.join(root, 'var/log/imgc.log'), 'x\n');
    mkdirSync(path.join(root, 'var/tmp/imgc-clean/sub'), { recursive: true });
    writeFileSync(path.join(root, 'var/tmp/imgc-clean/sub/a'), 'a\n');
    writeFileSync(path.join(root, 'var/tmp/imgc-clean/.hidden'), 'h\n');
  });
  afterAll(() => removeRoot(root));

  it('does what it says the first time, nothing the second, and verify agrees', async () => {
    const before = verifyRoot(ir, root).failures.map((f) => f.what);
    expect(before).toEqual(expect.arrayContaining(['/etc/machine-id empty', '/etc/machine-id.old removed']));
    const first = await phaseInRoot(root, files, 'phases/01-sysprep.sh');
    expect(first.exitCode, first.stderr).toBe(0);
    const o = outcomes(parseProgress(`${first.stdout}\n`));
    expect([...o]).toEqual([['sysprep.1.clean', 'changed'], ['sysprep.2.clean', 'changed']]);
    const ls = await execa('ls', ['-A', path.join(root, 'var/tmp/imgc-clean')]);
    expect(ls.stdout).toBe('.hidden');
    expect((await execa('stat', ['-c', '%s %a', path.join(root, 'etc/machine-id'), path.join(root, 'etc/imgc-clean.log'), path.join(root, 'var/log/imgc.log')])).stdout.split('\n')).toEqual([
      '0 444',
      '0 640',
      '0 644',
    ]);
    expect(verifyRoot(ir, root).failures).toEqual([]);
    const second = await phaseInRoot(root, files, 'phases/01-sysprep.sh');
    expect(second.exitCode, second.stderr).toBe(0);
    const o2 = outcomes(parseProgress(`${second.stdout}\n`));
    expect([...o2]).toEqual([['sysprep.1.clean', 'unchanged'], ['sysprep.2.clean', 'unchanged']]);
  });
});
