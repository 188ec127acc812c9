// Conditions (`p.when(...)`): what the builder records, how the checker treats
// a fact provided on some branches only (every combination of values, IMGC0013
// saying when), what the IR refuses, and each target deciding the same way:
// the shell output and Ansible run on real files with each value, cloud-init
// and verify with the values given at compile time.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkImage } from '../src/check/checker.js';
import { validateImage } from '../src/check/validate.js';
import { compilers } from '../src/compilers/index.js';
import { contractOf } from '../src/contract/contract.js';
import { variants } from '../src/core/conditions.js';
import { image, variable, z } from '../src/index.js';
import type { Image } from '../src/ir/schema.js';
import { expectationsOf } from '../src/verify/expectations.js';
import { debian12 } from '../stdlib/bases.js';
import { run, workspace, writeFiles } from './compilers/ansible-support.js';
import { outcomes, parseProgress, runSh } from './compilers/shell-support.js';
import { outputTests } from './steps/support.js';
import { cannotChroot, freshRoot, inRoot, removeRoot } from './runtime-support.js';
import { execa } from 'execa';

const runtime = variable('runtime', z.enum(['containerd', 'crio']), { default: 'containerd', description: 'the container runtime' });
const gpu = variable('gpu', z.boolean(), { default: false });
const site = variable('site', z.string(), { default: 'lab' });

/** What the loader adds for the variables the steps use (src/load/variables.ts), with these values. */
const withValues = (ir: Image, values: { runtime?: string; gpu?: boolean; site?: string } = {}): Image => ({
  ...ir,
  variables: [
    { name: 'runtime', type: 'string', sensitive: false, value: values.runtime ?? 'containerd', oneOf: ['containerd', 'crio'] },
    { name: 'gpu', type: 'boolean', sensitive: false, value: values.gpu ?? false },
    { name: 'site', type: 'string', sensitive: false, value: values.site ?? 'lab' },
  ].filter((v) => JSON.stringify(ir.phases).includes(`var:${v.name}`)) as Image['variables'],
});

const definition = image('conditions-test')
  .base(debian12({ include: ['systemd'] }))
  .provision((p) =>
    p
      .when(
        runtime.is('containerd'),
        (p) => p.packages(['containerd']).directory('/etc/node-runtime', { mode: '0755' }).enableService('containerd'),
        (p) => p.directory('/etc/node-runtime', { mode: '0750' }),
      )
      // Both branches make the directory: it is known here.
      .file('/etc/node-runtime/name', { mode: '0644', content: 'runtime\n' })
      .when(gpu, (p) => p.when(site.isNot('lab'), (p) => p.file('/etc/gpu.conf', { mode: '0644', content: "it's 'on' {{ x }}\n" })))
      .file('/etc/motd', { mode: '0644', content: 'node\n' }),
  );
const ir = withValues(definition.toIR('conditions-test.ts'));
const steps = ir.phases[0]!.steps;

