// The lint-cleanliness promise for raw commands: whatever a definition's
// command or script hook says, the playbook passes the real
// `ansible-lint --profile production --strict`. Random command shapes —
// every first word ansible-lint's command rules name, behind paths, odd
// white space (Python's str.split cuts at more than the shell's), flags,
// hostile text, several lines — many per playbook, so one lint run checks
// a batch.
import fc from 'fast-check';
import { isPlainText } from '../../src/check/representable.js';
import { describe, expect, it } from 'vitest';
import { ansibleCompiler } from '../../src/compilers/ansible/index.js';
import { lintFirstWord, rawCommandNoqa } from '../../src/emit/ansible/lint.js';
import { hostile, imageOf, phase, run, workspace, writeFiles, type StepInput } from './ansible-support.js';

// The words ansible-lint's command-instead-of-module and deprecated-command-syntax rules name, and some they do not.
const ruleWords = [
  'apt-get', 'chkconfig', 'curl', 'git', 'hg', 'letsencrypt', 'mktemp', 'mount', 'patch', 'rpm', 'rsync', 'sed', 'service', 'supervisorctl', 'svn',
  'systemctl', 'tar', 'unzip', 'wget', 'yum', 'chown', 'chmod', 'chgrp', 'ln', 'mkdir', 'rmdir', 'rm',
];
const otherWords = ['echo', 'printf', 'sudo', 'env', 'sh', 'true', 'install', 'cp', 'touch', 'update-alternatives', 'rm;', 'rm&&', '{{', 'rm{{x}}'];
const leads = ['', ' ', '  ', '\t', '\n', '\u00a0', '\u2028', '\u3000', '\u0085', '\r\n', ' \n '];
const dirs = ['', '/bin/', '/usr/bin/', './', 'sub/dir/', '$HOME/'];
const gaps = [' ', '\t', '\n', '\u00a0', '\u2003', '\u0085', ';', ' && ', ' | ', '\n\n'];
const flags = ['-rf', '-f', '-p', '-s', '--version', 'status', 'branch', 'clean', 'daemon-reload', '0644', 'root:root', '/etc/x', '"$X"', "'a b'", '{{ x }}'];

const command: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...leads),
    fc.constantFrom(...dirs),
    fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ruleWords) }, { weight: 1, arbitrary: fc.constantFrom(...otherWords) }),
    fc.array(fc.tuple(fc.constantFrom(...gaps), fc.oneof(fc.constantFrom(...flags), hostile)), { maxLength: 4 }),
  )
  .map(([lead, dir, word, rest]) => `${lead}${dir}${word}${rest.map(([g, a]) => `${g}${a}`).join('')}`)
  .filter((c) => c.trim() !== "" && isPlainText(c));

const shape = fc.record({ run: command, creates: fc.option(fc.constantFrom('/var/lib/done', '/opt/x y/{{ z }}'), { nil: undefined }), description: fc.option(hostile, { nil: undefined }) });

describe('raw commands and ansible-lint', () => {
  it('reads the first word as ansible-lint does (Python str.split, basename)', () => {
    expect(lintFirstWord('rm -rf /x')).toBe('rm');
    expect(lintFirstWord('\u00a0/usr/bin/rm\u2028-f')).toBe('rm');
    expect(lintFirstWord('rm;ls')).toBe('rm;ls');
    expect(lintFirstWord(' \n ')).toBeUndefined();
    expect(rawCommandNoqa('/bin/chmod 0644 x')).toEqual(['command-instead-of-module', 'deprecated-command-syntax']);
    expect(rawCommandNoqa('systemctl daemon-reload')).toEqual(['command-instead-of-module']);
  });

  const BATCHES = 3;
  const PER_BATCH = 60;
  it(`every command shape passes ansible-lint --profile production (${BATCHES} playbooks of ${PER_BATCH} commands and hooks)`, async () => {
    const samples = fc.sample(fc.array(shape, { minLength: PER_BATCH, maxLength: PER_BATCH }), { numRuns: BATCHES, seed: Number(process.env['IMGC_PROPERTY_SEED'] ?? 16015) });
    for (const [b, shapes] of samples.entries()) {
      const steps: StepInput[] = shapes.map((s) => ({ kind: 'command', run: s.run, needsMounts: false, ...(s.creates ? { creates: s.creates } : {}), ...(s.description ? { description: s.description } : {}) }));
      const hooks: StepInput[] = shapes.slice(0, 10).map((s) => ({ kind: 'hook', when: 'pre', action: { type: 'script', run: s.run } }));
      const checks: StepInput[] = shapes.slice(10, 20).map((s) => ({ kind: 'command', run: s.run, needsMounts: false }));
      const ir = imageOf([phase('customize', steps, { pre: hooks }), phase('verify', checks)], `lint-batch-${b}`);
      const ws = workspace(`commands-${b}`);
      try {
        writeFiles(ws.out, ansibleCompiler.compile(ir, {}));
        const r = await run('ansible-lint', ['--offline', '--profile', 'production', '--strict', '--nocolor', '-p'], ws.out, ws.home);
        expect(r.exitCode, `batch ${b} (seed ${process.env['IMGC_PROPERTY_SEED'] ?? 16015}):\n${r.all}`).toBe(0);
        expect(r.all).toMatch(/Passed with production profile: 0 failure\(s\), 0 warning\(s\)/);
      } finally {
        if (!process.env['IMGC_KEEP_LINT']) ws.remove();
      }
    }
  }, 600_000);
});
