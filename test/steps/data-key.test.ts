// The dataKey kind (tomlKey, yamlKey): its outputs for every target (golden
// and real tools), what the IR and the builder refuse, the checker's reading
// (the file and the parser's package must be known), TOML's dotted keys, and
// the edit itself run for real: the shell rendering and Ansible, twice each on
// the same files, read back by parsers other than the edit's (@iarna/toml,
// PyYAML); hostile keys and values through the shell's quoting; and the shell
// rendering in a real Debian root.
import { execa } from 'execa';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import TOML from '@iarna/toml';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { validateImage } from '../../src/check/validate.js';
import { compilers } from '../../src/compilers/index.js';
import { image } from '../../src/index.js';
import type { Image } from '../../src/ir/schema.js';
import { kinds } from '../../src/steps/index.js';
import { tomlKeyPath } from '../../src/steps/data-key.js';
import { verifyRoot } from '../../src/verify/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { imageOf, phase } from '../compilers/ansible-support.js';
import { outcomes, parseProgress, runSh } from '../compilers/shell-support.js';
import { tempDir } from '../helpers/temp.js';
import { expectValid, parseHcl, requiredVars, writeOut } from '../compilers/packer-support.js';
import { cannotChroot, freshRoot, phaseInRoot, removeRoot } from '../runtime-support.js';
import { onSameFiles, outputTests, write } from './support.js';

