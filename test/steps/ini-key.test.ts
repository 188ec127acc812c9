// The iniKey kind: its outputs for every target (golden and real tools), what
// the IR refuses, the checker's reading (the file must be known), the shell
// helper against the real community.general.ini_file code on generated files
// (same bytes, same changed verdict), and the shell rendering run twice next
// to Ansible's ini_file run twice on the same files.
import { execa } from 'execa';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { helperCode } from '../../src/compilers/shell/helpers.js';
import { validateImage } from '../../src/check/validate.js';
import { word } from '../../src/emit/shell/quote.js';
import { image } from '../../src/index.js';
import type { Image } from '../../src/ir/schema.js';
import { kinds } from '../../src/steps/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { imageOf, phase } from '../compilers/ansible-support.js';
import { tempDir } from '../helpers/temp.js';
import { onSameFiles, outputTests } from './support.js';

const definition = image('ini-key-test')
  .base(debian12())
  .customize((p) =>
    p
      .file('/etc/app.ini', { content: '[main]\nport = 80\n', mode: '0640' })
      .iniKey('/etc/app.ini', 'port', { section: 'main', value: '8080' })
      .iniKey('/etc/app.ini', 'debug', { section: 'main', state: 'absent' })
      .iniKey('/etc/app.ini', 'level', { section: "it's $HOME", value: '`id` {{ x }}' })
      .file('/etc/default/app', { content: 'OPTS=""\n' })
      .iniKey('/etc/default/app', 'OPTS', { value: '"--verbose"', spaces: false }),
  );
const ir = definition.toIR('ini-key-test.ts');

const codes = (bad: Image) => validateImage(bad).diagnostics.map((d) => `${d.code} ${d.message}`);
const oneStep = (s: object) => ({ ...ir, phases: [{ ...ir.phases[0]!, steps: [{ ...ir.phases[0]!.steps[1]!, ...s }] }] }) as Image;

describe('iniKey', () => {
  it('checks clean, and is valid IR', () => {
    expect(validateImage(ir).diagnostics).toEqual([]);
    // The fixture writes each file it edits with a file step first: only IMGC0015's warning, on those edits.
    const ds = checkImage(ir);
    expect(ds.filter((d) => d.code !== 'IMGC0015')).toEqual([]);
    expect(ds.map((d) => d.stepId)).toEqual(['customize.2.iniKey', 'customize.3.iniKey', 'customize.4.iniKey', 'customize.6.iniKey']);
    expect(ds.every((d) => d.severity === 'warning')).toBe(true);
  });

  it('refuses keys and sections ini_file would misread, a present key without a value, an absent one with (IMGC1004)', () => {
    const bad: [object, string][] = [
      [{ key: 'a=b' }, "holds no '='"],
      [{ key: '#port' }, "starts with a blank, '#'"],
      [{ key: ' port' }, 'starts with a blank'],
      [{ key: 'port ' }, 'ends with a blank'],
      [{ key: '' }, 'not empty'],
      [{ section: 'a]b' }, "holds no ']'"],
      [{ section: '' }, 'leave it out'],
      [{ value: undefined }, 'a present key needs its value'],
      [{ state: 'absent' }, 'an absent key has no value'],
      [{ value: 'two\nlines' }, ''],
      [{ value: ' 8080' }, 'read back without it'],
    ];
    for (const [s, msg] of bad) {
      const got = codes(oneStep(s));
      expect(got, JSON.stringify(s)).toHaveLength(1);
      expect(got[0], JSON.stringify(s)).toMatch(/^IMGC1004 /);
      expect(got[0]).toContain(msg);
    }
  });

  it('needs the file: a key of a path nothing made is IMGC0001', () => {
    const later = image('x')
      .base(debian12())
      // @ts-expect-error -- the path is no known fact
      .customize((p) => p.iniKey('/etc/nowhere.ini', 'k', { value: 'v' }))
      .toIR('x.ts');
    expect(checkImage(later).map((d) => d.code)).toEqual(['IMGC0001']);
  });

  it('describes and comments its steps', () => {
    const [, port, debug, , , opts] = ir.phases[0]!.steps as unknown as [never, never, never, never, never, never];
    expect(kinds.iniKey.describe(port)).toBe("key 'port' in [main] of '/etc/app.ini'");
    expect(kinds.iniKey.describe(debug)).toBe("key 'debug' in [main] removed from '/etc/app.ini'");
    expect(kinds.iniKey.comment(opts)).toBe('OPTS="--verbose" of /etc/default/app');
  });

  outputTests(ir, 'steps-ini-key');
});

