// The shared YAML model (src/emit/yaml.ts): one node tree, rendered by both
// targets' dialects, differs only where a dialect decides (comment wrapping,
// flow style), and parses back to the same data.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as Y from '../../src/emit/yaml.js';
import * as ansible from '../../src/emit/ansible/yaml.js';
import { str as aStr, word } from '../../src/emit/ansible/quote.js';
import * as cloud from '../../src/emit/cloud-init/yaml.js';
import { str as cStr } from '../../src/emit/cloud-init/quote.js';

const long = 'a comment long enough that a dialect which wraps comments at a hundred columns has to put it on two lines';

describe('one YAML model for ansible and cloud-init', () => {
  it('the same shape renders in both dialects and reads back the same', () => {
    const a = ansible.document(ansible.map([ansible.entry('packages', ansible.seq(['curl', 'jq'].map(aStr), { flow: true }), [long]), ansible.entry('name', word('x'))]));
    const c = cloud.document('#cloud-config', [], cloud.entries([{ key: 'packages', value: cloud.seq(['curl', 'jq'].map(cStr), { flow: true }), comments: [long] }, { key: 'name', value: cStr('x') }]));
    expect(parse(a)).toEqual({ packages: ['curl', 'jq'], name: 'x' });
    expect(parse(c)).toEqual(parse(a));
    // ansible wraps comments at 100 columns, cloud-init keeps one line per comment
    expect(a.split('\n').filter((l) => l.startsWith('#'))).toHaveLength(2);
    expect(c.split('\n').filter((l) => l.startsWith('#'))).toHaveLength(2); // `#cloud-config` and the comment
  });

  it('a cloud-init flow sequence too long for one line falls back to block style, nested ones included', () => {
    const many = Array.from({ length: 30 }, (_, i) => cStr(`item-${i}`));
    const text = cloud.document('#cloud-config', [], cloud.map({ runcmd: cloud.seq([cloud.seq(many, { flow: true }), cloud.seq([cStr('ls')], { flow: true })]) }));
    expect(text).toContain('  - - item-0\n');
    expect(text).toContain('  - [ls]\n');
    expect(parse(text).runcmd[1]).toEqual(['ls']);
  });

  it('spaced sequences and noqa markers are the model’s: any dialect renders them', () => {
    const plain = (s: string): Y.ScalarBase => ({ kind: 'scalar', render: () => s });
    const { renderSeq } = Y.renderer<Y.ScalarBase>({ key: (k) => k, comment: (c) => `# ${c}`, flow: () => undefined });
    const tasks = Y.seq([{ value: Y.map({ name: plain('one') }), noqa: ['no-changed-when'] }, { value: Y.map({ name: plain('two') }), comments: ['second'] }], { spaced: true });
    expect(renderSeq(tasks, 0).join('\n')).toBe('- name: one  # noqa: no-changed-when\n\n# second\n- name: two');
    expect(ansible.document(ansible.seq([ansible.map({ name: word('one') })]))).toBe('---\n- name: one\n');
  });
});