const containerd = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\nSystemdCgroup = false\n';
const definition = image('data-key-test')
  .base(debian12())
  .customize((p) =>
    p
      .packages(['python3-tomlkit', 'python3-ruamel.yaml'])
      .directory('/etc/containerd')
      .file('/etc/containerd/config.toml', { content: containerd, mode: '0644' })
      .tomlKey('/etc/containerd/config.toml', 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options.SystemdCgroup', { value: true })
      .tomlKey('/etc/containerd/config.toml', ['plugins', 'io.containerd.grpc.v1.cri', 'sandbox_image'], { value: "it's $(id) `x` {{ y }}" })
      .tomlKey('/etc/containerd/config.toml', 'version', { value: 2 })
      .file('/etc/kubelet.yaml', { content: 'kind: KubeletConfiguration\ncgroupDriver: cgroupfs\n' })
      .yamlKey('/etc/kubelet.yaml', 'cgroupDriver', { value: 'systemd' })
      .yamlKey('/etc/kubelet.yaml', ['evictionHard', 'memory.available'], { value: '100Mi' })
      .yamlKey('/etc/kubelet.yaml', 'failSwapOn', { state: 'absent' }),
  );
const ir = definition.toIR('data-key-test.ts');
const steps = ir.phases[0]!.steps;

const codes = (bad: Image) => validateImage(bad).diagnostics.map((d) => `${d.code} ${d.message}`);
const oneStep = (s: object) => ({ ...ir, phases: [{ ...ir.phases[0]!, steps: [{ ...steps[3]!, ...s }] }] }) as Image;

describe('dataKey', () => {
  it('checks clean, and is valid IR', () => {
    expect(validateImage(ir).diagnostics).toEqual([]);
    // The fixture writes each file it edits with a file step first: only IMGC0015's warning, on those edits.
    const ds = checkImage(ir);
    expect(ds.filter((d) => d.code !== 'IMGC0015')).toEqual([]);
    expect(ds.map((d) => d.stepId)).toEqual(['customize.4.dataKey', 'customize.5.dataKey', 'customize.6.dataKey', 'customize.8.dataKey', 'customize.9.dataKey', 'customize.10.dataKey']);
    expect(ds.every((d) => d.severity === 'warning')).toBe(true);
  });

  it('reads TOML dotted keys as TOML does, and refuses what is not one', () => {
    expect(tomlKeyPath('plugins."io.containerd.grpc.v1.cri".containerd')).toEqual(['plugins', 'io.containerd.grpc.v1.cri', 'containerd']);
    expect(tomlKeyPath(` a . 'b.c' . "d\\"\\u00e9\\n" `)).toEqual(['a', 'b.c', 'd"é\n']);
    for (const bad of ['', 'a.', '.a', 'a b', 'a."b', 'é', 'a..b', '"\\x"']) expect(tomlKeyPath(bad), bad).toBeUndefined();
    // What @iarna/toml reads from the same key, for a few keys.
    for (const k of ['a.b', 'a."b.c".d', "'x y'.z", '"\\t".q']) {
      const parsed = TOML.parse(`${k} = 1`);
      let node: unknown = parsed;
      for (const seg of tomlKeyPath(k)!) node = (node as Record<string, unknown>)[seg];
      expect(node, k).toBe(1);
    }
    expect(() => image('x').base(debian12()).customize((p) => p.file('/etc/a.toml', { content: '' }).tomlKey('/etc/a.toml', 'a.b c', { value: 1 }))).toThrow(
      /tomlKey\('\/etc\/a.toml'\): 'a.b c' is not a TOML dotted key/,
    );
  });

  it('refuses empty keys, untyped values, a present key without a value, an absent one with (IMGC1004)', () => {
    const bad: [object, string][] = [
      [{ key: [] }, ''],
      [{ key: ['a', ''] }, 'not empty'],
      [{ key: ['a\0b'] }, 'no NUL'],
      [{ value: 'x\uD800' }, 'lone surrogate'],
      [{ value: 2 ** 60 }, 'beyond'],
      [{ value: null }, ''],
      [{ value: undefined }, 'a present key needs its value'],
      [{ state: 'absent' }, 'an absent key has no value'],
      [{ format: 'ini' }, ''],
      [{ format: 'yaml', key: ['a\u2028b'] }, 'YAML 1.1 and 1.2 readers disagree'],
      [{ format: 'yaml', value: 'a\x85' }, 'YAML 1.1 and 1.2 readers disagree'],
    ];
    for (const [s, msg] of bad) {
      const got = codes(oneStep(s));
      expect(got, JSON.stringify(s)).toHaveLength(1);
      expect(got[0], JSON.stringify(s)).toMatch(/^IMGC1004 /);
      expect(got[0]).toContain(msg);
    }
  });

  it("needs the file and the parser's package: either missing is IMGC0001", () => {
    const noFile = image('x')
      .base(debian12())
      // @ts-expect-error -- the path is no known fact
      .customize((p) => p.packages(['python3-tomlkit']).tomlKey('/etc/nowhere.toml', 'k', { value: 1 }))
      .toIR('x.ts');
    expect(checkImage(noFile).map((d) => d.code)).toEqual(['IMGC0001']);
    const noParser = image('x')
      .base(debian12())
      .customize((p) => p.command("echo '{}' > /etc/k.yaml", { creates: '/etc/k.yaml', provides: { path: ['/etc/k.yaml'] } }).yamlKey('/etc/k.yaml', 'k', { value: 1 }))
      .toIR('x.ts');
    const d = checkImage(noParser);
    expect(d.map((x) => x.code)).toEqual(['IMGC0001']);
    expect(d[0]!.message).toContain('python3-ruamel.yaml');
  });

  it('describes and comments its steps', () => {
    expect(kinds.dataKey.describe(steps[3] as never)).toBe(`TOML key 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options.SystemdCgroup' of '/etc/containerd/config.toml'`);
    expect(kinds.dataKey.comment(steps[8] as never)).toBe('evictionHard."memory.available" = "100Mi" in /etc/kubelet.yaml');
    expect(kinds.dataKey.describe(steps[9] as never)).toBe("YAML key 'failSwapOn' removed from '/etc/kubelet.yaml'");
  });

  outputTests(ir, 'steps-data-key');

  it.each(['shell', 'ansible'] as const)('packer: the template with the %s provisioner passes packer validate', async (provisioner) => {
    const files = compilers.packer.compile(ir, { packerVersion: '1.6', provisioner } as never);
    const dir = writeOut(files, `data-key-packer-${provisioner}`);
    // The null builder of an existing host wants one way to log in: a password here.
    await expectValid(dir, '.', [...requiredVars(await parseHcl(files['data-key-test.pkr.hcl'] ?? '')), '-var', 'existing_host_ssh_password=example']);
  }, 120_000);
});

// ---- the edit, for real -----------------------------------------------------

/** The file as a parser other than the edit's reads it: @iarna/toml, or PyYAML (safe_load). */
const readBack = async (file: string): Promise<unknown> => {
  if (file.endsWith('.toml')) return TOML.parse(readFileSync(file, 'utf8'));
  const r = await execa('/usr/bin/python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1], encoding="utf-8"))))', file]);
  return JSON.parse(r.stdout);
};