// ---- the shell helper against community.general.ini_file's own code ----------

/** The collection Debian's ansible package ships; the tests below need it. */
const iniFileModule = '/usr/lib/python3/dist-packages/ansible_collections/community/general/plugins/modules/ini_file.py';

interface Case {
  readonly text: string;
  readonly section?: string;
  readonly key: string;
  readonly value?: string;
  readonly state: 'present' | 'absent';
  readonly spaces: boolean;
}

// Lines that exercise the module's corners: sections that share a prefix,
// commented-out keys, keys that prefix others, a key without '=', blanks,
// CRLF line ends.
const line = fc.constantFrom(
  '[a]', '[b]', '[ab]', '[a] trailing', 'k = 1', 'k=2', ' k\t=  3 ', '#k = 4', ';k=5', '# k = 6', 'k', 'k =', 'k2 = 7', 'kk=8',
  'x = k', '# a comment', '; another', '', '  ', '\t', 'k = 1\r', 'other = y', '[b]\r',
);
const caseArb: fc.Arbitrary<Case> = fc
  .record({
    lines: fc.array(line, { maxLength: 9 }),
    eol: fc.boolean(),
    bom: fc.boolean(),
    section: fc.constantFrom(undefined, 'a', 'b', 'ab', 'new'),
    key: fc.constantFrom('k', 'k2', 'kk'),
    value: fc.constantFrom('1', '2', '', 'v w', '3 '),
    state: fc.constantFrom('present' as const, 'absent' as const),
    spaces: fc.boolean(),
  })
  .map((r) => ({
    text: (r.bom ? '\uFEFF' : '') + r.lines.join('\n') + (r.eol && r.lines.length ? '\n' : ''),
    ...(r.section !== undefined ? { section: r.section } : {}),
    key: r.key,
    ...(r.state === 'present' ? { value: r.value } : {}),
    state: r.state,
    spaces: r.spaces,
  }));

// Runs do_ini from the installed module on each case's file: the module's code, called as its main() does.
const oracle = `
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location('ini_file', ${JSON.stringify(iniFileModule)})
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
class Module:
    _diff = False
    check_mode = False
    tmpdir = sys.argv[2]
    def fail_json(self, **kw): raise SystemExit(json.dumps(kw))
    def atomic_move(self, src, dest): os.replace(src, dest)
out = []
for c in json.load(open(sys.argv[1])):
    changed = mod.do_ini(Module(), c['file'], c.get('section'), c['key'], [c['value']] if 'value' in c else [], c['state'], True, False, not c['spaces'], False, False)[0]
    out.append(changed)
print(json.dumps(out))
`;

describe.skipIf(!existsSync(iniFileModule))('the shell helper does what community.general.ini_file does', () => {
  it('same bytes and the same changed verdict, on generated files and keys', async () => {
    const t = tempDir('ini-key-oracle');
    const cases = fc.sample(caseArb, { numRuns: Number(process.env['IMGC_RUNS'] ?? 100), seed: Number(process.env['IMGC_SEED'] ?? 20261204) });
    const files = (who: string) => cases.map((_, i) => path.join(t, who, `${i}.ini`));
    for (const who of ['sh', 'py']) {
      mkdirSync(path.join(t, who));
      cases.forEach((c, i) => writeFileSync(files(who)[i]!, c.text));
    }
    writeFileSync(path.join(t, 'cases.json'), JSON.stringify(cases.map((c, i) => ({ ...c, file: files('py')[i] }))));
    writeFileSync(path.join(t, 'oracle.py'), oracle);
    mkdirSync(path.join(t, 'tmp'));
    const py = await execa('/usr/bin/python3', [path.join(t, 'oracle.py'), path.join(t, 'cases.json'), path.join(t, 'tmp')]);
    const pyChanged = JSON.parse(py.stdout) as boolean[];

    const script = [
      'set -eu',
      'imgc_tmp=',
      ...helperCode(['inifile']),
      ...cases.map(
        (c, i) =>
          `imgc_dirty=0; imgc_inifile ${word(files('sh')[i]!)} ${word(c.section ?? '')} ${word(c.key)} ${word(c.value ?? '')} ${c.state} ${word(c.spaces ? ' = ' : '=')}; echo "$imgc_dirty"`,
      ),
      '',
    ].join('\n');
    writeFileSync(path.join(t, 'run.sh'), script);
    const sh = await execa('sh', [path.join(t, 'run.sh')]);
    const shChanged = sh.stdout.split('\n').map((l) => l === '1');

    const differ = cases.flatMap((c, i) => {
      const a = readFileSync(files('sh')[i]!, 'utf8');
      const b = readFileSync(files('py')[i]!, 'utf8');
      return a === b && shChanged[i] === pyChanged[i] ? [] : [{ case: c, shell: a, iniFile: b, shellChanged: shChanged[i], iniFileChanged: pyChanged[i] }];
    });
    expect(differ.slice(0, 3)).toEqual([]);
    // The sample changes files and leaves files alone, both often.
    expect(pyChanged.filter(Boolean).length).toBeGreaterThan(cases.length / 4);
    expect(pyChanged.filter((x) => !x).length).toBeGreaterThan(cases.length / 8);
  }, 300_000);
});

