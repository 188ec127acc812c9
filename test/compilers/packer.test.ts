// The packer backend on every good example, with both provisioners and the
// JSON form: golden files (the .pkr.hcl/.pkr.json only; the embedded shell and
// ansible files are those backends' own business), `packer validate` (full),
// `packer fmt -check` and `packer inspect` on the written output, and the
// template read back by HashiCorp's HCL parser (@cdktf/hcl2json).
import { execa, type ResultPromise } from 'execa';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packerCompiler } from '../../src/compilers/packer/index.js';
import { BUILD_TIME, jsonTemplateText } from '../../src/compilers/packer/quote.js';
import type { CompiledFiles, CompileOptions } from '../../src/compilers/types.js';
import type { Image, Phase, StepOf } from '../../src/ir/schema.js';
import { goodExamples, irOf } from '../helpers/cli.js';
import { expectGolden } from '../helpers/golden.js';
import { run, workspace, writeFiles } from './ansible-support.js';
import { expectValid, inspectProvisioners, packer, packerEnv, parseHcl, requiredVars, writeOut, type Parsed } from './packer-support.js';
import { needTools } from '../helpers/tools.js';

const own = (files: CompiledFiles): CompiledFiles => Object.fromEntries(Object.entries(files).filter(([f]) => /\.pkr\.(hcl|json)$/.test(f)));

const rootKinds = new Set(['user', 'group', 'directory', 'file', 'symlink', 'packages', 'aptRepository', 'service', 'sysctl', 'kernelModule', 'swapOff', 'command']);
const hasRootWork = (p: Phase) => p.steps.some((s) => rootKinds.has(s.kind));
const local = (h: StepOf<'hook'>) => h.action.type !== 'script';

/** Runs of consecutive hooks on one side (where packer runs / in the target), as provisioner types. */
const hookTypes = (hooks: readonly StepOf<'hook'>[]): string[] =>
  hooks.reduce<{ side: boolean; type: string }[]>((runs, h) => {
    const last = runs[runs.length - 1];
    if (!last || last.side !== local(h)) runs.push({ side: local(h), type: local(h) ? 'shell-local' : 'shell' });
    return runs;
  }, []).map((r) => r.type);

/** What the build must run, from the IR alone: per phase its pre hooks, its steps, its post hooks. */
const expectedProvisioners = (ir: Image, provisioner: 'shell' | 'ansible'): string[] => {
  const list = phaseProvisioners(ir, provisioner);
  // The ansible provisioners read the variables from a file a shell-local step writes before them and removes after.
  const phases = provisioner === 'ansible' && ir.variables?.length && list.length ? ['shell-local', ...list, 'shell-local'] : list;
  // The phase scripts' directory is made first and removed last; a VM the seed let in is cleaned last.
  // The plays' python3 and python3-apt come first, before anything of Ansible's.
  const buildDir = list.includes('file');
  const python = provisioner === 'ansible';
  const seeded = cloudSteps(ir).some((s) => s.builder === 'qemu' && s.settings['cd_files'] === undefined && s.settings['ssh_username'] === undefined);
  return [...(buildDir || python ? ['shell'] : []), ...phases, ...(buildDir ? ['shell'] : []), ...(seeded ? ['shell'] : [])];
};

const phaseProvisioners = (ir: Image, provisioner: 'shell' | 'ansible'): string[] => {
  // The shell form uploads the phase scripts' helpers.sh once, before the first phase script.
  let uploaded = false;
  const rootWork = (p: Phase): string[] => {
    if (!hasRootWork(p)) return [];
    if (uploaded) return ['shell'];
    uploaded = true;
    return ['file', 'shell'];
  };
  return ir.phases.flatMap((p) =>
    provisioner === 'ansible'
      ? p.pre.length || p.post.length || hasRootWork(p)
        ? ['ansible']
        : []
      : [...hookTypes(p.pre), ...rootWork(p), ...hookTypes(p.post)],
  );
};

const cloudSteps = (ir: Image): StepOf<'cloudImage'>[] =>
  (ir.phases.find((p) => p.name === 'artifact')?.steps ?? []).filter((s): s is StepOf<'cloudImage'> => s.kind === 'cloudImage');

/** Provisioner blocks in hcl2json's shape: { type: [body, …] } per provisioner key. */
const provisionerBodies = (build: Parsed): Parsed[] => Object.values((build['provisioner'] ?? {}) as Record<string, Parsed[]>).flat();

// Packer 1.6.6 (Debian's, here) runs the 1.6 form; the default form for
// Packer 1.10+ is read back with HashiCorp's HCL parser and its plugin block checked.
// The 1.6 form is held to the default form's golden files: the same template
// but for its header and the packer block.
const variants: { label: string; opts: CompileOptions; golden?: string }[] = [
  { label: 'shell + json', opts: { provisioner: 'shell', json: true }, golden: 'packer' },
  { label: 'ansible + json', opts: { provisioner: 'ansible', json: true }, golden: 'packer-ansible' },
  { label: 'shell + json, packer 1.6', opts: { provisioner: 'shell', json: true, packerVersion: '1.6' } },
  { label: 'ansible + json, packer 1.6', opts: { provisioner: 'ansible', json: true, packerVersion: '1.6' } },
  { label: 'shell, hcl only, packer 1.6', opts: { packerVersion: '1.6' } },
];

