// Property tests of the ansible backend's quoting module. 10,000 hostile
// strings go through quote.ts in every context the backend uses (mapping value
// at several depths, sequence item, top-level variable); the `yaml` package must
// read each back exactly, the lines must satisfy yamllint's limits, and then
// Ansible itself must return every one unchanged — loaded by its own YAML
// loader, passed through its templar as task arguments (so `{{ }}` left
// unprotected would be evaluated or fail), and, for a sample, written by
// ansible.builtin.copy to files whose bytes are compared.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bool, comment, defuse, label, unsafe, word } from '../../src/emit/ansible/quote.js';
import { document, map, seq } from '../../src/emit/ansible/yaml.js';
import { marker } from '../../src/core/variables.js';
import { hostile, parseYaml, run, workspace, writeFiles } from '../compilers/ansible-support.js';

const RUNS = 10_000;

/** One document holding `v` in each context the compiler writes user data in. */
const contexts = (v: string): string =>
  document(
    seq(
      [
        map({
          name: label('Contexts'),
          'ansible.builtin.debug': map({ msg: unsafe(v) }),
          vars: map({ nested: map({ deeper: map({ value: unsafe(v) }) }), list: seq([unsafe(v), unsafe(v)]) }),
        }),
      ],
      { spaced: true },
    ),
  );

const topLevel = (v: string): string => document(map({ imgc_value: unsafe(v), imgc_after: unsafe('after') }));

const yamllintClean = (text: string): void => {
  for (const line of text.split('\n')) {
    expect([...line].length, `line too long: ${JSON.stringify(line)}`).toBeLessThanOrEqual(160);
    expect(line, 'trailing white space').not.toMatch(/[ \t]$/);
  }
};

const collected: string[] = [];