// ---- shell and Ansible, twice each, on the same files ------------------------

const fileCases = (root: string): Image => {
  const f = (n: string) => path.join(root, n) as `/${string}`;
  return imageOf([
    phase('edit', [
      { kind: 'iniKey', path: f('a.ini'), section: 'main', key: 'port', value: '8080', state: 'present', spaces: true },
      { kind: 'iniKey', path: f('a.ini'), section: 'main', key: 'debug', state: 'absent', spaces: true },
      { kind: 'iniKey', path: f('a.ini'), section: 'new', key: 'level', value: "it's $HOME `id` {{ x }}", state: 'present', spaces: true },
      { kind: 'iniKey', path: f('b.conf'), key: 'OPTS', value: '"--verbose"', state: 'present', spaces: false },
      { kind: 'iniKey', path: f('c.ini'), section: 'x', key: 'same', value: '1', state: 'present', spaces: true },
    ]),
  ]);
};
const before: Record<string, string> = {
  'a.ini': '# head\n[main]\n#port = 80\ndebug = true\nport=81\n\n[other]\nport = 1',
  'b.conf': 'OPTS=""\r\nOTHER=1\r\n',
  'c.ini': '[x]\nsame = 1\n',
};

describe('iniKey: shell and Ansible, twice each, on the same files', () => {
  const on = onSameFiles('ini-key', fileCases, before, (dir) => chmodSync(path.join(dir, 'a.ini'), 0o600));

  it('shell: changes what differs the first time, nothing the second; owner and mode stay', async () => {
    expect(await on.shell()).toEqual(new Map(on.ids.map((id, i) => [id, i === 4 ? 'unchanged' : 'changed'])));
    expect(on.contents(on.sh)).toEqual({
      'a.ini': "# head\n[main]\nport = 8080\n\n[other]\nport = 1\n[new]\nlevel = it's $HOME `id` {{ x }}\n",
      'b.conf': 'OPTS="--verbose"\nOTHER=1\n',
      'c.ini': '[x]\nsame = 1\n',
    });
    expect(statSync(path.join(on.sh, 'a.ini')).mode & 0o7777).toBe(0o600);
    expect([...(await on.shell()).values()]).toEqual(on.ids.map(() => 'unchanged'));
  });

  it('ansible: the same bytes as the shell, and changed=0 the second time', async () => {
    await on.ansibleTwice();
    expect(on.contents(on.ansible)).toEqual(on.contents(on.sh));
    expect(statSync(path.join(on.ansible, 'a.ini')).mode & 0o7777).toBe(0o600);
  }, 300_000);

  it('verify: the keys hold after the run, and not before', () => {
    const fresh = path.join(on.root, 'fresh');
    on.seed(fresh);
    expect(on.failures(fresh)).toEqual([
      `port = 8080 in [main] of ${fresh}/a.ini`,
      `no key debug in [main] of ${fresh}/a.ini`,
      `level = it's $HOME \`id\` {{ x }} in [new] of ${fresh}/a.ini`,
      `OPTS = "--verbose" of ${fresh}/b.conf`,
    ]);
    expect(on.failures(on.sh)).toEqual([]);
  });
});
