// Property tests of the cloud-init backend's quoting: hostile strings must come
// back exactly — through the `yaml` package (YAML 1.2 and 1.1) for 10,000 of
// them in every context quote.ts writes, and for 10,000 whole compiled
// user-data files (file bodies, command strings, paths, descriptions); then,
// batched in one process each, through cloud-init itself: its user-data
// processing (MIME sniffing included) and its YAML loader for a sample of
// compiled files, and its runcmd shellify + /bin/sh for every value.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { cloudInitCompiler } from '../../src/compilers/cloud-init/index.js';
import { str } from '../../src/emit/cloud-init/quote.js';
import { LITERAL_NOTE } from '../../src/emit/shell/quote.js';
import { document, entries, map, seq } from '../../src/emit/cloud-init/yaml.js';
import type { Image } from '../../src/ir/schema.js';
import { fact, hostile, imageOf, parseYaml, phase, python, step, workspace } from '../compilers/cloud-init-support.js';

const RUNS = 10_000;
const SAMPLE = 200;

/** A document holding `v` in every context the backend writes a string in, with `v` as comments around. */
const contexts = (v: string): string =>
  document(
    '#cloud-config',
    [v, `x${v}`],
    entries([
      { key: 'a', value: str(v), comments: [v] },
      {
        key: 'write_files',
        value: seq([
          { value: map({ path: str('/etc/x'), content: str(v), owner: str(v) }), comments: [v] },
          { value: map({ path: str(v), content: str(`${v}\n`) }) },
        ]),
      },
      {
        key: 'runcmd',
        value: seq([
          { value: str(v), comments: [v] },
          { value: seq([str('imgc_file'), str(v), str(''), str(v)], { flow: true }), comments: [v] },
          { value: seq([str(v)], { flow: true }) },
          { value: seq([str(v), str(`${v} `), str(`\n${v}`)]) },
        ]),
      },
      { key: 'b', value: map({ c: map({ d: str(v) }) }) },
      { key: 'z', value: str('end') },
    ]),
    { spaced: true },
  );

const expected = (v: string) => ({
  a: v,
  write_files: [
    { path: '/etc/x', content: v, owner: v },
    { path: v, content: `${v}\n` },
  ],
  runcmd: [v, ['imgc_file', v, '', v], [v], [v, `${v} `, `\n${v}`]],
  b: { c: { d: v } },
  z: 'end',
});