describe('ansible quote.ts with the yaml package', () => {
  it(`reads back ${RUNS} hostile strings in every context, within yamllint's limits`, () => {
    fc.assert(
      fc.property(hostile, (v) => {
        collected.push(v);
        const text = contexts(v);
        yamllintClean(text);
        const [t] = parseYaml(text) as [{ name: string; 'ansible.builtin.debug': { msg: string }; vars: { nested: { deeper: { value: string } }; list: string[] } }];
        expect(t['ansible.builtin.debug'].msg).toBe(v);
        expect(t.vars.nested.deeper.value).toBe(v);
        expect(t.vars.list).toEqual([v, v]);
        const top = topLevel(v);
        yamllintClean(top);
        expect(parseYaml(top)).toEqual({ imgc_value: v, imgc_after: 'after' });
      }),
      { numRuns: RUNS },
    );
  });

  it('a Jinja expression beside a variable folds only between its terms, never inside a literal', () => {
    fc.assert(
      fc.property(hostile, fc.integer({ min: 0, max: 40 }), (v, column) => {
        const lines = unsafe(`${v}/etc/apt/keyrings/kubernetes-apt-keyring.asc${marker('imgc_x')}${v}`).render({ column, indent: column + 2, mappingValue: true }).split('\n');
        for (const line of lines.slice(0, -1)) expect(line, 'a fold between terms').toMatch(/ ~$/);
        lines.forEach((line, i) => expect([...line].length + (i === 0 ? column : 0)).toBeLessThanOrEqual(160));
      }),
      // CI's seed -58145702 found the first: a literal's pieces were cut by characters, and 56 line breaks escaped are 112 columns.
      { numRuns: 2_000, examples: [['\n'.repeat(56), 31], ['"'.repeat(200), 40], ['\t'.repeat(130), 0]] },
    );
  });

  it('labels are one line without template delimiters; comments are one comment line', () => {
    fc.assert(
      fc.property(hostile, (v) => {
        const l = label(v).render({ column: 8, indent: 2, mappingValue: true });
        expect(l).not.toContain('\n');
        const read = (parseYaml(`name: ${l}\n`) as { name: string }).name;
        expect(read).toBe(defuse(v));
        expect(read).not.toMatch(/\{\{|\{%|\{#/);
        const c = comment(v);
        expect(c).toMatch(/^#( |$)/);
        expect(c).not.toMatch(/[\n\r\u0085\u2028\u2029]/);
        expect(parseYaml(`a: 1\n${c}\nb: 2\n`)).toEqual({ a: 1, b: 2 });
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('ansible quote.ts with Ansible', () => {
  it('ansible-playbook returns every value unchanged as task arguments (mapping values, list items, beside a variable)', async () => {
    // The values fc.assert generated above (or, when this test runs alone, as many fresh ones).
    const values = [...new Set(collected.length ? collected : fc.sample(hostile, RUNS))];
    expect(values.length).toBeGreaterThan(RUNS / 2);
    const ws = workspace('quote');
    const BATCH = 500;
    const tasks = [];
    for (let i = 0; i < values.length; i += BATCH) {
      const chunk = values.slice(i, i + BATCH);
      tasks.push(
        map({ name: label(`Map ${i}`), 'ansible.builtin.debug': map({ msg: map(Object.fromEntries(chunk.map((v, j) => [`v${j}`, unsafe(v)]))) }) }),
        map({ name: label(`List ${i}`), 'ansible.builtin.debug': map({ msg: seq(chunk.map(unsafe)) }) }),
        // Beside a variable reference the text is a Jinja expression's literal parts instead.
        map({ name: label(`Variable ${i}`), 'ansible.builtin.debug': map({ msg: seq(chunk.map((v) => unsafe(`${v}${marker('imgc_x')}${v}`))) }) }),
      );
    }
    const playbook = document(seq([map({ name: label('Round trip'), hosts: word('all'), gather_facts: bool(false), vars: map({ imgc_x: unsafe('{{ x }}') }), tasks: seq(tasks, { spaced: true }) })]));
    writeFiles(ws.out, { 'play.yml': playbook });
    const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'play.yml'], ws.out, ws.home, { ANSIBLE_STDOUT_CALLBACK: 'json' });
    expect(r.exitCode, r.all).toBe(0);
    ws.remove();
    const out = JSON.parse(r.stdout) as { plays: { tasks: { hosts: { localhost: { msg: unknown } } }[] }[] };
    const got = out.plays[0]!.tasks.map((t) => t.hosts.localhost.msg);
    let k = 0;
    for (let i = 0; i < values.length; i += BATCH) {
      const chunk = values.slice(i, i + BATCH);
      expect(got[k++]).toEqual(Object.fromEntries(chunk.map((v, j) => [`v${j}`, v])));
      expect(got[k++]).toEqual(chunk);
      expect(got[k++]).toEqual(chunk.map((v) => `${v}{{ x }}${v}`));
    }
  }, 300_000);

  it('quotes words a YAML reader takes for a boolean, a null or a number', () => {
    // "E0" is a float (NaN) to the yaml package's YAML 1.1 schema (PyYAML's needs a dot).
    for (const v of ['E0', 'e+5', 'E-12', 'e00', 'y', 'NO', 'off', '~', 'null', 'Null']) {
      // Values are always quoted; labels (task names) are plain where that reads back the same.
      const [t] = parseYaml(contexts(v), '1.1') as [{ 'ansible.builtin.debug': { msg: string }; vars: { list: string[] } }];
      expect(t['ansible.builtin.debug'].msg, v).toBe(v);
      expect(t.vars.list, v).toEqual([v, v]);
      const l = label(v).render({ column: 8, indent: 2, mappingValue: true });
      expect((parseYaml(`name: ${l}\n`, '1.1') as { name: string }).name, v).toBe(v);
    }
  });

  it('a value beside a variable stays a string when it reads as a Python literal', async () => {
    // Ansible literal_evals a template's result that starts with [ or { (or is True/False).
    const cases = [`[] #${marker('imgc_x')}[] #`, `{"k": "${marker('imgc_x')}"}`, marker('imgc_t'), `[${marker('imgc_n')}]`];
    const ws = workspace('literal');
    const playbook = document(
      seq([
        map({
          name: label('Literals'),
          hosts: word('all'),
          gather_facts: bool(false),
          vars: map({ imgc_x: unsafe('{{ x }}'), imgc_t: unsafe('True'), imgc_n: unsafe('1, 2') }),
          tasks: seq([map({ name: label('Echo'), 'ansible.builtin.debug': map({ msg: seq(cases.map(unsafe)) }) })]),
        }),
      ]),
    );
    writeFiles(ws.out, { 'play.yml': playbook });
    const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'play.yml'], ws.out, ws.home, { ANSIBLE_STDOUT_CALLBACK: 'json' });
    expect(r.exitCode, r.all).toBe(0);
    ws.remove();
    const out = JSON.parse(r.stdout) as { plays: { tasks: { hosts: { localhost: { msg: unknown } } }[] }[] };
    expect(out.plays[0]!.tasks[0]!.hosts.localhost.msg).toEqual(['[] #{{ x }}[] #', '{"k": "{{ x }}"}', 'True', '[1, 2]']);
  }, 120_000);

  it('ansible.builtin.copy writes hostile contents byte for byte', async () => {
    const sample = [
      '',
      'no newline at the end',
      '{{ lookup("pipe", "id") }}\n{% raw %}{{ x }}{% endraw %}\n{# c #}\n',
      '$HOME `id` ${x} %{y}\n',
      '  leading spaces\n\ttab\n\n\n\ntrailing blanks  \n\n',
      '\r\n\u2028\u0085\ufeff😀 שלום\n',
      ...fc.sample(hostile, { numRuns: 6, seed: 42 }),
      fc.sample(hostile, { numRuns: 200, seed: 7 }).join(''),
    ];
    const ws = workspace('copy');
    const dir = path.join(ws.root, 'files');
    const tasks = sample.map((v, i) =>
      map({ name: label(`Copy ${i}`), 'ansible.builtin.copy': map({ content: unsafe(v), dest: unsafe(path.join(dir, String(i))), mode: unsafe('0644') }) }),
    );
    tasks.unshift(map({ name: label('Dir'), 'ansible.builtin.file': map({ path: unsafe(dir), state: word('directory'), mode: unsafe('0755') }) }));
    writeFiles(ws.out, { 'play.yml': document(seq([map({ name: label('Copy'), hosts: word('all'), gather_facts: bool(false), tasks: seq(tasks) })])) });
    const r = await run('ansible-playbook', ['-i', 'localhost,', '-c', 'local', 'play.yml'], ws.out, ws.home);
    expect(r.exitCode, r.all).toBe(0);
    try {
      sample.forEach((v, i) => expect(readFileSync(path.join(dir, String(i))), `value ${i}: ${JSON.stringify(v)}`).toEqual(Buffer.from(v, 'utf8')));
    } finally {
      ws.remove();
    }
  }, 300_000);
});
