// The lineInFile and blockInFile kinds: their outputs for every target
// (golden and real tools), what the IR refuses (a regexp Python and awk read
// differently, a line its own regexp misses, a block holding its markers),
// the checker's reading (the file must be known), and the shell rendering run
// twice next to Ansible's lineinfile/blockinfile run twice on the same files:
// the same bytes, nothing changed the second time.
// The shell/Ansible harness is onSameFiles (./support.ts), shared with iniKey's test.
import { chmodSync, lstatSync, readlinkSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { validateImage } from '../../src/check/validate.js';
import { image } from '../../src/index.js';
import type { Image } from '../../src/ir/schema.js';
import { kinds } from '../../src/steps/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { imageOf, phase } from '../compilers/ansible-support.js';
import { onSameFiles, outputTests } from './support.js';

const definition = image('file-edits-test')
  .base(debian12())
  .customize((p) =>
    p
      .file('/etc/app.conf', { content: '# app\nPermitRootLogin yes\n', mode: '0640' })
      .lineInFile('/etc/app.conf', { line: 'PermitRootLogin no', regexp: '^#?PermitRootLogin[ \\t]' })
      .lineInFile('/etc/fstab', { line: 'tmpfs /tmp tmpfs defaults 0 0' })
      .lineInFile('/etc/app.conf', { regexp: '^# app$', state: 'absent' })
      .blockInFile('/etc/app.conf', 'Match User ops\n  X11Forwarding no\n', { marker: '# {mark} ops (imgc)' })
      .blockInFile('/etc/fstab', '', { state: 'absent' }),
  );
const ir = definition.toIR('file-edits-test.ts');

const codes = (bad: Image) => validateImage(bad).diagnostics.map((d) => `${d.code} ${d.message}`);
const oneStep = (s: object) => ({ ...ir, phases: [{ ...ir.phases[0]!, steps: [{ ...ir.phases[0]!.steps[1]!, ...s }] }] }) as Image;

describe('lineInFile and blockInFile', () => {
  it('check clean, and are valid IR', () => {
    expect(validateImage(ir).diagnostics).toEqual([]);
    // The fixture writes each file it edits with a file step first: only IMGC0015's warning, on those edits.
    const ds = checkImage(ir);
    expect(ds.filter((d) => d.code !== 'IMGC0015')).toEqual([]);
    expect(ds.map((d) => d.stepId)).toEqual(['customize.2.lineInFile', 'customize.4.lineInFile', 'customize.5.blockInFile']);
    expect(ds.every((d) => d.severity === 'warning')).toBe(true);
  });

  it('refuse a regexp that Python and awk read differently, or that misses its own line (IMGC1004)', () => {
    const bad: [object, string][] = [
      [{ regexp: '^\\s*PermitRootLogin' }, "'\\s' is read differently by Python and awk"],
      [{ regexp: '^x{2}', line: 'xx' }, 'intervals'],
      [{ regexp: '^[\\]]', line: ']' }, 'backslash inside [...]'],
      [{ regexp: '^[[:space:]]', line: ' ' }, 'classes are POSIX only'],
      [{ regexp: '^a*?', line: 'a' }, 'two quantifiers'],
      [{ regexp: '(?i)x', line: 'x' }, "'(?' extensions"],
      [{ regexp: '^Port ', line: 'PermitRootLogin no' }, "does not match the line 'PermitRootLogin no', so a second run would not find it"],
      [{ line: undefined }, 'a present line needs its text'],
    ];
    for (const [s, msg] of bad) {
      const got = codes(oneStep(s));
      expect(got, JSON.stringify(s)).toHaveLength(1);
      expect(got[0], JSON.stringify(s)).toMatch(/^IMGC1004 /);
      expect(got[0]).toContain(msg);
    }
  });

  it('refuse a block holding its own marker line, or a marker without {mark} (IMGC1004)', () => {
    const block = ir.phases[0]!.steps[4]!;
    const withBlock = (s: object) => ({ ...ir, phases: [{ ...ir.phases[0]!, steps: [{ ...block, ...s }] }] }) as Image;
    expect(codes(withBlock({ block: 'a\n# END ops (imgc)\n' }))).toEqual([expect.stringContaining('IMGC1004 invalid phases.0.steps.0.block: the block holds one of its own marker lines')]);
    expect(codes(withBlock({ marker: '# managed' }))).toEqual([expect.stringContaining('the marker holds {mark}')]);
  });

  it('need the file: an edit of a path nothing made is IMGC0001', () => {
    const later = image('x')
      .base(debian12())
      // @ts-expect-error -- the path is no known fact
      .customize((p) => p.lineInFile('/etc/nowhere.conf', { line: 'x' }))
      .toIR('x.ts');
    expect(checkImage(later).map((d) => d.code)).toEqual(['IMGC0001']);
  });

  outputTests(ir, 'steps-file-edits');
});

// The same edits on the same files, by the shell helpers and by Ansible's modules.
const cases = (root: string): Image => {
  const f = (n: string) => path.join(root, n) as `/${string}`;
  return imageOf([
    phase('edit', [
      { kind: 'lineInFile', path: f('a.conf'), line: 'PermitRootLogin no', regexp: '^#?PermitRootLogin[ \\t]', state: 'present' },
      { kind: 'lineInFile', path: f('a.conf'), regexp: '^foo$', state: 'absent' },
      { kind: 'lineInFile', path: f('b.conf'), line: 'added', state: 'present' },
      { kind: 'lineInFile', path: f('c.conf'), line: 'keep', state: 'present' },
      { kind: 'lineInFile', path: f('c.conf'), line: 'gone', state: 'absent' },
      { kind: 'blockInFile', path: f('d.conf'), block: 'new 1\n\nnew 3', marker: '# {mark} IMGC MANAGED BLOCK', state: 'present' },
      { kind: 'blockInFile', path: f('e.conf'), block: "it's $HOME `id` {{ x }}\n", marker: '## {mark} e', state: 'present' },
      { kind: 'blockInFile', path: f('f.conf'), block: '', marker: '# {mark} IMGC MANAGED BLOCK', state: 'absent' },
      { kind: 'lineInFile', path: f('g.link'), line: 'through the link', state: 'present' },
    ]),
  ]);
};
const before: Record<string, string> = {
  'a.conf': '# head\nPermitRootLogin yes\nfoo\n#PermitRootLogin prohibit-password\nlast line',
  'b.conf': 'x\r\ny',
  'c.conf': 'keep\ngone\nkept\n',
  'd.conf': 'top\n# BEGIN IMGC MANAGED BLOCK\nold\n# END IMGC MANAGED BLOCK\nbottom\n',
  'e.conf': 'no line break at the end',
  // Ends in a line break: blockinfile adds one to a last line without when it
  // finds no block, so its second run would change such a file (docs/file-edits.md).
  'f.conf': 'a\n# BEGIN IMGC MANAGED BLOCK\nx\n# END IMGC MANAGED BLOCK\nb\n',
  'g.conf': 'g\n',
};
const modesAndLinks = (dir: string): void => {
  chmodSync(path.join(dir, 'a.conf'), 0o600);
  symlinkSync('g.conf', path.join(dir, 'g.link'));
};

describe('lineInFile and blockInFile: shell and Ansible, twice each, on the same files', () => {
  const on = onSameFiles('file-edits', cases, before, modesAndLinks);
  const shIr = cases(on.sh);

  it('shell: changes what differs the first time, nothing the second; owner, mode and links stay', async () => {
    expect(await on.shell()).toEqual(new Map(on.ids.map((id, i) => [id, i === 3 ? 'unchanged' : 'changed'])));
    expect(on.contents(on.sh)).toMatchObject({
      'a.conf': '# head\nPermitRootLogin yes\nPermitRootLogin no\nlast line',
      'b.conf': 'x\r\ny\nadded\n',
      'c.conf': 'keep\nkept\n',
      'd.conf': 'top\n# BEGIN IMGC MANAGED BLOCK\nnew 1\n\nnew 3\n# END IMGC MANAGED BLOCK\nbottom\n',
      'e.conf': "no line break at the end\n## BEGIN e\nit's $HOME `id` {{ x }}\n## END e\n",
      'f.conf': 'a\nb\n',
      'g.conf': 'g\nthrough the link\n',
    });
    expect(statSync(path.join(on.sh, 'a.conf')).mode & 0o7777).toBe(0o600);
    expect(lstatSync(path.join(on.sh, 'g.link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(on.sh, 'g.link'))).toBe('g.conf');
    expect([...(await on.shell()).values()]).toEqual(on.ids.map(() => 'unchanged'));
  });

  it('ansible: the same bytes as the shell, and changed=0 the second time', async () => {
    await on.ansibleTwice();
    expect(on.contents(on.ansible)).toEqual(on.contents(on.sh));
    expect(statSync(path.join(on.ansible, 'a.conf')).mode & 0o7777).toBe(0o600);
  }, 300_000);

  it('verify: the edits hold after the run, and not before', () => {
    const fresh = path.join(on.root, 'fresh');
    on.seed(fresh);
    expect(on.failures(fresh).length).toBeGreaterThanOrEqual(6);
    expect(on.failures(on.sh)).toEqual([]);
  });

  it('describe and comment the steps', () => {
    const [line, absent] = shIr.phases[0]!.steps as [never, never];
    expect(kinds.lineInFile.describe(line)).toBe(`line 'PermitRootLogin no' in '${on.sh}/a.conf'`);
    expect(kinds.lineInFile.describe(absent)).toBe(`lines matching /^foo$/ removed from '${on.sh}/a.conf'`);
  });
});