describe.each(goodExamples())('packer backend: %s', (file) => {
  const name = path.basename(file, '.ts');
  let ir: Image;
  beforeAll(async () => {
    ir = await irOf(file);
  });

  describe.each(variants)('$label', ({ opts, golden }) => {
    let files: CompiledFiles;
    let dir: string;
    let parsed: Parsed;
    let vars: string[];
    const hclFile = () => `${ir.name}.pkr.hcl`;
    beforeAll(async () => {
      files = packerCompiler.compile(ir, opts);
      dir = writeOut(files, `packer-${name}`);
      parsed = await parseHcl(files[hclFile()] ?? '');
      vars = requiredVars(parsed);
    });

    if (golden) {
      it('matches the golden files (its own .pkr.hcl and .pkr.json)', () => {
        expect(Object.keys(own(files)).sort()).toEqual([`${ir.name}.pkr.hcl`, `${ir.name}.pkr.json`]);
        expectGolden(`${name}/${golden}`, own(files));
      });
    } else if (opts.json) {
      it('is the default form but for its header and packer block, and says it is for packer 1.6.6', () => {
        const modern = packerCompiler.compile(ir, { ...opts, packerVersion: '1.10' });
        const hcl = (text: string) => text.replace(/^(#.*\n)+\n/, '').replace(/^packer \{\n[\s\S]*?\n\}\n\n/, '');
        // A list variable's validation block needs regex() in conditions, which packer 1.6.6 lacks: the scripts and plays check the items there.
        const unvalidated = (text: string) => text.replace(/^ {2}validation \{\n[\s\S]*?\n {2}\}\n/gm, '');
        expect(hcl(files[hclFile()]!)).toBe(unvalidated(hcl(modern[hclFile()]!)));
        expect(files[hclFile()]).not.toMatch(/^ {2}validation \{/m);
        const json = (text: string) => {
          const { '//': _header, packer: _block, ...rest } = JSON.parse(text) as Record<string, unknown>;
          const variables = Object.entries((rest['variable'] ?? {}) as Record<string, Record<string, unknown>>).map(([n, { validation: _v, ...v }]) => [n, v]);
          return { ...rest, ...(rest['variable'] ? { variable: Object.fromEntries(variables) } : {}) };
        };
        expect(json(files[`${ir.name}.pkr.json`]!)).toEqual(json(modern[`${ir.name}.pkr.json`]!));
        expect(Object.fromEntries(Object.entries(files).filter(([f]) => !(f in own(files))))).toEqual(Object.fromEntries(Object.entries(modern).filter(([f]) => !(f in own(modern)))));
        expect(files[hclFile()]).toMatch(/--packer-version 1\.6\n/);
        expect(files[hclFile()]).toContain("For Debian's packer 1.6.6, which has these builders and provisioners built in: no `packer init`.");
        expect(files[hclFile()]).not.toMatch(/^packer \{/m);
      });
    } else {
      it('writes only the .pkr.hcl without --json', () => {
        expect(Object.keys(own(files))).toEqual([`${ir.name}.pkr.hcl`]);
      });
    }

    it('is deterministic and leaves the IR alone', () => {
      const copy = structuredClone(ir);
      expect(packerCompiler.compile(copy, opts)).toEqual(files);
      expect(copy).toEqual(ir);
    });

    it('embeds the other backend unchanged under shell/ or ansible/', async () => {
      const provisioner = opts.provisioner ?? 'shell';
      const { compilers } = await import('../../src/compilers/index.js');
      const theirs = compilers[provisioner]?.compile(ir, opts) ?? {};
      for (const [f, content] of Object.entries(theirs)) expect(files[`${provisioner}/${f}`], f).toBe(content);
      const extra = Object.keys(files).filter((f) => !(f in own(files)) && !f.startsWith(`${provisioner}/`));
      // Besides: parts of hook lists, and the NoCloud seed of a qemu source (docs/packer.md).
      expect(extra.every((f) => /^hooks\/.+\.\d+\.sh$|^seed\/(user-data|meta-data)$/.test(f)), extra.join(', ')).toBe(true);
    });

    const packer16 = opts.packerVersion === '1.6';

    it('is packer fmt clean', async () => {
      const fmt = await packer(['fmt', '-check', '-diff', hclFile()], dir);
      expect(fmt.code, fmt.out).toBe(0);
    });

    it.runIf(packer16)('passes packer validate (full)', async () => {
      await expectValid(dir, opts.json ? hclFile() : '.', vars);
      if (opts.json) await expectValid(dir, `${ir.name}.pkr.json`, vars);
    });

    it.runIf(!packer16)('pins the plugins of the builders and provisioners it uses, for Packer 1.10 and later', () => {
      const block = (parsed['packer'] as Parsed[])[0] as Parsed;
      expect(block['required_version']).toBe('>= 1.10.0');
      const plugins = (block['required_plugins'] as Parsed[])[0] as Parsed;
      const want = new Set<string>();
      for (const s of cloudSteps(ir)) if (s.builder !== 'null') want.add(s.builder === 'amazon-ebs' ? 'amazon' : s.builder);
      if (opts.provisioner === 'ansible') want.add('ansible');
      expect(Object.keys(plugins).sort()).toEqual([...want].sort());
      for (const [name, spec] of Object.entries(plugins)) {
        expect(spec['source'], name).toBe(`github.com/hashicorp/${name}`);
        expect(spec['version'], name).toMatch(/^~> \d+\.\d+$/);
      }
      if (opts.json) {
        const json = JSON.parse(files[`${ir.name}.pkr.json`]!) as { packer: { required_plugins: Record<string, unknown> } };
        expect(Object.keys(json.packer.required_plugins).sort()).toEqual([...want].sort());
      }
    });

    it.runIf(packer16)('runs the phases in order: pre hooks, steps, post hooks (packer inspect)', async () => {
      const hcl = await inspectProvisioners(dir, hclFile(), vars);
      expect(hcl.provisioners).toEqual(expectedProvisioners(ir, opts.provisioner ?? 'shell'));
      if (opts.json) {
        const json = await inspectProvisioners(dir, `${ir.name}.pkr.json`, vars);
        // The two syntaxes hold the same template.
        expect(json.text).toBe(hcl.text);
      }
    });

    it('reads back with the expected sources, settings and provisioners (hcl2json)', () => {
      const steps = cloudSteps(ir);
      const build = (parsed['build'] as Parsed[])[0] as Parsed;
      const labels = steps.map((s) => s.name.toLowerCase().replace(/[^a-z0-9_-]+/g, '_'));
      expect(build['sources']).toEqual(steps.map((s, i) => `source.${s.builder}.${labels[i]}`));
      steps.forEach((s, i) => {
        const body = (parsed['source'] as Parsed)[s.builder][labels[i] as string][0] as Parsed;
        // An AMI's name is unique per build: the build's time follows the given one.
        for (const [k, v] of Object.entries(s.settings)) expect(body[k], `${s.id} ${k}`).toEqual(typeof v === 'string' ? `${jsonTemplateText(v)}${k === 'ami_name' ? `-\${${BUILD_TIME}}` : ''}` : v);
        if (s.builder === 'qemu') {
          expect(body['disk_image']).toBe(true);
          expect(body['iso_checksum']).toMatch(/^\$\{var\.\w+\}$/);
          expect(body['communicator']).toBe('ssh');
          // The way in: imgc's NoCloud seed and the build's own key, the firmware imgc's disks need.
          if (s.settings['cd_files'] === undefined) expect(body).toMatchObject({ cd_label: 'cidata', ssh_username: 'imgc-build', ssh_private_key_file: expect.stringMatching(/^\$\{var\.\w+_ssh_private_key_file\}$/) });
          expect(body).not.toHaveProperty('ssh_password');
          if (s.settings['qemuargs'] === undefined) expect(body['qemuargs']).toEqual([['-bios', expect.stringMatching(/^\$\{var\.\w+_firmware\}$/)]]);
        }
        if (s.builder === 'amazon-ebs') {
          expect(body['ssh_username']).toBe('admin');
          expect(body['source_ami_filter'][0]['owners']).toEqual(['136693071363']);
        }
      });
      // Sensitive variables are marked so; AWS credentials are not variables.
      const variables = Object.entries((parsed['variable'] ?? {}) as Record<string, Parsed[]>);
      for (const [v, [body]] of variables) {
        expect(body?.['type'], v).toMatch(/^\$\{(string|number|bool|list\(string\))\}$|^(string|number|bool|list\(string\))$/);
        if (/password/.test(v)) expect(body?.['sensitive'], v).toBe(true);
        expect(v).not.toMatch(/access_key|secret/);
      }
      // Every script the template points at is in the output, and nothing else is run.
      const scripts = provisionerBodies(build).flatMap((p) => [p['script'], p['playbook_file']].filter((x): x is string => typeof x === 'string'));
      expect(scripts.length).toBeGreaterThan(0);
      for (const s of scripts) expect(files[s.replace(/^\$\{path\.root\}\//, '')], s).toBeDefined();
      // Packer's own {{ .Path }} is where Packer fills it in: in execute_command, never escaped.
      for (const p of provisionerBodies(build).filter((b) => 'execute_command' in b && typeof b['execute_command'] === 'string')) {
        expect(p['execute_command']).toContain("'{{ .Path }}'");
      }
      const pp = build['post-processor'] as Parsed;
      expect(pp['manifest'][0]).toEqual({ output: 'manifest.json', strip_path: true });
      if (steps.some((s) => s.builder === 'qemu')) expect(pp['checksum'][0]['checksum_types']).toEqual(['sha256']);
    });

    it('keeps Packer template syntax ({{ }}) only in the fields where Packer fills it in', () => {
      const lines = (files[hclFile()] ?? '').split('\n').filter((l) => l.includes('{{'));
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(l.trim(), l).toMatch(/^(execute_command|inventory_file_template) +=/);
    });

    it('lists what Packer does not build in the header', () => {
      const text = files[hclFile()] ?? '';
      expect(text.startsWith(`# Generated by imgc from ${ir.source}`)).toBe(true);
      for (const s of ir.phases.flatMap((p) => p.steps).filter((s) => s.kind === 'artifact')) expect(text).toContain(`#   ${s.id} `);
    });
  });
});

describe('packer backend: a definition without cloudImage steps', () => {
  it('provisions an existing host through a null source', async () => {
    const base = await irOf('examples/node-image.ts');
    const ir: Image = { ...base, phases: base.phases.map((p) => ({ ...p, steps: p.steps.filter((s) => s.kind !== 'cloudImage') })) };
    const files = packerCompiler.compile(ir, { json: true, packerVersion: '1.6' });
    const text = files[`${ir.name}.pkr.hcl`] ?? '';
    expect(text).toContain('source "null" "existing-host" {');
    expect(text).toMatch(/no cloudImage step/);
    expect(text).not.toContain('post-processor "checksum"');
    const parsed = await parseHcl(text);
    expect(parsed['variable']['existing_host_ssh_password'][0]['sensitive']).toBe(true);
    // join_token: the example's sensitive variable (no default).
    expect(requiredVars(parsed)).toEqual(['-var', 'existing_host_ssh_host=example', '-var', 'join_token=example']);
    const dir = writeOut(files, 'packer-existing');
    // The null builder insists on one way to log in: password or key.
    const none = await packer(['validate', '-var', 'existing_host_ssh_host=node1.example.com', '-var', 'join_token=example', `${ir.name}.pkr.hcl`], dir);
    expect(none.code, none.out).not.toBe(0);
    expect(none.out).toMatch(/authentication method/);
    const vars = ['-var', 'existing_host_ssh_host=node1.example.com', '-var', 'existing_host_ssh_password=secret', '-var', 'join_token=example'];
    await expectValid(dir, `${ir.name}.pkr.hcl`, vars);
    await expectValid(dir, `${ir.name}.pkr.json`, vars);
  });
});

describe('packer backend: variables reach ansible-playbook', () => {
  it('through a mode-0600 extra-vars file a real packer build writes, never on a command line, read back exactly (spaces, quotes, $, ${}, %{, {{ }}, JSON)', async () => {
    const ir = await irOf('test/fixtures/node-vars.ts');
    const files = packerCompiler.compile(ir, { provisioner: 'ansible', json: true, packerVersion: '1.6' });
    const dir = writeOut(files, 'packer-ansible-vars');
    const hcl = files[`${ir.name}.pkr.hcl`] ?? '';
    // ansible-playbook's arguments name the file, not a value; no provisioner's command holds a variable.
    const parsed = await parseHcl(hcl);
    const ansible = (parsed['build'][0]['provisioner'] as Record<string, Parsed[]>)['ansible'] ?? [];
    expect(ansible.length).toBeGreaterThan(0);
    for (const a of ansible) expect(a['extra_arguments'].slice(-2)).toEqual(['-e', '@${path.root}/ansible/.extra-vars-${source.name}.json']);
    expect(hcl).not.toMatch(/extra_arguments[^\]]*var\./);
    // The first and last provisioners write and remove the file.
    expect(hcl.indexOf('base64encode(jsonencode({ k8s_minor = var.k8s_minor, join_token = var.join_token }))')).toBeLessThan(hcl.indexOf('provisioner "ansible"'));
    expect(hcl.lastIndexOf('rm -f \\"$f\\"')).toBeGreaterThan(hcl.lastIndexOf('provisioner "ansible"'));

    // A real packer build runs the step that writes the file (null source, no communicator), with values
    // Packer's own {{ }} engine would change if they reached it.
    const values = { k8s_minor: `1.30 "x" $y \${v} 'q' %{w} {{ .Foo }} \\ é, {"a": 1}`, join_token: 'abcdef.0123456789abcdef tail' };
    const writer = /\n {2}# The variables for ansible-playbook[\s\S]*?\n {2}\}\n/.exec(hcl)![0];
    const variables = [...hcl.matchAll(/^variable "[^"]+" \{\n[\s\S]*?\n\}\n/gm)].map((m) => m[0]).join('\n');
    writeFileSync(path.join(dir, 'writer.pkr.hcl'), `${variables}\nsource "null" "vm" {\n  communicator = "none"\n}\n\nbuild {\n  sources = ["source.null.vm"]\n${writer}}\n`);
    const required = requiredVars(parsed).filter((a) => a !== '-var' && !Object.keys(values).includes(a.split('=')[0]!));
    const vars = [...required, ...Object.entries(values).map(([k, v]) => `${k}=${v}`)].flatMap((kv) => ['-var', kv]);
    const built = await packer(['build', ...vars, 'writer.pkr.hcl'], dir);
    expect(built.code, built.out).toBe(0);
    const file = path.join(dir, 'ansible', '.extra-vars-vm.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(values);
    const ws = workspace('packer-extra-vars');
    // k8s_minor's {{ }} is Ansible's to evaluate when used (README): the play reads the other.
    writeFiles(ws.out, { 'play.yml': '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: "{{ join_token }}"\n' });
    const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', '-e', `@${file}`, 'play.yml'], ws.out, ws.home, { ANSIBLE_STDOUT_CALLBACK: 'json' });
    ws.remove();
    expect(r.exitCode, r.all).toBe(0);
    const out = JSON.parse(r.stdout) as { plays: { tasks: { hosts: { localhost: { msg: unknown } } }[] }[] };
    expect(out.plays[0]!.tasks[0]!.hosts.localhost.msg).toBe(values.join_token);
  }, 180_000);
});

describe('packer backend: hooks on both sides in one list', () => {
  it('splits them in order: where packer runs, in the target, where packer runs', async () => {
    const base = await irOf('examples/node-image.ts');
    const customize = base.phases[0] as Phase;
    const hook = (n: number, action: StepOf<'hook'>['action']): StepOf<'hook'> => ({
      id: `customize.pre${n}.hook`,
      kind: 'hook',
      when: 'pre',
      action,
      provides: [],
      requires: [],
      removes: [],
    });
    const pre = [
      hook(1, { type: 'event', target: 'stdout' }),
      hook(2, { type: 'script', run: 'echo "in the target: $(hostname)"' }),
      hook(3, { type: 'webhook', url: 'https://hooks.example.com/imgc', timeoutSeconds: 5, retries: 1, onFailure: 'warn' }),
    ];
    const ir: Image = { ...base, phases: base.phases.map((p) => (p === customize ? { ...p, pre } : p)) };
    const files = packerCompiler.compile(ir, { packerVersion: '1.6' });
    const parts = Object.keys(files).filter((f) => f.startsWith('hooks/')).sort();
    expect(parts).toEqual(['hooks/01-customize-pre.1.sh', 'hooks/01-customize-pre.2.sh', 'hooks/01-customize-pre.3.sh']);
    expect(files['hooks/01-customize-pre.2.sh']).toContain('customize.pre2.hook');
    expect(files['hooks/01-customize-pre.2.sh']).not.toContain('customize.pre1.hook');
    expect(files['hooks/01-customize-pre.3.sh']).toContain('hooks.example.com');
    const dir = writeOut(files, 'packer-hooks');
    const parsed = await parseHcl(files[`${ir.name}.pkr.hcl`] ?? '');
    const vars = requiredVars(parsed);
    await expectValid(dir, '.', vars);
    const { provisioners } = await inspectProvisioners(dir, '.', vars);
    expect(provisioners).toEqual(expectedProvisioners(ir, 'shell'));
    // After the provisioner making the build directory: where packer runs, in the target, where packer runs; then helpers.sh and the phase.
    expect(provisioners.slice(0, 6)).toEqual(['shell', 'shell-local', 'shell', 'shell-local', 'file', 'shell']);
  });
});

describe('packer backend: refusals', () => {
  it('refuses settings HCL cannot carry (IMGC2002) and strings no target can (IMGC2001), at the step', async () => {
    const base = await irOf('examples/node-image.ts');
    const bad = (settings: Record<string, string>) => ({
      ...base,
      phases: base.phases.map((p) => ({ ...p, steps: p.steps.map((s) => (s.kind === 'cloudImage' && s.builder === 'qemu' ? { ...s, settings } : s)) })),
    });
    const cases: [Record<string, string>, string][] = [
      [{ 'not a key': 'x' }, 'IMGC2002'],
      [{ vm_name: 'e\u0301' }, 'IMGC2002'],
      [{ vm_name: 'a\ud800' }, 'IMGC2001'],
    ];
    for (const [settings, code] of cases) {
      let error: unknown;
      try {
        packerCompiler.compile(bad(settings), {});
      } catch (e) {
        error = e;
      }
      const diagnostics = (error as { diagnostics?: { code: string; loc?: { line: number } }[] }).diagnostics ?? [];
      expect(diagnostics.map((d) => d.code), JSON.stringify(settings)).toEqual([code]);
      expect(diagnostics[0]?.loc?.line).toBeGreaterThan(0);
    }
  });
});

describe('packer backend: settings newer than packer 1.6.6', () => {
  it('cpu_model passes through for Packer 1.10+ and is refused for 1.6 with IMGC2002 saying why', async () => {
    const ir = structuredClone(await irOf('examples/node-image.ts'));
    const qemu = ir.phases.flatMap((p) => p.steps).find((s): s is StepOf<'cloudImage'> => s.kind === 'cloudImage' && s.builder === 'qemu')!;
    qemu.settings = { ...qemu.settings, cpu_model: 'host' };
    const modern = await parseHcl(packerCompiler.compile(ir, {})[`${ir.name}.pkr.hcl`]!);
    expect(Object.values(modern['source']['qemu'] as Record<string, Parsed[]>)[0]![0]!['cpu_model']).toBe('host');
    let error: unknown;
    try {
      packerCompiler.compile(ir, { packerVersion: '1.6' });
    } catch (e) {
      error = e;
    }
    const [d] = (error as { diagnostics?: { code: string; message: string }[] }).diagnostics ?? [];
    expect(d?.code).toBe('IMGC2002');
    expect(d?.message).toContain("packer 1.6.6's qemu builder has no 'cpu_model'");
  });
});

describe("packer backend: a qemu source that boots imgc's own disk", () => {
  /** node-image with its qemu source booting the definition's bootable disk.qcow2 (or `disk`), not a cloud image. */
  const fromDisk = async (disk = 'disk.qcow2', builder: StepOf<'cloudImage'>['builder'] = 'qemu', wayIn = true): Promise<Image> => {
    const ir = structuredClone(await irOf('examples/node-image.ts'));
    const qemu = ir.phases.flatMap((p) => p.steps).find((s): s is StepOf<'cloudImage'> => s.kind === 'cloudImage' && s.builder === 'qemu')!;
    Object.assign(qemu, { disk, builder, settings: { headless: true } });
    // The way in needs cloud-init on the disk besides sshd (sshHardening's): node-image.ts installs it (cloudInit());
    // without the way in, no step installs it.
    if (!wayIn)
      for (const s of ir.phases.flatMap((p) => p.steps))
        if (s.kind === 'packages') Object.assign(s, { names: s.names.filter((n) => n !== 'cloud-init'), provides: s.provides.filter((f) => !(f.kind === 'package' && f.key === 'cloud-init')) });
    if (wayIn && !ir.phases.some((p) => p.steps.some((s) => s.provides.some((f) => f.kind === 'package' && f.key === 'cloud-init')))) {
      const ssh = ir.phases.flatMap((p) => p.steps).find((s): s is StepOf<'packages'> => s.kind === 'packages' && s.provides.some((f) => f.key === 'openssh-server'))!;
      Object.assign(ssh, { names: [...ssh.names, 'cloud-init'], provides: [...ssh.provides, { kind: 'package', key: 'cloud-init' }] });
    }
    return ir;
  };
  const diagnosticsOf = (ir: Image): { code: string; message: string }[] => {
    try {
      packerCompiler.compile(ir, {});
    } catch (e) {
      return (e as { diagnostics?: { code: string; message: string }[] }).diagnostics ?? [];
    }
    return [];
  };

  it('starts from the built disk with its checksum and UEFI firmware, and packer 1.6.6 validates it (HCL and JSON)', async () => {
    const ir = await fromDisk();
    const modern = await parseHcl(packerCompiler.compile(ir, {})[`${ir.name}.pkr.hcl`]!);
    const source = (modern['source']['qemu'] as Record<string, Parsed[]>)['qemu']![0]!;
    expect(source).toMatchObject({ disk_image: true, iso_url: '${var.qemu_iso_url}', iso_checksum: '${var.qemu_iso_checksum}', format: 'qcow2', vm_name: `${ir.name}.qcow2`, qemuargs: [['-bios', '${var.qemu_firmware}']] });
    const vars = modern['variable'] as Record<string, Parsed[]>;
    expect(vars['qemu_iso_url']![0]!['default']).toBe('../build/disk.qcow2');
    expect(vars['qemu_firmware']![0]!['default']).toBe('/usr/share/ovmf/OVMF.fd');
    // No cloud image: the checksum is the user's to give, and the build's key pair.
    expect(vars['qemu_iso_checksum']![0]).not.toHaveProperty('default');
    expect(vars['qemu_ssh_private_key_file']![0]).not.toHaveProperty('default');
    expect(vars).not.toHaveProperty('qemu_ssh_password');
    expect(JSON.stringify(modern)).not.toContain('cloud.debian.org');

    const files = packerCompiler.compile(ir, { json: true, packerVersion: '1.6' });
    const dir = writeOut(files, 'packer-from-disk');
    const required = requiredVars(await parseHcl(files[`${ir.name}.pkr.hcl`]!));
    expect(required.filter((a) => a !== '-var').map((a) => a.split('=')[0])).toEqual(expect.arrayContaining(['qemu_iso_checksum', 'qemu_ssh_private_key_file']));
    await expectValid(dir, `${ir.name}.pkr.hcl`, required);
    await expectValid(dir, `${ir.name}.pkr.json`, required);
  });

  it('a raw disk stays raw', async () => {
    const source = (await parseHcl(packerCompiler.compile(await fromDisk('disk.raw'), {})[`${(await fromDisk()).name}.pkr.hcl`]!))['source']['qemu']['qemu'][0] as Parsed;
    expect(source).toMatchObject({ format: 'raw' });
  });

  it('refuses, at the step, a disk no bootable raw/qcow2 artifact writes and a builder other than qemu (IMGC2002)', async () => {
    for (const [ir, message] of [
      [await fromDisk('rootfs.tar.zst'), "'rootfs.tar.zst' (artifact.2.artifact) is not a bootable disk: it is a tar"],
      [await fromDisk('nowhere.qcow2'), "no artifact of this phase writes 'nowhere.qcow2'"],
      [await fromDisk('disk.qcow2', 'null'), 'only the qemu builder boots a disk imgc built'],
      [await fromDisk('disk.qcow2', 'qemu', false), "Packer gets into 'disk.qcow2' through a NoCloud seed, which needs package 'cloud-init' on the disk, and no step installs it"],
    ] as const) {
      const ds = diagnosticsOf(ir);
      expect(ds.map((d) => d.code), message).toEqual(['IMGC2002']);
      expect(ds[0]!.message).toContain(message);
    }
  });
});

/**
 * What a process prints (stdout and stderr) until `marker` shows or it ends,
 * then SIGTERM and its end; SIGTERM after `ms` too. For a VM or a build that
 * is stopped once it has shown what the test looks for.
 */
const outputUntil = async (proc: ResultPromise<{ all: true; reject: false; stdin?: 'ignore' }>, marker: string, ms: number): Promise<string> => {
  let out = '';
  const seen = new Promise<void>((resolve) =>
    proc.all!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(marker)) resolve();
    }),
  );
  const timer = setTimeout(() => proc.kill('SIGTERM'), ms);
  await Promise.race([seen, proc]);
  clearTimeout(timer);
  proc.kill('SIGTERM');
  await proc;
  return out;
};

describe('packer backend: an arm64 base', () => {
  /**
   * node-image on an arm64 base (the IR's base.arch; `base` renames the base), the AMI's instance type left to imgc.
   * The definition's own steps stay amd64's: only the sources differ by architecture.
   */
  const arm64 = async (base: Partial<Image['base']> = {}): Promise<Image> => {
    const ir = structuredClone(await irOf('examples/node-image.ts'));
    for (const s of ir.phases.flatMap((p) => p.steps))
      if (s.kind === 'cloudImage' && s.builder === 'amazon-ebs') s.settings = Object.fromEntries(Object.entries(s.settings).filter(([k]) => k !== 'instance_type'));
    return { ...ir, base: { ...ir.base, arch: 'arm64', ...base } };
  };
  const sourcesOf = async (ir: Image) => {
    const parsed = await parseHcl(packerCompiler.compile(ir, {})[`${ir.name}.pkr.hcl`]!);
    const qemu = (parsed['source']['qemu'] as Record<string, Parsed[]>)['qemu']![0]!;
    const aws = (parsed['source']['amazon-ebs'] as Record<string, Parsed[]>)['aws']![0]!;
    const defaults = Object.fromEntries(Object.entries(parsed['variable'] as Record<string, Parsed[]>).map(([n, [v]]) => [n, v!['default'] as unknown]));
    return { parsed, qemu, aws, defaults };
  };
  /** The QEMU command line the qemu source's settings make (Packer's -machine, the template's qemuargs with their variables' defaults). */
  const firmwareArgs = (qemu: Parsed, defaults: Record<string, unknown>): { binary: string; args: string[] } => ({
    binary: qemu['qemu_binary'] as string,
    args: [
      '-machine',
      `type=${qemu['machine_type'] as string},accel=${defaults[(qemu['accelerator'] as string).replace(/^\$\{var\.(\w+)\}$/, '$1')] as string}`,
      ...(qemu['qemuargs'] as string[][]).flat().map((a) => a.replace(/^\$\{var\.(\w+)\}$/, (_, v: string) => defaults[v] as string)),
    ],
  });

  it('gives the qemu source an aarch64 virt machine with a CPU TCG runs, AAVMF by -bios, virtio devices and the arm64 cloud image', async () => {
    const { parsed, qemu, defaults } = await sourcesOf(await arm64());
    expect(qemu).toMatchObject({
      qemu_binary: 'qemu-system-aarch64',
      machine_type: 'virt',
      disk_interface: 'virtio',
      net_device: 'virtio-net',
      qemuargs: [['-bios', '${var.qemu_firmware}'], ['-cpu', 'max']],
      accelerator: '${var.qemu_accelerator}',
    });
    expect(defaults).toMatchObject({
      qemu_firmware: '/usr/share/AAVMF/AAVMF_CODE.fd',
      qemu_accelerator: 'tcg',
      qemu_iso_url: 'https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-generic-arm64.qcow2',
    });
    expect(parsed['variable']['qemu_firmware'][0]['description']).toContain("Debian's qemu-efi-aarch64 package");
  });

  it('gives the AMI an arm64 filter and a Graviton instance type, unless the definition names one', async () => {
    const { aws, defaults } = await sourcesOf(await arm64());
    expect(aws['instance_type']).toBe('${var.aws_instance_type}');
    expect(defaults['aws_instance_type']).toBe('t4g.micro');
    expect(aws['source_ami_filter'][0]['filters']).toEqual({ architecture: 'arm64', name: 'debian-12-arm64-*', 'root-device-type': 'ebs', 'virtualization-type': 'hvm' });
    const given = structuredClone(await arm64());
    const step = given.phases.flatMap((p) => p.steps).find((s): s is StepOf<'cloudImage'> => s.kind === 'cloudImage' && s.builder === 'amazon-ebs')!;
    step.settings = { ...step.settings, instance_type: 'c7g.large' };
    expect((await sourcesOf(given)).aws['instance_type']).toBe('c7g.large');
  });

  it("starts Ubuntu's arm64 cloud image and AMI alike", async () => {
    for (const [name, url, ami] of [
      ['ubuntu-22.04', 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-arm64.img', 'ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-arm64-server-*'],
      ['ubuntu-24.04', 'https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-arm64.img', 'ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-*'],
    ] as const) {
      const { aws, defaults } = await sourcesOf(await arm64({ name, distro: 'ubuntu' }));
      expect(defaults['qemu_iso_url'], name).toBe(url);
      expect(aws['source_ami_filter'][0]['filters'], name).toMatchObject({ architecture: 'arm64', name: ami });
      expect(aws['ssh_username'], name).toBe('ubuntu');
    }
  });

  it('packer 1.6.6 validates it (HCL and JSON)', async () => {
    const ir = await arm64();
    const files = packerCompiler.compile(ir, { json: true, packerVersion: '1.6' });
    const dir = writeOut(files, 'packer-arm64');
    const vars = requiredVars(await parseHcl(files[`${ir.name}.pkr.hcl`]!));
    await expectValid(dir, `${ir.name}.pkr.hcl`, vars);
    await expectValid(dir, `${ir.name}.pkr.json`, vars);
  });

  it("the template's firmware arguments boot AAVMF to its boot manager under TCG", async (ctx) => {
    const { qemu, defaults } = await sourcesOf(await arm64());
    const { binary, args } = firmwareArgs(qemu, defaults);
    needTools(ctx, binary, defaults['qemu_firmware'] as string);
    // The serial console only: no disk, so the firmware ends in its boot manager (BdsDxe) and shell.
    const vm = execa(binary, [...args, '-m', '512M', '-nodefaults', '-display', 'none', '-monitor', 'none', '-serial', 'stdio'], { reject: false, all: true, stdin: 'ignore' });
    const console = await outputUntil(vm, 'BdsDxe', 60_000);
    expect(console, `${binary} ${args.join(' ')}`).toContain('UEFI firmware');
    expect(console).toContain('BdsDxe');
  }, 90_000);

  it('packer build starts QEMU with the qemu source as emitted (stopped while it waits for SSH)', async (ctx) => {
    const ir = await arm64();
    const { qemu, defaults } = await sourcesOf(ir);
    needTools(ctx, qemu['qemu_binary'] as string, defaults['qemu_firmware'] as string, 'qemu-img', 'xorriso');
    const files = packerCompiler.compile(ir, { packerVersion: '1.6' });
    const dir = writeOut(files, 'packer-arm64-build');
    // A blank disk: QEMU only has to start with Packer's drives (the disk, the seed CD) and devices. Debian's
    // packer 1.6.6 gives the CD no index, so it follows the disk on virt's virtio bus (upstream's v1.6.6 said
    // index=0, which QEMU refuses there: "drive with bus=0, unit=0 (index=0) exists"; fixed in 1.7.0).
    const disk = path.join(dir, 'blank.qcow2');
    await execa('qemu-img', ['create', '-q', '-f', 'qcow2', disk, '1G']);
    const sha256 = (await execa('sha256sum', [disk])).stdout.split(' ')[0]!;
    const required = requiredVars(await parseHcl(files[`${ir.name}.pkr.hcl`]!));
    const vars = [...required, '-var', `qemu_iso_url=${disk}`, '-var', `qemu_iso_checksum=sha256:${sha256}`];
    const build = execa('packer', ['build', '-only=qemu.qemu', ...vars, `${ir.name}.pkr.hcl`], { cwd: dir, env: { ...packerEnv(), PACKER_LOG: '1' }, extendEnv: false, reject: false, all: true });
    // SIGTERM, not SIGINT: packer 1.6.6's wrapper process hands only SIGTERM on to the packer doing the build
    // (a terminal's Ctrl-C reaches both). Packer then stops QEMU.
    const out = await outputUntil(build, 'Waiting for SSH to become available', 120_000);
    const launched = /Executing (\S*qemu-system-aarch64): (.*)/.exec(out);
    expect(launched, out.slice(-3000)).not.toBeNull();
    expect(launched![2]).toMatch(/"-machine", "type=virt,accel=tcg"/);
    expect(launched![2]).toMatch(/"-cpu", "max"/);
    expect(launched![2]).toContain('"-bios", "/usr/share/AAVMF/AAVMF_CODE.fd"');
    expect(launched![2]).toMatch(/"-drive", "file=[^"]*\.iso,media=cdrom"/);
    expect(out).not.toContain('Qemu failed to start');
    expect(out).toContain('Waiting for SSH to become available');
    const left = await execa('pgrep', ['-f', dir], { reject: false });
    expect(left.stdout, 'QEMU left running').toBe('');
  }, 180_000);
});