/** `v` as one path component the IR takes (written as it resolves, at most 255 bytes: IMGC2003): its '/' as '_'. */
const part = (v: string): string => {
  let c = v.replace(/\//g, '_');
  if (c === '' || c === '.' || c === '..') c = `x${c}`;
  while (Buffer.byteLength(c) > 255) c = [...c].slice(0, -1).join('');
  return c;
};

/** An image that puts `v` in file bodies, commands, paths, link targets and descriptions. */
const imageWith = (v: string): Image =>
  imageOf([
    phase('customize', [
      step({ id: 'customize.1.file', kind: 'file', path: '/etc/motd', content: v, mode: '0644', description: v }),
      step({ id: 'customize.2.directory', kind: 'directory', path: '/srv/d', provides: [fact('path', '/srv/d')] }),
      step({ id: 'customize.3.file', kind: 'file', path: `/srv/d/${part(v)}`, content: v, requires: [fact('path', '/srv/d')] }),
      step({ id: 'customize.4.command', kind: 'command', run: v || 'true', creates: `/${part(v)}`, needsMounts: false, description: v }),
      step({ id: 'customize.5.symlink', kind: 'symlink', path: `/usr/local/bin/${part(v)}`, target: v || '.' }),
    ]),
  ]);

interface Parsed {
  write_files: { path: string; content: string }[];
  runcmd: (string | string[])[];
}

/** What the compiled user-data must read back as, for the values of `imageWith(v)`. */
const checkParsed = (cfg: Parsed, v: string): void => {
  expect(cfg.write_files).toEqual([{ path: '/etc/motd', content: v, permissions: '0644' }]);
  // Strings after the helpers are shellcheck's notes (a value holds $ or `), not calls.
  const calls = cfg.runcmd.slice(1).filter((e) => typeof e !== 'string' || e !== LITERAL_NOTE);
  expect(calls).toEqual([
    ['imgc_dir', '/srv/d', '', '', ''],
    ['imgc_file', `/srv/d/${part(v)}`, '', '', '', v],
    ['imgc_creates', `/${part(v)}`, '/bin/sh', '-ec', v || 'true'],
    ['imgc_symlink', `/usr/local/bin/${part(v)}`, v || '.'],
  ]);
};

const values = new Set<string>();
const compiled: { v: string; userData: string }[] = [];

describe('cloud-init quote.ts with the yaml package', () => {
  it(`reads back ${RUNS} hostile strings in every context, as YAML 1.2 and 1.1`, () => {
    fc.assert(
      fc.property(hostile, (v) => {
        values.add(v);
        const text = contexts(v);
        expect(text.startsWith('#cloud-config\n')).toBe(true);
        expect(text).not.toMatch(/mime-version:/i);
        expect(parseYaml(text)).toEqual(expected(v));
        expect(parseYaml(text, '1.1')).toEqual(expected(v));
      }),
      { numRuns: RUNS },
    );
  });

  it('quotes words a YAML reader takes for a boolean, a null or a number', () => {
    // "E0" is a float (NaN) to the yaml package's YAML 1.1 schema: found by the property above.
    for (const v of ['E0', 'e+5', 'E-12', 'e00', 'y', 'NO', 'off', '~', 'null', 'Null']) {
      expect(parseYaml(contexts(v)), v).toEqual(expected(v));
      expect(parseYaml(contexts(v), '1.1'), v).toEqual(expected(v));
    }
  });

  it(`compiles ${RUNS} images with hostile file bodies, commands and paths whose user-data reads back exactly`, () => {
    fc.assert(
      fc.property(hostile, (v) => {
        values.add(v);
        const userData = cloudInitCompiler.compile(imageWith(v), {})['user-data']!;
        expect(userData.startsWith('#cloud-config\n')).toBe(true);
        expect(userData).not.toMatch(/mime-version:/i);
        checkParsed(parseYaml(userData) as Parsed, v);
        if (compiled.length < SAMPLE) compiled.push({ v, userData });
      }),
      { numRuns: RUNS },
    );
  });
});

describe('cloud-init quote.ts with cloud-init', () => {
  const ws = workspace('quote');
  afterAll(() => ws.remove());

  it(`${SAMPLE} compiled user-data files and ${SAMPLE} documents of every context go through cloud-init's user-data processing and YAML loader unchanged`, async () => {
    const sample = compiled.length ? compiled : fc.sample(hostile, SAMPLE).map((v) => ({ v, userData: cloudInitCompiler.compile(imageWith(v), {})['user-data']! }));
    // cloud-init's path for user data: convert_string sniffs for MIME in the
    // first 4096 bytes, the processor finds the part's type from its first line,
    // and the cloud-config handler loads the part with util.load_yaml
    // (yaml.safe_load underneath).
    const code = `
import json, sys, tempfile
import yaml
from cloudinit import helpers, user_data, util
docs = json.load(sys.stdin)
d = tempfile.mkdtemp()
proc = user_data.UserDataProcessor(helpers.Paths({"cloud_dir": d, "run_dir": d}))
out = []
for doc in docs:
    raw = doc.encode("utf-8")
    parts = [p for p in proc.process(raw).walk() if not p.is_multipart()]
    payload = util.fully_decoded_payload(parts[0]) if len(parts) == 1 else None
    out.append({
        "mime": b"mime-version:" in raw[0:4096].lower(),
        "types": [p.get_content_type() for p in parts],
        "same": payload == doc,
        "cfg": util.load_yaml(payload) if payload is not None else None,
        "safe_load": yaml.safe_load(doc),
    })
json.dump(out, sys.stdout)
`;
    const docs = [...sample.map((s) => s.userData), ...sample.map((s) => contexts(s.v))];
    const results = (await python(code, docs, ws.out, ws.home)) as { mime: boolean; types: string[]; same: boolean; cfg: Parsed; safe_load: unknown }[];
    expect(results).toHaveLength(2 * sample.length);
    results.forEach((r, i) => {
      const v = sample[i % sample.length]!.v;
      expect(r.mime).toBe(false);
      expect(r.types).toEqual(['text/cloud-config']);
      expect(r.same).toBe(true);
      expect(r.safe_load).toEqual(r.cfg);
      if (i < sample.length) checkParsed(r.cfg, v);
      else expect(r.cfg).toEqual(expected(v));
    });
  }, 120_000);

  it("every generated value survives cloud-init's runcmd shellify and /bin/sh", async () => {
    const all = values.size ? [...values] : fc.sample(hostile, RUNS);
    expect(all.length).toBeGreaterThan(RUNS / 2);
    // runcmd list entries are joined into one /bin/sh script by util.shellify,
    // which single-quotes each word; run it once, printing each word NUL-ended.
    const code = `
import json, subprocess, sys
from cloudinit import util
vals = json.load(sys.stdin)
# (shellify concatenates strings quadratically: one call per 100 entries.)
with open("runcmd", "w") as f:
    for i in range(0, len(vals), 100):
        f.write(util.shellify([["printf", "%s\\\\0", v] for v in vals[i:i + 100]]))
r = subprocess.run(["/bin/sh", "runcmd"], capture_output=True, check=True)
json.dump(r.stdout.decode("utf-8").split("\\0")[:-1], sys.stdout)
`;
    expect(await python(code, all, ws.out, ws.home)).toEqual(all);
  }, 120_000);
});
