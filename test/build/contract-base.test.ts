// Real builds on a base made of facts: fromDefinition builds the other
// definition (up to its phase, through its phase cache) and starts from its
// root; fromContract starts from --from-tar and refuses a root that lacks a
// fact of the contract before any step runs.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { imgc } from '../helpers/cli.js';
import { cannotBuild, imgcRun, outDir, privateCache } from './helpers.js';

describe.skipIf(cannotBuild)('imgc build on a contract or another definition', () => {
  let dir: string;
  let env: Record<string, string>;
  let onTeam: string;
  beforeAll(() => {
    env = { IMGC_CACHE: privateCache('contract-base') };
    dir = tempDir('contract-base');
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(
      path.join(dir, 'team.ts'),
      "import { debian12, image } from 'imgc';\nexport default image('team').base(debian12()).customize((p) => p.group('admins').user('ops', { groups: ['admins'] })).provision((p) => p.user('late'));\n",
    );
    writeFileSync(
      path.join(dir, 'on-team.ts'),
      [
        "import { fromDefinition, image } from 'imgc';",
        "import team from './team.js';",
        "export default image('on-team').base(fromDefinition(team, { phase: 'customize' }))",
        "  .provision((p) => p.file('/etc/ops.conf', { owner: 'ops', group: 'admins', mode: '0640', content: 'x' }))",
        "  .artifact((a) => a.dir('rootfs')).verify((v) => v.facts());",
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(dir, 'on-contract.ts'),
      "import { fromContract, image } from 'imgc';\nexport default image('on-contract').base(fromContract('team-provision.contract.json')).provision((p) => p.file('/etc/late.conf', { owner: 'late', content: 'x' }));\n",
    );
  });

  // The other definition's root is built beside this build's output, where the temp-dir cleanup does not look.
  afterAll(() => {
    if (onTeam && !process.env['IMGC_KEEP_TEST_OUTPUT']) rmSync(`${onTeam}.base`, { recursive: true, force: true });
  });

  it('fromDefinition: builds the other definition up to its phase, then this one on its root', async () => {
    onTeam = outDir('on-team');
    const r = await imgcRun(['build', '--no-typecheck', path.join(dir, 'on-team.ts'), '--out', onTeam], { env });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain("the base is team.ts after phase 'customize': building it first");
    // Only the other's phases up to customize ran; its root reached this build as a tarball.
    expect(r.all).toMatch(/customize\.2\.user changed/);
    expect(r.all).not.toMatch(/provision\.1\.user/);
    expect(existsSync(path.join(`${onTeam}.base`, 'rootfs.tar'))).toBe(true);
    expect(r.all).toMatch(/verify\.1\.verify facts: \d+ hold/);
  }, 900_000);

  it('fromContract: a root that lacks a fact of the contract is refused before any step runs, naming the fact', async () => {
    const contract = path.join(dir, 'team-provision.contract.json');
    const w = await imgc(['contract', '--no-typecheck', path.join(dir, 'team.ts'), '--phase', 'provision', '--out', contract]);
    expect(w.exitCode, w.all).toBe(0);
    // The root after customize: it has 'ops', not 'late' (provision's).
    const r = await imgcRun(['build', '--no-typecheck', path.join(dir, 'on-contract.ts'), '--out', outDir('on-contract'), '--from-tar', path.join(`${onTeam}.base`, 'rootfs.tar')], { env });
    expect(r.exitCode, r.all).toBe(1);
    expect(r.all).toMatch(/on-contract\.ts:2:\d+ - the root .*rootfs\.tar lacks 3 of the \d+ facts of the contract team-provision\.contract\.json/);
    expect(r.all).toContain("user 'late': no line for 'late' in /etc/passwd");
    expect(r.all).toContain("group 'late': no line for 'late' in /etc/group");
    expect(r.all).not.toMatch(/provision\.1\.file/);
    const none = await imgcRun(['build', '--no-typecheck', path.join(dir, 'on-contract.ts'), '--out', outDir('on-contract-none')], { env });
    expect(none.exitCode).toBe(1);
    expect(none.all).toContain('it holds facts, not a root. Start from that image\'s root: --from-tar FILE or --from-dir DIR');
  }, 600_000);
});