const fileCases = (root: string): Image => {
  const f = (n: string) => path.join(root, n) as `/${string}`;
  const k = (format: 'toml' | 'yaml', file: string, key: string[], value?: string | number | boolean) => ({
    kind: 'dataKey' as const,
    format,
    path: f(file),
    key,
    ...(value === undefined ? { state: 'absent' as const } : { value, state: 'present' as const }),
  });
  return imageOf([
    phase('edit', [
      k('toml', 'config.toml', ['plugins', 'io.containerd.grpc.v1.cri', 'containerd', 'runtimes', 'runc', 'options', 'SystemdCgroup'], true),
      k('toml', 'config.toml', ['plugins', 'io.containerd.grpc.v1.cri', 'registry', 'config_path'], '/etc/containerd/certs.d'),
      k('toml', 'config.toml', ['metrics', 'address']),
      k('toml', 'same.toml', ['a', 'b'], 1),
      k('yaml', 'kubelet.yaml', ['cgroupDriver'], 'systemd'),
      k('yaml', 'kubelet.yaml', ['evictionHard', 'memory.available'], "it's $(id) `x` {{ y }}\né"),
      k('yaml', 'kubelet.yaml', ['failSwapOn']),
      k('yaml', 'link.yaml', ['port'], 8080),
    ]),
  ]);
};
const before: Record<string, string> = {
  'config.toml': [
    '# containerd, as Debian ships it',
    'version = 2',
    '',
    '[plugins]',
    '  [plugins."io.containerd.grpc.v1.cri"]',
    '    sandbox_image = "registry.k8s.io/pause:3.9"  # the pause image',
    '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
    '      SystemdCgroup = false',
    '',
    '[metrics]',
    '  address = ""',
    '',
  ].join('\n'),
  'same.toml': '[a]\nb = 1 # already\n',
  'kubelet.yaml': '# kubelet\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: cgroupfs   # to change\nfailSwapOn: false\n',
  'target.yaml': 'port: 80\n',
};

/** The parsers the edit imports, as the Debian packages install them; the tests that run the edit need them. */
const noParsers = !['tomlkit', 'ruamel/yaml'].every((m) => existsSync(`/usr/lib/python3/dist-packages/${m}/__init__.py`));

