// The packer backend's quoting module against real HCL parsers: @cdktf/hcl2json
// (HashiCorp's HCL Go parser, compiled to WASM) for 10,000 hostile strings,
// and Packer 1.6.6 itself (packer console) for a smaller batch in both
// syntaxes, .pkr.hcl and .pkr.json.
import { parse } from '@cdktf/hcl2json';
import { execa } from 'execa';
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  hclCommentText,
  hclString,
  hclTemplate,
  hclUnrepresentable,
  jsonString,
  jsonTemplate,
  jsonTemplateText,
  UnrepresentableString,
} from '../../src/compilers/packer/quote.js';
import { tempDir } from '../helpers/cli.js';

/** Pieces that mean something to HCL, Packer, shells, YAML or Unicode rendering. */
const pieces = [
  '${', '%{', '$${', '%%{', '$$${', '%%%{', '$', '%', '$$', '%%', '{', '}', '~}', '${~', '%{~',
  '${var.x}', '${path.root}', '%{ if true }', '%{ endif }', '%{ for x in y }', '{{ .Path }}', '{{', '}}', '{% raw %}', '{#',
  '\\', '\\\\', '\\n', '\\u0041', '\\$', '"', "'", '`', '$(id)', '#', '//', '/*', '*/', '<<EOF', 'EOF', '=', ' ', '',
  '\n', '\r', '\r\n', '\t', '\n\n', '$\r', '%\r', '$$%\r', '\r$${',
  'é', 'ß', '中文', 'שלום', 'مرحبا', '\u202e', '\u200f', '\u2066', '\u2069', '\u200b', '\u200d', '\ufeff', '\u2028', '\u2029',
  '\u0085', '\u00a0', '\u3000', '\ue000', '\u{f0000}', '😀', '👩‍👩‍👧', '🏳️‍🌈', '𝔘', '\u{10ffff}', '\u{e0041}',
  'q\u0301', 'a\u0328\u0301', '\u0301', '\u0338', '\u0323\u0301', '\n\u0301', '\t\u0308', '\u200b\u0301', '\\\u0301', '"\u0338',
  'e\u0301', '=\u0338', '\u212b', '\uff21', '\u{e0041}\u0323', '\u{10045}\u0301', '\u{1f600}\u0301',
  '\ud800', '\udfff', '\u0000', '\u0007', '\u001b', '\u007f',
];

const unit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...pieces) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 2 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 2 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
);
const hostile = fc.array(unit, { maxLength: 12 }).map((parts) => parts.join(''));

const PER_DOCUMENT = 500;
const DOCUMENTS = 20;

describe('packer quote.ts', () => {
  test(`${PER_DOCUMENT * DOCUMENTS} hostile strings round-trip through the HCL parser (hcl2json)`, async () => {
    let seen = 0;
    let carried = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { minLength: PER_DOCUMENT, maxLength: PER_DOCUMENT }), async (values) => {
        seen += values.length;
        const ok: string[] = [];
        for (const v of values) {
          if (hclUnrepresentable(v) === undefined) ok.push(v);
          else {
            expect(() => hclString(v)).toThrow(UnrepresentableString);
            expect(() => jsonString(v)).toThrow(UnrepresentableString);
          }
        }
        carried += ok.length;
        // Attributes and list items, so both contexts of a quoted string are covered.
        const doc = ok.map((v, i) => `v${i} = ${hclString(v)}\nl${i} = [${hclString(v)}, 1]\n`).join('');
        const parsed = (await parse('quote.hcl', doc)) as Record<string, unknown>;
        expect(Object.keys(parsed)).toHaveLength(ok.length * 2);
        ok.forEach((v, i) => {
          // hcl2json prints what it parsed as HCL JSON, where a literal `${` or `%{`
          // is written `$${`/`%%{`. An escape that failed would show up here as an
          // interpolation (`${var.x}`) or as a parse error, never as this text.
          expect(parsed[`v${i}`], JSON.stringify(v)).toBe(jsonTemplateText(v));
          expect(parsed[`l${i}`]).toEqual([jsonTemplateText(v), 1]);
        });
      }),
      { numRuns: DOCUMENTS },
    );
    expect(seen).toBeGreaterThanOrEqual(10_000);
    // Most generated strings are carried; the rest were refused (controls, non-NFC, lone surrogates).
    expect(carried).toBeGreaterThan(seen / 2);
  });

  test('refuses what HCL would change or cannot encode, and says why', () => {
    expect(hclUnrepresentable('e\u0301')).toMatch(/NFC/);
    expect(hclUnrepresentable('\u212b')).toMatch(/NFC/);
    expect(hclUnrepresentable('a\ud800b')).toMatch(/surrogate/);
    expect(hclUnrepresentable('\u0000')).toMatch(/U\+0000/);
    expect(hclUnrepresentable('\u{e0041}\u0323')).toMatch(/Go/);
    expect(hclUnrepresentable('é q\u0301 😀 \u202e \u{e0041} 😀\u0301')).toBeUndefined();
    expect(() => hclString('e\u0301')).toThrow(/NFC/);
  });

  test('escapes are the documented ones', () => {
    expect(hclString('${a} %{b} $${c} $ % \\ " \n\r\t')).toBe('"$${a} %%{b} $$${c} $ % \\\\ \\" \\n\\r\\t"');
    expect(hclString('\u202e\u200b😀\u{e0041}')).toBe('"\\u202E\\u200B😀\\U000E0041"');
    expect(jsonString('${a}\u2028"\n')).toBe('"$${a}\\u2028\\"\\n"');
    expect(jsonString('\r$${')).toBe('"${\\"\\\\r\\"}$$${"');
    expect(jsonString('a$\r')).toBe('"a${\\"$\\"}${\\"\\\\r\\"}"');
    expect(jsonString('\ufeffa')).toBe('"${\\"\\\\uFEFF\\"}a"');
    expect(hclTemplate([{ expr: 'path.root' }, '/shell/x y.sh'])).toBe('"${path.root}/shell/x y.sh"');
    // A literal `$` right before an interpolation must not turn `${` into the escape `$${`.
    expect(hclTemplate(['cost: $', { expr: 'var.x' }, '%'])).toBe('"cost: ${"$"}${var.x}%"');
    expect(jsonTemplate(['cost: $', { expr: 'var.x' }])).toBe('"cost: ${\\"$\\"}${var.x}"');
    expect(() => hclTemplate([{ expr: 'var.x}${file("/etc/passwd")' }])).toThrow(/not a reference/);
    expect(hclCommentText('a\nb\u202ec')).toBe('a b\\u{202E}c');
  });
});