describe('when: conditions on steps', () => {
  it('records the conditions of its block on each step, nested ones together, otherwise negated', () => {
    expect(steps.map((s) => [s.id, s.conditions?.map((c) => `${c.variable.slice(5, -1)} ${c.negate ? '!=' : '=='} ${String(c.equals)}`)])).toEqual([
      ['provision.1.packages', ['runtime == containerd']],
      ['provision.2.directory', ['runtime == containerd']],
      ['provision.3.service', ['runtime == containerd']],
      ['provision.4.directory', ['runtime != containerd']],
      ['provision.5.file', undefined],
      ['provision.6.file', ['gpu == true', 'site != lab']],
      ['provision.7.file', undefined],
    ]);
    expect(validateImage(ir).diagnostics).toEqual([]);
  });

  it('checks clean: what both branches provide is known after them', () => {
    expect(checkImage(ir)).toEqual([]);
  });

  it('walks every combination of the values the conditions tell apart', () => {
    const all = variants(steps, ir.variables).map((a) => Object.fromEntries(a));
    expect(all).toHaveLength(2 * 2 * 2);
    expect(all).toContainEqual({ runtime: 'crio', gpu: true, site: undefined });
    expect(all).toContainEqual({ runtime: 'containerd', gpu: false, site: 'lab' });
  });

  it('reports a requirement met on some branches only as IMGC0013, saying when and when not', () => {
    const bad = withValues(
      image('x')
        .base(debian12({ include: ['systemd'] }))
        .provision((p) => p.when(gpu, (p) => p.directory('/opt/gpu', { mode: '0755' })).file('/opt/gpu/conf', { content: '' }))
        .toIR('x.ts'),
    );
    const ds = checkImage(bad);
    expect(ds.map((d) => [d.code, d.stepId])).toEqual([['IMGC0013', 'provision.2.file']]);
    expect(ds[0]!.message).toBe("file '/opt/gpu/conf' requires path '/opt/gpu', which no step or the base provides, when gpu is false");
    expect(ds[0]!.hint).toContain('it is met when gpu is true: put this step in the same when(...) block');
    expect(ds[0]!.loc?.line).toBeGreaterThan(0);
  });

  it('says which combination shows which wording when a requirement fails on every combination, and claims no branch meets it', () => {
    const bad = withValues(
      image('x')
        .base(debian12())
        .provision((p) => p.file('/opt/a/conf', { content: '' }).when(gpu, (p) => p.directory('/opt/a', { mode: '0755' })))
        .toIR('x.ts'),
    );
    const ds = checkImage(bad);
    expect(ds.map((d) => d.code).sort()).toEqual(['IMGC0001', 'IMGC0002']);
    expect(ds.find((d) => d.code === 'IMGC0001')!.message).toMatch(/\(when gpu is false\)$/);
    expect(ds.find((d) => d.code === 'IMGC0002')!.message).toMatch(/\(when gpu is true\)$/);
  });

  it('reports a problem of a conditional step itself with its own code, once', () => {
    const bad = withValues(
      image('x')
        .base(debian12())
        .provision((p) => p.when(runtime.is('crio'), (p) => p.file('/opt/none/conf', { content: '' })))
        .toIR('x.ts'),
    );
    expect(checkImage(bad).map((d) => d.code)).toEqual(['IMGC0001']);
  });

  it("says when a conflict exists on some combinations only; a conditional step’s own conflict needs no saying", () => {
    const check = (i: Image) => checkImage(withValues(i));
    const unconditional = check(image('x').base(debian12()).provision((p) => p.when(gpu, (p) => p.file('/etc/a', { content: 'two\n' })).file('/etc/a', { content: 'one\n' })).toIR('x.ts'));
    expect(unconditional.map((d) => [d.code, d.stepId])).toEqual([['IMGC0006', 'provision.2.file']]);
    expect(unconditional[0]!.message).toMatch(/\(when gpu is true\)$/);
    const own = check(image('x').base(debian12()).provision((p) => p.file('/etc/a', { content: 'one\n' }).when(gpu, (p) => p.file('/etc/a', { content: 'two\n' }))).toIR('x.ts'));
    expect(own.map((d) => [d.code, d.stepId])).toEqual([['IMGC0006', 'provision.2.file']]);
    expect(own[0]!.message).not.toContain('when');
  });

  it('refuses more combinations than it walks (IMGC0014)', () => {
    const flags = Array.from({ length: 9 }, (_, i) => variable(`flag_${i}`, z.boolean(), { default: false }));
    let ir = image('x')
      .base(debian12())
      .provision((p) => flags.reduce((q, f, i) => q.when(f, (q) => q.file(`/etc/flag-${i}`, { content: '' })), p))
      .toIR('x.ts');
    ir = { ...ir, variables: flags.map((f) => ({ name: f.name, type: 'boolean' as const, sensitive: false, value: false })) };
    const ds = checkImage(ir);
    expect(ds.map((d) => d.code)).toEqual(['IMGC0014']);
    expect(ds[0]!.message).toContain('512 combinations');
  });

  it('is refused where it cannot mean anything: a sensitive variable, a value of another type or outside the enum, a hook', () => {
    const secret = variable('cond_secret', z.string(), { sensitive: true });
    expect(() => secret.is('x')).toThrow(/sensitive: it cannot decide which steps run/);
    expect(() => gpu.is('yes' as never)).toThrow(/a boolean: compare it with a boolean/);
    expect(() => runtime.is('docker' as never)).toThrow(/one of 'containerd', 'crio': 'docker' is none of them/);
    expect(() =>
      image('x')
        .base(debian12())
        .provision((p) => p.when(gpu, (p) => p.post({ type: 'event', target: 'stdout' })))
        .toIR('x.ts'),
    ).toThrow(/write it outside the when\(\.\.\.\) block/);
  });

  it('is refused in hand-made IR on a hook or an artifact, with a sensitive variable or a value of another type (IMGC1004)', () => {
    const cond = steps[0]!.conditions!;
    const on = (patch: (i: Image) => Image) => validateImage(patch(structuredClone(ir))).diagnostics.map((d) => d.message);
    expect(on((i) => ({ ...i, variables: i.variables!.map((v) => (v.name === 'runtime' ? { name: 'runtime', type: 'string', sensitive: true } : v)) }))).toEqual(
      expect.arrayContaining([expect.stringContaining("variable 'runtime' is sensitive: it cannot decide which steps run")]),
    );
    expect(on((i) => ({ ...i, phases: [{ ...i.phases[0]!, steps: [{ ...i.phases[0]!.steps[0]!, conditions: [{ ...cond[0]!, equals: 3 }] }] }] }))).toEqual([
      expect.stringContaining("variable 'runtime' is a string: the condition compares it with 3"),
    ]);
    expect(
      on((i) => ({ ...i, phases: [{ ...i.phases[0]!, post: [{ kind: 'hook', id: 'provision.post1.hook', when: 'post', action: { type: 'event', target: 'stdout' }, provides: [], requires: [], removes: [], conditions: cond }] }] })),
    ).toEqual([expect.stringContaining('a hook runs with its phase: it takes no conditions')]);
    const art = image('x')
      .base(debian12())
      .provision((p) => p.file('/etc/a', { content: '' }))
      .artifact((a) => a.tar('root.tar'))
      .toIR('x.ts');
    const withCond = { ...art, phases: art.phases.map((ph) => ({ ...ph, steps: ph.steps.map((s) => (s.kind === 'artifact' ? { ...s, conditions: cond } : s)) })) };
    expect(validateImage(withCond).diagnostics.map((d) => d.message)).toEqual(
      expect.arrayContaining([expect.stringContaining('a condition applies to steps that change the root, not to a artifact step')]),
    );
  });

  it('verify and the contract take the steps of the values given', () => {
    const paths = (i: Image) => expectationsOf(i).map((e) => e.what).filter((w) => w.includes('gpu') || w.includes('node-runtime') || w.includes('containerd'));
    expect(paths(ir)).toContain("package 'containerd' installed");
    expect(paths(ir).some((w) => w.includes('gpu.conf'))).toBe(false);
    const other = withValues(definition.toIR('conditions-test.ts'), { runtime: 'crio', gpu: true, site: 'dc1' });
    expect(paths(other)).not.toContain("package 'containerd' installed");
    expect(paths(other).some((w) => w.includes('gpu.conf'))).toBe(true);
    const keys = (i: Image) => contractOf(i).facts.map((f) => `${f.kind}:${f.key}`);
    expect(keys(ir)).toContain('package:containerd');
    expect(keys(other)).not.toContain('package:containerd');
    expect(keys(other)).toContain('path:/etc/gpu.conf');
  });

  it('cloud-init takes the steps of the values given at compile time', () => {
    const userData = (i: Image) => compilers['cloud-init'].compile(i, {})['user-data']!;
    // What runs, without the comments; the header names each step left out, with its conditions.
    const body = (text: string) => text.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
    const leftOut = (text: string) => text.split('\n').filter((l) => /^# {3}\S+\.\d+\.\w+ \(when /.test(l));
    expect(body(userData(ir))).toContain('containerd');
    expect(body(userData(ir))).not.toContain('/etc/gpu.conf');
    expect(leftOut(userData(ir))).toEqual(["#   provision.4.directory (when runtime is not 'containerd')", "#   provision.6.file (when gpu is true and site is not 'lab')"]);
    const other = userData(withValues(definition.toIR('conditions-test.ts'), { runtime: 'crio', gpu: true, site: 'dc1' }));
    expect(body(other)).not.toContain('containerd');
    expect(body(other)).toContain('/etc/gpu.conf');
    expect(leftOut(other)).toEqual(expect.arrayContaining([expect.stringMatching(/ \(when runtime is 'containerd'\)$/)]));
  });

  describe('outputs', () => outputTests(ir, 'conditions'));

  for (const opts of [{ json: true, packerVersion: '1.6' }, { json: true }] as const) {
    it(`packer${opts.packerVersion ? ` ${opts.packerVersion}` : ''}: a z.enum variable takes only its values, and packer validate refuses another before any build`, async () => {
      // Imported here: a new import line at the top would move the definitions' lines, which the golden files name.
      const { expectValid, packer, parseHcl, requiredVars, writeOut } = await import('./compilers/packer-support.js');
      const built = image('enum-packer')
        .base(debian12())
        .provision((p) => p.when(runtime.is('crio'), (p) => p.file('/etc/crio.conf', { mode: '0644', content: '' })))
        .artifact((a) => a.cloudImage('qemu', 'qemu', { disk_size: '8G', format: 'qcow2', headless: true }));
      const files = compilers.packer.compile(withValues(built.toIR('enum-packer.ts')), opts as never);
      const [hcl, json] = ['enum-packer.pkr.hcl', 'enum-packer.pkr.json'];
      const [runtimeVar] = (await parseHcl(files[hcl]!))['variable']['runtime'];
      expect(runtimeVar.validation[0].condition).toBe('${contains(["containerd", "crio"], var.runtime)}');
      expect(JSON.parse(files[json]!).variable.runtime.validation.condition).toBe('${contains(["containerd", "crio"], var.runtime)}');
      if (opts.packerVersion === undefined) return; // the packer here is 1.6.6: it validates the 1.6 form only
      const dir = writeOut(files, 'enum-packer');
      const vars = requiredVars(await parseHcl(files[hcl]!));
      for (const template of [hcl, json]) {
        await expectValid(dir, template, [...vars, '-var', 'runtime=crio']);
        const refused = await packer(['validate', ...vars, '-var', 'runtime=docker', template], dir);
        expect(refused.code, refused.out).toBe(1);
        expect(refused.out).toContain('The value of runtime must be one of: "containerd", "crio".');
      }
    }, 120_000);
  }

  it("packer: a z.enum value that HCL cannot hold as a plain string is left to the scripts' and plays' own check", () => {
    const odd = { ...ir, variables: ir.variables!.map((v) => (v.name === 'runtime' ? { ...v, oneOf: ['containerd', 'cri-${o}'] } : v)) };
    const template = compilers.packer.compile(odd, { packerVersion: '1.6' } as never)['conditions-test.pkr.hcl']!;
    expect(template).toMatch(/^variable "runtime" \{\n(?: {2}.*\n)+\}$/m);
    expect(/^variable "runtime" \{\n(?: {2}.*\n)+\}$/m.exec(template)![0]).not.toContain('validation');
  });
});

describe('when: the shell output and Ansible take the same steps for each value', () => {
  const ws = workspace('conditions');
  afterAll(() => ws.remove());
  const target = (dir: string) =>
    withValues(
      image('cond-run')
        .base(debian12())
        .provision((p) =>
          p
            .when(
              runtime.is('crio'),
              (p) => p.file(`${dir}/crio` as `/${string}`, { mode: '0644', content: 'crio\n' }),
              (p) => p.file(`${dir}/containerd` as `/${string}`, { mode: '0644', content: 'containerd\n' }),
            )
            .when(gpu, (p) => p.when(site.is("it's {{ lab }}"), (p) => p.file(`${dir}/gpu` as `/${string}`, { mode: '0644', content: 'gpu\n' })))
            .file(`${dir}/always` as `/${string}`, { mode: '0644', content: 'always\n' }),
        )
        .toIR('cond-run.ts'),
    );
  const cases: [string, Record<string, string>, string[]][] = [
    ['defaults', {}, ['always', 'containerd']],
    ['crio, gpu, another site', { runtime: 'crio', gpu: 'true', site: 'dc1' }, ['always', 'crio']],
    ['crio, gpu, the quoted site', { runtime: 'crio', gpu: 'true', site: "it's {{ lab }}" }, ['always', 'crio', 'gpu']],
  ];
  const present = (dir: string) => ['always', 'containerd', 'crio', 'gpu'].filter((f) => existsSync(path.join(dir, f)));

  cases.forEach(([name, values, expected], n) => {
    it(`${name}: ${expected.join(', ')}`, async () => {
      const sh = path.join(ws.root, `${n}-sh`);
      const ansible = path.join(ws.root, `${n}-ansible`);
      mkdirSync(sh, { recursive: true });
      mkdirSync(ansible, { recursive: true });
      const out = writeFiles(path.join(ws.root, `${n}-sh-out`), compilers.shell.compile(target(sh), {}));
      const env = Object.fromEntries(Object.entries(values).map(([k, v]) => [`IMGC_VAR_${k.toUpperCase()}`, v]));
      const r = await runSh(path.join(out, 'phases', '01-provision.sh'), { env });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(present(sh)).toEqual(expected);
      const ran = outcomes(parseProgress(r.stdout));
      expect([...ran.values()].filter((v) => v === 'skipped')).toHaveLength(4 - expected.length);

      // Ansible with the values in group_vars (typed, !unsafe: the braces stay text).
      const typed = { ...values, ...(values['gpu'] ? { gpu: values['gpu'] === 'true' } : {}) };
      const play = writeFiles(path.join(ws.root, `${n}-play`), compilers.ansible.compile({ ...target(ansible), variables: withValues(target(ansible), typed).variables }, {}));
      const a = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'site.yml'], play, ws.home);
      expect(a.exitCode, a.all).toBe(0);
      expect(present(ansible)).toEqual(expected);
    });
  });

  it('Ansible with the values as extra vars (-e k=v, text): a boolean through bool, the rest compared as text', async () => {
    const dir = path.join(ws.root, 'extra');
    mkdirSync(dir, { recursive: true });
    const play = writeFiles(path.join(ws.root, 'extra-play'), compilers.ansible.compile(target(dir), {}));
    expect(readFileSync(path.join(play, 'roles', 'provision', 'tasks', 'main.yml'), 'utf8').match(/^  when:/gm)).toHaveLength(3);
    const a = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', '-e', 'runtime=crio', '-e', 'gpu=true', '-e', 'site=dc1', 'site.yml'], play, ws.home);
    expect(a.exitCode, a.all).toBe(0);
    expect(present(dir)).toEqual(['always', 'crio']);
  });
});

