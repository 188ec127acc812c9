// Phase contracts: the facts at a phase boundary as a versioned, sorted JSON
// artifact, and a diff of two versions that exits 1 when something a later
// phase may rely on is gone or changed.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { contractJson, contractJsonSchema, contractOf, Contract } from '../src/contract/contract.js';
import { breaks, diffContracts, diffDiagnostics } from '../src/contract/diff.js';
import { unmetFacts } from '../src/probe/holds.js';
import { DirView } from '../src/verify/rootview.js';
import { contractKinds, preflightOf } from '../src/contract/preflight.js';
import { describeFact } from '../src/core/facts.js';
import { hostContract } from '../src/compilers/runtime.js';
import type { Image } from '../src/ir/schema.js';
import { compileImageSchema, sarifValidator } from './helpers/ajv.js';
import { imgc, irOf, tempDir } from './helpers/cli.js';

describe('imgc contract', () => {
  let ir: Image;
  beforeAll(async () => {
    ir = await irOf('examples/node-image.ts');
  });

  it('after customize: the admin user and group, the sudoers file with its mode, the base facts; nothing of provision', () => {
    const c = contractOf(ir, 'customize');
    const has = (kind: string, key: string) => c.facts.find((f) => f.kind === kind && f.key === key);
    expect(has('user', 'ops')).toBeDefined();
    expect(has('group', 'admins')).toBeDefined();
    expect(has('path', '/etc/sudoers.d/admins')).toEqual({ kind: 'path', key: '/etc/sudoers.d/admins', type: 'file', mode: '0440' });
    expect(has('user', 'root')).toBeDefined();
    expect(has('service', 'containerd')).toBeUndefined();
    expect(c).toMatchObject({ contract: 1, image: ir.name, phase: 'customize', base: { distro: 'debian', release: '12', suite: 'bookworm' } });
  });

  it('is sorted, deterministic, one fact a line, and valid against its published JSON Schema', () => {
    const c = contractOf(ir, 'provision');
    const text = contractJson(c);
    expect(contractJson(contractOf(structuredClone(ir), 'provision'))).toBe(text);
    expect(JSON.parse(text)).toEqual(c);
    const lines = text.split('\n').filter((l) => l.startsWith('    {"kind"'));
    expect(lines).toHaveLength(c.facts.length);
    const validate = compileImageSchema(contractJsonSchema());
    expect(validate(JSON.parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(Contract.safeParse(JSON.parse(text)).success).toBe(true);
  });

  it('the runtime preflight is the contract before the runtime phase, narrowed to what it needs: each fact a checkable fact of that contract, label for label', () => {
    const host = hostContract(ir);
    const before = contractOf(ir, 'customize');
    const checkable = new Map(before.facts.filter((f) => (contractKinds as readonly string[]).includes(f.kind)).map((f) => [`${f.kind}:${f.key}`, describeFact(f)]));
    expect(host.facts.length).toBeGreaterThanOrEqual(5);
    for (const f of host.facts) expect(checkable.get(`${f.kind}:${f.key}`), `${f.kind} ${f.key}`).toBe(f.label);
    expect([host.distro, host.release]).toEqual([before.base.distro, before.base.release]);
    // The whole contract: every checkable fact, none of the kinds a host cannot be asked about before the run.
    const all = preflightOf(contractOf(ir, 'provision'));
    expect(all.facts.map((f) => `${f.kind}:${f.key}`).sort()).toEqual(contractOf(ir, 'provision').facts.filter((f) => (contractKinds as readonly string[]).includes(f.kind)).map((f) => `${f.kind}:${f.key}`).sort());
    expect(all.facts.some((f) => f.kind === 'service' && f.key === 'containerd')).toBe(true);
    expect(all.facts.some((f) => (f.kind as string) === 'sysctl')).toBe(false);
  });

  it('refuses a phase the definition does not have, naming the ones it has', () => {
    expect(() => contractOf(ir, 'provsion')).toThrow(/no phase 'provsion' in k8s-node-1.31-upstream-amd64; its phases: base, customize, provision/);
  });

  it('diff: base → customize only adds; customize → provision only adds (sysprep() keeps what the base promised); provision → customize breaks and says what went', () => {
    const customize = contractOf(ir, 'customize');
    const provision = contractOf(ir, 'provision');
    const fromBase = diffContracts(contractOf(ir, 'base'), customize);
    expect(breaks(fromBase)).toBe(false);
    expect(fromBase.added.some((f) => f.kind === 'user' && f.key === 'ops')).toBe(true);
    const forward = diffContracts(customize, provision);
    expect(forward.removed).toEqual([]);
    expect(forward.added.some((f) => f.kind === 'service' && f.key === 'containerd')).toBe(true);
    const back = diffContracts(provision, customize);
    expect(breaks(back)).toBe(true);
    expect(back.removed.some((f) => f.kind === 'service' && f.key === 'containerd')).toBe(true);
    const modeChanged = structuredClone(customize);
    modeChanged.facts.find((f) => f.key === '/etc/sudoers.d/admins')!.mode = '0640';
    expect(diffContracts(customize, modeChanged).changed.map((c) => [c.was.mode, c.fact.mode])).toEqual([['0440', '0640']]);
    // A detail only the new contract knows (the owner of a file a step writes without one) breaks nothing.
    const ownerLearned = structuredClone(customize);
    const sudoers = ownerLearned.facts.find((f) => f.key === '/etc/sudoers.d/admins')!;
    expect(customize.facts.find((f) => f.key === '/etc/sudoers.d/admins')?.owner).toBeUndefined();
    sudoers.owner = 'root';
    expect(breaks(diffContracts(customize, ownerLearned))).toBe(false);
  });

  it("states a service's enabled state as the last enable or disable leaves it; a host where it differs is a change (IMGC3002) and does not hold", async () => {
    const c = contractOf(await irOf('test/fixtures/contract/service-state.ts'), 'customize');
    const service = (key: string) => c.facts.find((f) => f.kind === 'service' && f.key === key);
    expect([service('ssh'), service('chrony')]).toEqual([
      { kind: 'service', key: 'ssh', enabled: true },
      { kind: 'service', key: 'chrony', enabled: false },
    ]);
    // A base service no step touches: the definition says nothing of it.
    expect(service('systemd-journald')).toEqual({ kind: 'service', key: 'systemd-journald' });
    const drifted = structuredClone(c);
    drifted.facts.find((f) => f.key === 'ssh')!.enabled = false;
    const d = diffContracts(c, drifted);
    expect(d.changed.map((x) => [x.fact.key, x.was.enabled, x.fact.enabled])).toEqual([['ssh', true, false]]);
    expect(diffDiagnostics(d, { file: 'old.json', shown: 'old.json', text: contractJson(c) }, { file: 'new.json', phase: 'customize' }).map((x) => `${x.code} ${x.message}`)).toEqual(["IMGC3002 service 'ssh' changed: enabled → not enabled"]);
    // On a root: ssh's unit is there and linked from multi-user.target.wants, chrony's is there and not linked.
    const root = tempDir('service-state-root');
    mkdirSync(path.join(root, 'lib/systemd/system'), { recursive: true });
    mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
    for (const u of ['ssh', 'chrony']) writeFileSync(path.join(root, `lib/systemd/system/${u}.service`), '[Service]\nExecStart=/bin/true\n');
    symlinkSync('/lib/systemd/system/ssh.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/ssh.service'));
    const view = new DirView(root);
    expect(unmetFacts([service('ssh')!, service('chrony')!], view)).toEqual([]);
    expect(unmetFacts(drifted.facts.filter((f) => f.kind === 'service' && (f.key === 'ssh' || f.key === 'chrony')), view).map((u) => [u.what, u.reason])).toEqual([["service 'ssh' (not enabled)", 'ssh is enabled']]);
    symlinkSync('/dev/null', path.join(root, 'etc/systemd/system/ssh.service'));
    expect(unmetFacts([service('ssh')!], view).map((u) => u.reason)).toEqual(['ssh is not enabled']);
  });
});

describe('imgc contract on the command line', () => {
  it('writes contracts, and diff exits 0 for additions, 1 with the removed facts located in the old contract (text and SARIF)', async () => {
    const dir = tempDir('contract');
    const customize = path.join(dir, 'customize.json');
    const provision = path.join(dir, 'provision.json');
    const w = await imgc(['contract', 'examples/node-image.ts', '--phase', 'customize', '--out', customize]);
    expect(w.exitCode, w.all).toBe(0);
    expect(readFileSync(customize, 'utf8')).toContain('{"kind":"user","key":"ops"}');
    const p = await imgc(['contract', '--no-typecheck', 'examples/node-image.ts', '--phase', 'provision']);
    expect(p.exitCode, p.all).toBe(0);
    writeFileSync(provision, `${p.stdout}\n`);
    // provision's sysprep() takes apt's lists, so only base → customize is additions alone.
    const base = path.join(dir, 'base.json');
    expect((await imgc(['contract', '--no-typecheck', 'examples/node-image.ts', '--phase', 'base', '--out', base])).exitCode).toBe(0);
    const ok = await imgc(['contract', 'diff', base, customize]);
    expect(ok.exitCode, ok.all).toBe(0);
    expect(ok.stdout).toMatch(/0 removed, 0 changed, \d+ added$/);
    const bad = await imgc(['contract', 'diff', provision, customize]);
    expect(bad.exitCode).toBe(1);
    const line = readFileSync(provision, 'utf8').split('\n').findIndex((l) => l.includes('"key":"containerd"') && l.includes('"service"')) + 1;
    expect(bad.stdout).toContain(`provision.json:${line}:5 - error IMGC3001: service 'containerd' holds in`);
    const sarif = await imgc(['contract', 'diff', '--format', 'sarif', provision, customize]);
    expect(sarif.exitCode).toBe(1);
    const log = JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string }[] }[] };
    const validSarif = sarifValidator();
    expect(validSarif(log), JSON.stringify(validSarif.errors)).toBe(true);
    const rules = new Set(log.runs[0]!.results.map((r) => r.ruleId));
    expect(rules.has('IMGC3001')).toBe(true);
    expect([...rules].every((r) => r === 'IMGC3001' || r === 'IMGC3002')).toBe(true);
    const schemaOut = await imgc(['schema', '--contract']);
    expect(JSON.parse(schemaOut.stdout)).toMatchObject({ $id: 'https://imgc.dev/schema/contract-v1.json' });
  });

  it('a file that is not a contract is a usage error saying so', async () => {
    const dir = tempDir('contract-bad');
    const f = path.join(dir, 'x.json');
    writeFileSync(f, '{"contract": 2}');
    const r = await imgc(['contract', 'diff', f, f]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('is not an imgc contract');
  });

  it("diff refuses a definition's flags (--variant, --phase …) rather than ignore them: each contract already holds one combination and phase", async () => {
    const dir = tempDir('contract-flags');
    const f = path.join(dir, 'c.json');
    expect((await imgc(['contract', '--no-typecheck', 'examples/node-image.ts', '--phase', 'base', '--out', f])).exitCode).toBe(0);
    const r = await imgc(['contract', 'diff', f, f, '--variant', 'k8s-node-1.30-debian-amd64']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('contract diff compares two contract files and takes only --format: --variant is for writing each of them (imgc contract FILE --variant …)');
    expect((await imgc(['contract', 'diff', f, f, '--phase', 'customize'])).exitCode).toBe(2);
    expect((await imgc(['contract', 'diff', f, f, '--format', 'json'])).exitCode).toBe(0);
  });
});

describe('imgc check --against', () => {
  it('checks the phases after the contract against its facts: clean on its own contract, an error when the contract lacks what they need', async () => {
    const dir = tempDir('against');
    const file = path.join(dir, 'customize.json');
    const w = await imgc(['contract', '--no-typecheck', 'examples/node-image.ts', '--phase', 'customize', '--out', file]);
    expect(w.exitCode, w.all).toBe(0);
    const fits = await imgc(['check', '--no-typecheck', 'examples/node-image.ts', '--against', file]);
    expect(fits.exitCode, fits.all).toBe(0);
    const without = readFileSync(file, 'utf8').split('\n').filter((l) => !l.includes('{"kind":"command","key":"systemctl"}')).join('\n').replace(/,\n {2}\]/, '\n  ]');
    writeFileSync(file, without);
    const lacks = await imgc(['check', '--no-typecheck', 'examples/node-image.ts', '--against', file]);
    expect(lacks.exitCode, lacks.all).toBe(1);
    expect(lacks.stdout).toMatch(/error IMGC0001: .*requires command 'systemctl'/);
    expect(lacks.stdout).not.toMatch(/customize\.\d+/);
  });
});
