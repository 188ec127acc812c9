// What no image may hold, reported by `imgc check` at the line of the step
// that holds it: values the IR schema refuses (IMGC1004; the loader and the
// compilers share one mapping from schema issues to diagnostics,
// src/check/validate.ts) and strings no backend can carry (IMGC2001).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { imgc, tempDir } from '../helpers/cli.js';

interface JsonDiagnostic {
  code: string;
  loc?: { file: string; line: number; column: number };
  message: string;
}

/** `imgc check` on a definition `name` whose phases are `phases` (its first line is line 5). */
const check = async (name: string, phases: string[]) => {
  const dir = tempDir(`check-${name}`);
  const def = path.join(dir, `${name}.ts`);
  const lines = ["import { debian12, image } from 'imgc';", '', `export default image('${name}')`, '  .base(debian12())', ...phases];
  writeFileSync(def, `${lines.join('\n')}\n`);
  const r = await imgc(['check', '--format', 'json', `${name}.ts`], { cwd: dir });
  return { r, diagnostics: (JSON.parse(r.stdout) as { diagnostics: JsonDiagnostic[] }).diagnostics };
};

describe('imgc check on values no image may hold', () => {
  it('a user name useradd would refuse: IMGC1004 at the line of the user step, exit 2', async () => {
    const { r, diagnostics } = await check('bad-user', [
      '  .customize((p) =>',
      '    p',
      "      .group('admins')",
      "      .user('Bad User', { groups: ['admins'] }),",
      '  );',
    ]);
    expect(diagnostics).toEqual([
      {
        code: 'IMGC1004',
        severity: 'error',
        message: expect.stringMatching(/^invalid phases\.0\.steps\.1\.name: user and group names are lower-case letters/),
        loc: { file: 'bad-user.ts', line: 8, column: expect.any(Number) },
        related: [],
      },
    ]);
    expect(r.exitCode).toBe(2);
  });

  it('a sysctl value with a line break: IMGC1004 at its line', async () => {
    const { r, diagnostics } = await check('bad-sysctl', ["  .provision((p) => p.sysctl('net.ipv4.ip_forward', '1\\nkernel.panic = 1'));"]);
    expect(diagnostics.map((d) => [d.code, d.loc?.line, d.message.split(':')[0]])).toEqual([['IMGC1004', 5, 'invalid phases.0.steps.0.value']]);
    expect(r.exitCode).toBe(2);
  });

  it('a lone surrogate (no UTF-8 encoding): IMGC2001 from the central pass, naming the field', async () => {
    const { r, diagnostics } = await check('lone-surrogate', ["  .customize((p) => p.file('/etc/motd', { content: 'a\\ud800b' }));"]);
    expect(diagnostics.map((d) => [d.code, d.loc?.line, d.message])).toEqual([
      ['IMGC2001', 5, 'phases[0].steps[0].content contains a lone UTF-16 surrogate (U+D800), which has no UTF-8 encoding'],
    ]);
    expect(r.exitCode).toBe(1);
  });

  it('a valid user name passes', async () => {
    const { r, diagnostics } = await check('good-user', ["  .customize((p) => p.user('build_1', { system: true }));"]);
    expect(diagnostics).toEqual([]);
    expect(r.exitCode).toBe(0);
  });
});