// ---- through Packer itself -------------------------------------------------

const packerEnv = (dir: string) => ({
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: dir,
  PACKER_PLUGIN_PATH: path.join(dir, 'plugins'),
  PACKER_CACHE_DIR: path.join(dir, 'cache'),
  CHECKPOINT_DISABLE: '1',
});

/** Evaluates `expr` with the template in `dir` loaded (packer console reads one expression per line). */
const packerConsole = async (dir: string, file: string, expr: string): Promise<string> => {
  const r = await execa('packer', ['console', file], { cwd: dir, input: `${expr}\n`, env: packerEnv(dir), extendEnv: false, reject: false });
  expect(r.exitCode, `packer console ${file}:\n${r.stderr}\n${r.stdout}`).toBe(0);
  return r.stdout.trim();
};

const fromBase64 = (out: string): string[] => (JSON.parse(out) as string[]).map((b) => Buffer.from(b, 'base64').toString('utf8'));

const codePoints = (v: string) => [...v].map((c) => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}`).join(' ');

/** Element by element, so a failure names the value and its code points. */
const expectSame = (got: readonly string[], want: readonly string[], where: string) => {
  expect(got.length, where).toBe(want.length);
  want.forEach((w, i) => expect(got[i], `${where} v${i}: ${JSON.stringify(w)} (${codePoints(w)}) came back as (${codePoints(got[i] ?? '')})`).toBe(w));
};

const nullSource = 'source "null" "x" {\n  communicator = "none"\n}\n\nbuild {\n  sources = ["source.null.x"]\n}\n';

describe('packer quote.ts through packer 1.6.6', () => {
  test('2 x 300 hostile strings as variable defaults come back exactly, in .pkr.hcl and .pkr.json', async () => {
    const dir = tempDir('packer-console');
    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { minLength: 300, maxLength: 300 }), async (values) => {
        const ok = values.filter((v) => hclUnrepresentable(v) === undefined);
        const names = ok.map((_, i) => `v${i}`);
        // base64 so that the answer is ASCII: jsonencode's own result is a string
        // Packer normalizes to NFC, which would fuse a `\n` escape with a mark after it.
        const expr = `jsonencode([${names.map((n) => `base64encode(var.${n})`).join(', ')}])`;

        const hclDir = path.join(dir, 'hcl');
        mkdirSync(hclDir, { recursive: true });
        const hcl = ok.map((v, i) => `variable "v${i}" {\n  type    = string\n  default = ${hclString(v)}\n}\n\n`).join('') + nullSource;
        writeFileSync(path.join(hclDir, 'q.pkr.hcl'), hcl);
        expectSame(fromBase64(await packerConsole(hclDir, 'q.pkr.hcl', expr)), ok, 'q.pkr.hcl');

        const jsonDir = path.join(dir, 'json');
        mkdirSync(jsonDir, { recursive: true });
        const json = `{\n  "variable": {\n${ok.map((v, i) => `    "v${i}": { "type": "string", "default": ${jsonString(v)} }`).join(',\n')}\n  },\n  "source": { "null": { "x": { "communicator": "none" } } },\n  "build": { "sources": ["source.null.x"] }\n}\n`;
        writeFileSync(path.join(jsonDir, 'q.pkr.json'), json);
        expectSame(fromBase64(await packerConsole(jsonDir, 'q.pkr.json', expr)), ok, 'q.pkr.json');
      }),
      // Each run starts packer twice; shrinking would start it hundreds of times.
      { numRuns: 2, endOnFailure: true },
    );
  });

  test('templates: literal text around interpolations stays literal', async () => {
    const dir = tempDir('packer-template');
    const cases: [string, string][] = [
      ['a', hclTemplate(['cost: $', { expr: 'var.x' }, '%'])],
      ['b', hclTemplate(['${', { expr: 'var.x' }, '%{ if }$'])],
      ['c', hclTemplate([{ expr: 'var.x' }, '$${x}\n"\\'])],
      ['d', hclTemplate(['a$$%', { expr: 'var.x' }])],
    ];
    const hcl = `variable "x" {\n  type    = string\n  default = "X"\n}\n\nlocals {\n${cases.map(([n, t]) => `  ${n} = ${t}\n`).join('')}}\n\n${nullSource}`;
    writeFileSync(path.join(dir, 't.pkr.hcl'), hcl);
    expect(fromBase64(await packerConsole(dir, 't.pkr.hcl', 'jsonencode([base64encode(local.a), base64encode(local.b), base64encode(local.c), base64encode(local.d)])'))).toEqual([
      'cost: $X%',
      '${X%{ if }$',
      'X$${x}\n"\\',
      'a$$%X',
    ]);
  });
});
