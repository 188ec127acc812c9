// Import: a definition whose base is a contract (fromContract) or another
// definition's phase (fromDefinition). Both layers see the facts: the
// checker always, the types when the facts are literals (the typed module
// written beside a contract's JSON, or the other definition's builder type).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { contractFrom, contractJson } from '../src/contract/contract.js';
import { imgc, repoRoot, tempDir } from './helpers/cli.js';

/** A project directory (an ES module package) holding the contract of the reference example after customize, with its typed module. */
const project = async (): Promise<string> => {
  const dir = tempDir('import');
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  const w = await imgc(['contract', '--no-typecheck', path.join(repoRoot, 'examples/node-image.ts'), '--phase', 'customize', '--out', path.join(dir, 'golden-base.contract.json')]);
  expect(w.exitCode, w.all).toBe(0);
  return dir;
};

const write = (dir: string, name: string, lines: string[]) => writeFileSync(path.join(dir, name), `${lines.join('\n')}\n`);

describe('fromContract', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await project();
    write(dir, 'typed-ok.ts', [
      "import { image } from 'imgc';",
      "import golden from './golden-base.contract.js';",
      "export default image('on-golden').base(golden).provision((p) => p.file('/etc/ops.conf', { owner: 'ops', group: 'admins', content: 'x' }).packages(['containerd']).enableService('containerd'));",
    ]);
    write(dir, 'typed-bad.ts', [
      "import { image } from 'imgc';",
      "import golden from './golden-base.contract.js';",
      "export default image('on-golden').base(golden).provision((p) => p.file('/etc/kube.conf', { owner: 'kube', content: 'x' }));",
    ]);
    write(dir, 'by-path.ts', [
      "import { image, fromContract } from 'imgc';",
      "export default image('on-golden').base(fromContract('golden-base.contract.json')).provision((p) => p.file('/etc/kube.conf', { owner: 'kube', content: 'x' }));",
    ]);
  });

  it('--out x.contract.json writes the typed module beside it: the contract\'s facts as literal types, and its digest', () => {
    const text = readFileSync(path.join(dir, 'golden-base.contract.ts'), 'utf8');
    // The JSON by its path: no import attributes, which a CommonJS project refuses (TS2856).
    expect(text).not.toContain('with { type:');
    expect(text).toMatch(/^ {2}user: .*"ops" \| .*"root"/m);
    expect(text).toMatch(/^ {2}group: .*"admins"/m);
    expect(text).toMatch(/fromContract<ContractFacts>\('\.\/golden-base\.contract\.json', \{ digest: '[0-9a-f]{16}' \}\)/);
  });

  it('a definition on the typed contract checks clean when it uses what the contract has', async () => {
    const r = await imgc(['check', path.join(dir, 'typed-ok.ts')]);
    expect(r.exitCode, r.all).toBe(0);
    const ir = await imgc(['ir', path.join(dir, 'typed-ok.ts')]);
    // Which contract exactly: the digest its typed module records.
    const digest = /digest: '([0-9a-f]{16})'/.exec(readFileSync(path.join(dir, 'golden-base.contract.ts'), 'utf8'))![1]!;
    expect(JSON.parse(ir.stdout).base.origin).toEqual({ kind: 'contract', file: 'golden-base.contract.json', image: 'k8s-node-1.31-upstream-amd64', phase: 'customize', version: 1, digest });
  });

  it('imgc explain says where the base comes from: the contract file, its image and phase, version and digest', async () => {
    const digest = /digest: '([0-9a-f]{16})'/.exec(readFileSync(path.join(dir, 'golden-base.contract.ts'), 'utf8'))![1]!;
    for (const file of ['typed-ok.ts', 'by-path.ts']) {
      const r = await imgc(['explain', '--no-typecheck', path.join(dir, file)]);
      expect(r.stdout).toContain(`      from the contract golden-base.contract.json (image k8s-node-1.31-upstream-amd64 after phase customize, contract v1, digest ${digest})\n`);
    }
  });

  it('a user the contract lacks is seen by both layers, the type-check and the contract checker: one error', async () => {
    const r = await imgc(['check', path.join(dir, 'typed-bad.ts')]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/error IMGC0003: file '\/etc\/kube.conf' is owned by user 'kube', which does not exist/);
    expect(r.stdout).toMatch(/seen by: the contract checker \(IMGC0003\), TypeScript \(TS2322 at /);
    expect(r.stdout).toContain('Found 1 error');
    // Named: the contract the base is, and what to ask of the team that wrote it.
    expect(r.stdout).toContain("which does not exist; the base is the contract golden-base.contract.json (image k8s-node-1.31-upstream-amd64 after phase customize), which does not have it");
    expect(r.stdout).toContain("hint: ask the team of image k8s-node-1.31-upstream-amd64 for a contract after phase customize that has user 'kube' (and write golden-base.contract.json again), or provide it in an earlier step of this definition (p.user('kube'))");
  });

  it('check --against works on a definition on a contract: the given contract stands in for the base, and its diagnostics name it', async () => {
    const ok = await imgc(['check', '--no-typecheck', path.join(dir, 'typed-ok.ts'), '--against', path.join(dir, 'golden-base.contract.json')]);
    expect(ok.exitCode, ok.all).toBe(0);
    // The other team's next version: no group 'admins' any more.
    const c = contractFrom(JSON.parse(readFileSync(path.join(dir, 'golden-base.contract.json'), 'utf8')), 'golden-base.contract.json');
    writeFileSync(path.join(dir, 'next.contract.json'), contractJson({ ...c, facts: c.facts.filter((f) => !(f.kind === 'group' && f.key === 'admins')) }));
    const next = await imgc(['check', '--no-typecheck', path.join(dir, 'typed-ok.ts'), '--against', path.join(dir, 'next.contract.json')]);
    expect(next.exitCode).toBe(1);
    expect(next.stdout).toContain("error IMGC0003: file '/etc/ops.conf' is owned by group 'admins', which does not exist; the base is the contract next.contract.json (image k8s-node-1.31-upstream-amd64 after phase customize), which does not have it");
  });

  it('the typed module type-checks in a CommonJS project as in an ES module one', async () => {
    const cjs = tempDir('import-cjs');
    writeFileSync(path.join(cjs, 'package.json'), '{ "type": "commonjs" }\n');
    const w = await imgc(['contract', '--no-typecheck', path.join(repoRoot, 'examples/node-image.ts'), '--phase', 'customize', '--out', path.join(cjs, 'golden-base.contract.json')]);
    expect(w.exitCode, w.all).toBe(0);
    write(cjs, 'typed-ok.ts', readFileSync(path.join(dir, 'typed-ok.ts'), 'utf8').trimEnd().split('\n'));
    const r = await imgc(['check', path.join(cjs, 'typed-ok.ts')]);
    expect(r.exitCode, r.all).toBe(0);
    write(cjs, 'typed-bad.ts', readFileSync(path.join(dir, 'typed-bad.ts'), 'utf8').trimEnd().split('\n'));
    const bad = await imgc(['check', path.join(cjs, 'typed-bad.ts')]);
    expect(bad.stdout).toMatch(/seen by: the contract checker \(IMGC0003\), TypeScript \(TS2322 at /);
    expect(bad.stdout).not.toContain('TS2856');
  });

  it('by path: the checker alone sees the facts, and the loader follows the JSON (a changed contract is read again)', async () => {
    const file = path.join(dir, 'by-path.ts');
    const before = await imgc(['check', file]);
    expect(before.exitCode).toBe(1);
    expect(before.stdout).toContain("IMGC0003: file '/etc/kube.conf' is owned by user 'kube'");
    expect(before.stdout).not.toContain('TS2322');
    const json = path.join(dir, 'golden-base.contract.json');
    const c = contractFrom(JSON.parse(readFileSync(json, 'utf8')), json);
    const withKube = contractJson({ ...c, facts: [{ kind: 'user', key: 'kube' }, ...c.facts] });
    writeFileSync(json, withKube);
    const after = await imgc(['check', file]);
    expect(after.exitCode, after.all).toBe(0);
    // The typed module was written from the other version: it says so, and where.
    const stale = await imgc(['check', '--no-typecheck', path.join(dir, 'typed-ok.ts')]);
    expect(stale.exitCode).toBe(2);
    expect(stale.stdout).toMatch(/golden-base\.contract\.ts:\d+:\d+ - error IMGC1002: DefinitionError: golden-base\.contract\.json changed since its typed module was written: write it again/);
  });

  it('a contract file that is missing or not a contract is a located definition error', async () => {
    write(dir, 'missing.ts', ["import { image, fromContract } from 'imgc';", "export default image('x').base(fromContract('nope.contract.json'));"]);
    const r = await imgc(['check', '--no-typecheck', path.join(dir, 'missing.ts')]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toMatch(/missing\.ts:2:\d+ - error IMGC1002: DefinitionError: fromContract\('nope\.contract\.json'\): no such file/);
  });
});

describe('fromDefinition', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('from-definition');
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    write(dir, 'team.ts', [
      "import { debian12, image } from 'imgc';",
      "export default image('team').base(debian12()).customize((p) => p.group('admins').user('ops', { groups: ['admins'] })).provision((p) => p.user('late'));",
    ]);
  });

  it('after a phase: the checker knows the facts that hold after it, not those of later phases', async () => {
    write(dir, 'at-customize.ts', [
      "import { fromDefinition, image } from 'imgc';",
      "import team from './team.js';",
      "export default image('on-team').base(fromDefinition(team, { phase: 'customize' }))",
      "  .provision((p) => p.file('/etc/ops.conf', { owner: 'ops', content: 'x' }).file('/etc/late.conf', { owner: 'late', content: 'x' }));",
    ]);
    const r = await imgc(['check', path.join(dir, 'at-customize.ts')]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/at-customize\.ts:4:\d+ - error IMGC0003: file '\/etc\/late.conf' is owned by user 'late'/);
    expect(r.stdout).not.toMatch(/user 'ops'/);
    const ir = JSON.parse((await imgc(['ir', path.join(dir, 'at-customize.ts')])).stdout);
    expect(ir.base.origin).toEqual({ kind: 'definition', file: 'team.ts', image: 'team', phase: 'customize', version: 1, digest: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const explained = await imgc(['explain', '--no-typecheck', path.join(dir, 'at-customize.ts')]);
    expect(explained.stdout).toContain(`      from the definition team.ts (image team after phase customize, contract v1, digest ${ir.base.origin.digest})\n`);
  });

  it('without a phase the types carry the other definition\'s facts too', async () => {
    write(dir, 'typed.ts', [
      "import { fromDefinition, image } from 'imgc';",
      "import team from './team.js';",
      "export default image('on-team').base(fromDefinition(team)).provision((p) => p.file('/etc/late.conf', { owner: 'late', content: 'x' }).file('/etc/x.conf', { owner: 'lates', content: 'x' }));",
    ]);
    const r = await imgc(['check', path.join(dir, 'typed.ts')]);
    expect(r.exitCode).toBe(1);
    // The types know 'late' (no error there) and reject 'lates', as the contract checker does: one error.
    expect(r.stdout).toMatch(/IMGC0003: file '\/etc\/x.conf' is owned by user 'lates'/);
    expect(r.stdout).toMatch(/seen by: the contract checker \(IMGC0003\), TypeScript \(TS\d+ at /);
    expect(r.stdout).not.toMatch(/'"late"' is not assignable/);
  });

  it('a phase the other definition does not have is a located definition error naming its phases', async () => {
    write(dir, 'no-phase.ts', ["import { fromDefinition, image } from 'imgc';", "import team from './team.js';", "export default image('x').base(fromDefinition(team, { phase: 'harden' }));"]);
    const r = await imgc(['check', '--no-typecheck', path.join(dir, 'no-phase.ts')]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toMatch(/no-phase\.ts:3:\d+ - error IMGC1002: DefinitionError: no phase 'harden' in team; its phases: base, customize, provision/);
  });
});