describe.skipIf(noParsers)('dataKey: shell and Ansible, twice each, on the same files', () => {
  const on = onSameFiles('data-key', fileCases, before, (dir) => {
    chmodSync(path.join(dir, 'config.toml'), 0o600);
    symlinkSync('target.yaml', path.join(dir, 'link.yaml'));
  });

  it('shell: changes what differs the first time, nothing the second; comments, owner, mode and links stay', async () => {
    expect(await on.shell()).toEqual(new Map(on.ids.map((id, i) => [id, i === 3 ? 'unchanged' : 'changed'])));
    const got = on.contents(on.sh);
    expect(got['config.toml']).toContain('# the pause image');
    expect(got['config.toml']).toContain('# containerd, as Debian ships it');
    expect(got['kubelet.yaml']).toMatch(/^cgroupDriver: systemd +# to change$/m);
    expect(got['same.toml']).toBe(before['same.toml']);
    expect(await readBack(path.join(on.sh, 'config.toml'))).toEqual({
      version: 2,
      plugins: {
        'io.containerd.grpc.v1.cri': {
          sandbox_image: 'registry.k8s.io/pause:3.9',
          containerd: { runtimes: { runc: { options: { SystemdCgroup: true } } } },
          registry: { config_path: '/etc/containerd/certs.d' },
        },
      },
      metrics: {},
    });
    expect(await readBack(path.join(on.sh, 'kubelet.yaml'))).toEqual({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      cgroupDriver: 'systemd',
      evictionHard: { 'memory.available': "it's $(id) `x` {{ y }}\né" },
    });
    expect(await readBack(path.join(on.sh, 'target.yaml'))).toEqual({ port: 8080 });
    expect(lstatSync(path.join(on.sh, 'link.yaml')).isSymbolicLink()).toBe(true);
    expect(statSync(path.join(on.sh, 'config.toml')).mode & 0o7777).toBe(0o600);
    expect([...(await on.shell()).values()]).toEqual(on.ids.map(() => 'unchanged'));
  });

  it('ansible: the same bytes as the shell, and changed=0 the second time', async () => {
    await on.ansibleTwice();
    expect(on.contents(on.ansible)).toEqual(on.contents(on.sh));
    expect(statSync(path.join(on.ansible, 'config.toml')).mode & 0o7777).toBe(0o600);
  }, 300_000);

  it('verify: the keys hold after the run, and not before', () => {
    const fresh = path.join(on.root, 'fresh');
    on.seed(fresh);
    expect(on.failures(fresh)).toEqual([
      `plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options.SystemdCgroup = true in ${fresh}/config.toml`,
      `plugins."io.containerd.grpc.v1.cri".registry.config_path = "/etc/containerd/certs.d" in ${fresh}/config.toml`,
      `no key metrics.address in ${fresh}/config.toml`,
      `cgroupDriver = "systemd" in ${fresh}/kubelet.yaml`,
      `evictionHard."memory.available" = ${JSON.stringify("it's $(id) `x` {{ y }}\né")} in ${fresh}/kubelet.yaml`,
      `no key failSwapOn in ${fresh}/kubelet.yaml`,
      `port = 8080 in ${fresh}/link.yaml`,
    ]);
    expect(on.failures(on.sh)).toEqual([]);
  });
});

// ---- hostile keys and values through the shell's quoting -------------------

const hostile = fc.oneof(
  fc.constantFrom("'", '"', '\\', '$(id)', '`id`', '${HOME}', '\n', '\r\n', '\t', ' ', '#', ':', '- x', '[a]', '{{ x }}', '%s', 'é', '日本', '😀', '\u2028', 'true', '1', 'null', '~'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
);
const text = fc.array(hostile, { minLength: 1, maxLength: 4 }).map((a) => a.join(''));
// U+0085, U+2028 and U+2029 are refused in YAML (the IR test above); TOML takes them.
const noBreaks = (t: string) => t.replace(/[\x85\u2028\u2029]/g, '_');
const caseArb = fc.record({
  format: fc.constantFrom('toml' as const, 'yaml' as const),
  key: fc.array(text, { minLength: 1, maxLength: 3 }),
  value: fc.oneof(text, fc.integer({ min: -1e9, max: 1e9 }), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).filter((d) => !Number.isInteger(d))),
}).map((c) => (c.format === 'toml' ? c : { ...c, key: c.key.map(noBreaks), value: typeof c.value === 'string' ? noBreaks(c.value) : c.value }));

describe.skipIf(noParsers)('dataKey: hostile keys and values survive the shell rendering', () => {
  it('each file reads back, with another parser, with the value at the key', async () => {
    const t = tempDir('data-key-hostile');
    const cases = fc.sample(caseArb, { numRuns: Number(process.env['IMGC_RUNS'] ?? 40), seed: Number(process.env['IMGC_SEED'] ?? 20261204) });
    const files = cases.map((c, i) => path.join(t, 'files', `${i}.${c.format}`));
    mkdirSync(path.join(t, 'files'));
    files.forEach((f, i) => writeFileSync(f, cases[i]!.format === 'toml' ? '# a comment\n' : '# a comment\n{}\n'));
    const hostileIr = imageOf([phase('edit', cases.map((c, i) => ({ kind: 'dataKey', format: c.format, path: files[i]!, key: c.key, value: c.value, state: 'present' })))]);
    expect(validateImage(hostileIr).diagnostics).toEqual([]);
    write(path.join(t, 'out'), compilers.shell.compile(hostileIr, {}));
    const r = await runSh(path.join(t, 'out', 'phases', '01-edit.sh'));
    expect(r.exitCode, r.stderr).toBe(0);
    expect([...outcomes(parseProgress(r.stdout)).values()]).toEqual(cases.map(() => 'changed'));
    const wrong = [];
    for (const [i, c] of cases.entries()) {
      let node = (await readBack(files[i]!)) as Record<string, unknown>;
      for (const k of c.key.slice(0, -1)) node = node[k] as Record<string, unknown>;
      const got = node[c.key[c.key.length - 1]!];
      if (got !== c.value) wrong.push({ case: c, got, file: readFileSync(files[i]!, 'utf8') });
    }
    expect(wrong.slice(0, 3)).toEqual([]);
    expect(verifyRoot(hostileIr, '/').failures).toEqual([]);
  }, 120_000);
});

// ---- in a real Debian root ----------------------------------------------------

const rootBase = debian12({ include: ['python3-tomlkit', 'python3-ruamel.yaml'] });
const rootIr = image('data-key-root')
  .base(rootBase)
  .customize((p) =>
    p
      .directory('/etc/containerd')
      .file('/etc/containerd/config.toml', { content: containerd })
      .tomlKey('/etc/containerd/config.toml', 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options.SystemdCgroup', { value: true })
      .file('/etc/kubelet.yaml', { content: 'kind: KubeletConfiguration\ncgroupDriver: cgroupfs\n' })
      .yamlKey('/etc/kubelet.yaml', 'cgroupDriver', { value: 'systemd' }),
  )
  .toIR('data-key-root.ts');

describe.skipIf(cannotChroot)("dataKey: the shell rendering in a real Debian root, with the root's own parsers", () => {
  let root: string;
  const files = compilers.shell.compile(rootIr, {});
  beforeAll(async () => {
    root = await freshRoot(rootIr, 'data-key-root');
  }, 900_000);
  afterAll(() => removeRoot(root));

  it('edits the first time, changes nothing the second, and verify agrees', async () => {
    // The file steps write what the edits change: the checker's warning (IMGC0015), nothing else.
    expect(checkImage(rootIr).map((d) => `${d.code}@${d.stepId}`)).toEqual(['IMGC0015@customize.3.dataKey', 'IMGC0015@customize.5.dataKey']);
    const first = await phaseInRoot(root, files, 'phases/01-customize.sh');
    expect(first.exitCode, first.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${first.stdout}\n`)).values()]).toEqual(['changed', 'changed', 'changed', 'changed', 'changed']);
    expect(await readBack(path.join(root, 'etc/containerd/config.toml'))).toEqual({
      plugins: { 'io.containerd.grpc.v1.cri': { containerd: { runtimes: { runc: { options: { SystemdCgroup: true } } } } } },
    });
    expect(await readBack(path.join(root, 'etc/kubelet.yaml'))).toEqual({ kind: 'KubeletConfiguration', cgroupDriver: 'systemd' });
    expect(verifyRoot(rootIr, root).failures).toEqual([]);
    // Again without the file steps (each would write its whole content back, for the edits to change again).
    const before = ['etc/containerd/config.toml', 'etc/kubelet.yaml'].map((f) => readFileSync(path.join(root, f), 'utf8'));
    const edits = { ...rootIr, phases: [{ ...rootIr.phases[0]!, steps: rootIr.phases[0]!.steps.filter((x) => x.kind === 'dataKey') }] };
    const second = await phaseInRoot(root, compilers.shell.compile(edits, {}), 'phases/01-customize.sh');
    expect(second.exitCode, second.stderr).toBe(0);
    expect([...outcomes(parseProgress(`${second.stdout}\n`)).values()]).toEqual(['unchanged', 'unchanged']);
    expect(['etc/containerd/config.toml', 'etc/kubelet.yaml'].map((f) => readFileSync(path.join(root, f), 'utf8'))).toEqual(before);
  }, 300_000);
});