describe('when: a value the conditions cannot compare is refused before any step', () => {
  const ws = workspace('conditions-values');
  afterAll(() => ws.remove());
  const dir = path.join(ws.root, 'files');
  const ir = withValues(
    image('cond-values')
      .base(debian12())
      .provision((p) => p.when(gpu, (p) => p.file(`${dir}/gpu` as `/${string}`, { mode: '0644', content: 'gpu\n' })).when(runtime.is('crio'), (p) => p.file(`${dir}/crio` as `/${string}`, { mode: '0644', content: 'crio\n' })))
      .toIR('cond-values.ts'),
  );

  it('shell: IMGC_VAR_GPU=yes or a runtime outside the enum exits 2 naming the values, having run nothing', async () => {
    mkdirSync(dir, { recursive: true });
    const out = writeFiles(path.join(ws.root, 'sh-out'), compilers.shell.compile(ir, {}));
    for (const [env, says] of [
      [{ IMGC_VAR_GPU: 'yes' }, 'imgc: IMGC_VAR_GPU is none of: true, false (variable gpu)'],
      [{ IMGC_VAR_RUNTIME: 'cri-o' }, 'imgc: IMGC_VAR_RUNTIME is none of: containerd, crio (variable runtime)'],
    ] as const) {
      const r = await runSh(path.join(out, 'phases', '01-provision.sh'), { env });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(says);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(path.join(dir, 'gpu'))).toBe(false);
  });

  it('ansible: -e gpu=yes or -e runtime=cri-o fails its assert before any step; true and false in either form pass', async () => {
    mkdirSync(dir, { recursive: true });
    const play = writeFiles(path.join(ws.root, 'play'), compilers.ansible.compile(ir, {}));
    const ansible = (...extra: string[]) => run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', ...extra, 'site.yml'], play, ws.home);
    for (const [e, says] of [
      ['gpu=yes', 'variable gpu is none of: true, false'],
      ['runtime=cri-o', 'variable runtime is none of: containerd, crio'],
    ] as const) {
      const r = await ansible('-e', e);
      expect(r.exitCode, r.all).toBe(2);
      expect(r.all).toContain(says);
      expect(existsSync(path.join(dir, 'gpu'))).toBe(false);
    }
    const ok = await ansible('-e', 'gpu=True', '-e', 'runtime=crio');
    expect(ok.exitCode, ok.all).toBe(0);
    expect(existsSync(path.join(dir, 'gpu')) && existsSync(path.join(dir, 'crio'))).toBe(true);
  });

  it.skipIf(cannotChroot)('provision.sh (--runtime) sets the compile-time values and checks them like the phase scripts', async () => {
    const onHost = withValues(
      image('cond-runtime')
        .base(debian12())
        .provision((p) => p.when(gpu, (p) => p.file('/etc/gpu', { mode: '0644', content: 'gpu\n' }), (p) => p.file('/etc/no-gpu', { mode: '0644', content: `${site}\n` })))
        .toIR('cond-runtime.ts'),
    );
    const script = compilers.shell.compile(onHost, { runtime: true })['provision.sh']!;
    const root = await freshRoot(onHost, 'cond-runtime');
    try {
      const bad = await execa('chroot', [root, '/bin/sh', '-s'], { input: script, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', IMGC_VAR_GPU: '1' }, extendEnv: false, reject: false });
      expect(bad.exitCode, bad.stderr).toBe(2);
      expect(bad.stderr).toContain('IMGC_VAR_GPU is none of: true, false');
      const r = await inRoot(root, script);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(readFileSync(path.join(root, 'etc/no-gpu'), 'utf8')).toBe('lab\n');
      expect(existsSync(path.join(root, 'etc/gpu'))).toBe(false);
    } finally {
      removeRoot(root);
    }
  }, 300_000);
});
