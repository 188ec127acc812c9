// Shared helpers of the ansible backend's tests: running the real
// ansible-playbook / ansible-lint so that nothing is written to ~ and nothing
// touches the network, writing compiled files, synthetic IR, hostile strings.
import { execa } from 'execa';
import fc from 'fast-check';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { isPlainText } from '../../src/check/representable.js';
import type { Image, Phase, Step } from '../../src/ir/schema.js';
import { tempDir } from '../helpers/cli.js';

/**
 * Environment for ansible tools: a private HOME and temp dirs, no colour, a
 * fixed interpreter, and (unless `network`) a proxy that fails every HTTP request.
 */
export const ansibleEnv = (home: string, { network = false }: { network?: boolean } = {}): Record<string, string> => {
  mkdirSync(home, { recursive: true });
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    HOME: home,
    ANSIBLE_HOME: path.join(home, '.ansible'),
    ANSIBLE_LOCAL_TEMP: path.join(home, 'tmp'),
    ANSIBLE_REMOTE_TEMP: path.join(home, 'remote-tmp'),
    ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3',
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_RETRY_FILES_ENABLED: 'False',
    ANSIBLE_PIPELINING: 'True',
    ANSIBLE_GALAXY_SERVER: 'http://127.0.0.1:9/',
    NO_COLOR: '1',
    // Any HTTP(S) attempt fails fast instead of reaching out.
    ...(network ? {} : { http_proxy: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9', no_proxy: '127.0.0.1,localhost' }),
  };
};

export const run = (cmd: string, args: string[], cwd: string, home: string, extraEnv: Record<string, string> = {}, opts: { network?: boolean } = {}) =>
  execa(cmd, args, { cwd, env: { ...ansibleEnv(home, opts), ...extraEnv }, extendEnv: false, reject: false, all: true, stdin: 'ignore' });

export const writeFiles = (dir: string, files: Record<string, string>): string => {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return dir;
};

/** A fresh directory for one test's files plus the HOME the tools use; `remove()` unless IMGC_KEEP_TMP=1. */
export const workspace = (prefix: string) => {
  const root = tempDir(`ansible-${prefix}`);
  return {
    root,
    out: path.join(root, 'out'),
    home: path.join(root, 'home'),
    remove: () => {
      if (process.env['IMGC_KEEP_TMP'] !== '1') rmSync(root, { recursive: true, force: true });
    },
  };
};

/** The `!unsafe` tag as the `yaml` package should read it: a plain string. */
export const unsafeTag = { tag: '!unsafe', resolve: (s: string) => s } as const;
export const parseYaml = (text: string, version: '1.1' | '1.2' = '1.2'): unknown =>
  YAML.parse(text, { version, customTags: [unsafeTag], uniqueKeys: true, strict: true, prettyErrors: true });

/** A tasks file's tasks in the order they run when nothing fails: a guarded block's own tasks in its place, its rescue left out. */
export const tasksInOrder = <T = Record<string, unknown>>(text: string): T[] =>
  (parseYaml(text) as Record<string, unknown>[]).flatMap((t) => ('block' in t ? (t['block'] as T[]) : [t as T]));

const base: Image['base'] = {
  name: 'debian-12',
  distro: 'debian',
  release: '12',
  suite: 'bookworm',
  variant: 'minbase',
  packageManager: 'apt',
  include: [],
  provides: [],
};

/** A step as written in a test: no id, no facts (distributes over the step kinds). */
export type StepInput = Step extends infer S ? (S extends Step ? Omit<S, 'id' | 'provides' | 'requires' | 'removes'> : never) : never;

const withIds = (phase: string, steps: StepInput[], prefix = ''): Step[] =>
  steps.map((s, i) => ({ id: `${phase}.${prefix}${i + 1}.${s.kind}`, loc: { file: 'test.ts', line: 10 + i, column: 3 }, provides: [], requires: [], removes: [], ...s }) as Step);

/** A phase of synthetic steps (ids and locations filled in). */
export const phase = (name: string, steps: StepInput[], hooks: { pre?: StepInput[]; post?: StepInput[]; runtime?: boolean } = {}): Phase => ({
  name,
  runtime: hooks.runtime ?? false,
  pre: withIds(name, hooks.pre ?? [], 'pre') as Phase['pre'],
  steps: withIds(name, steps) as Phase['steps'],
  post: withIds(name, hooks.post ?? [], 'post') as Phase['post'],
  loc: { file: 'test.ts', line: 5, column: 3 },
});

export const imageOf = (phases: Phase[], name = 'test-image'): Image => ({ irVersion: 1, name, source: 'test.ts', base, phases });

// Hostile strings: every character class YAML, Jinja and the shell care about.
const specials = [
  '"', "'", '$', '`', '${', '${x}', '}', '%{', '{{', '}}', '{{ x }}', '{{x}}', '{%', '%}', '{% if %}', '{#', '#}', "{{ lookup('pipe', 'id') }}",
  '\\', '\\n', '\n', '\n\n', '\n\n\n\n', '\r', '\r\n', '\t', ' ', '   ', ': ', ' #', '#', '- ', '? ', '|', '>', '&a', '*a', '!', '!unsafe ', '@', '%',
  ',', '[', ']', '{', '---', '...', '<<', '=', '~', 'yes', 'no', 'on', 'null', 'true', 'NO', '0644', '0o17', '1e3', '0x1F', '.inf', '12:30', '2001-01-01',
  '\u0085', '\u2028', '\u2029', '\ufeff', '\u00a0', '\u00ad', '\u200b', '\u200e', '\u202e', '\u2066', '\u0080', '\u009f', '\ufffd', '\ufffe', '\uffff',
  'é', 'ß', 'ǅ', '日本語', '😀', '👩‍👩‍👧', '𝔘𝔫𝔦', '\u{10FFFF}', 'שלום', 'مرحبا', 'e\u0301',
];

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...specials) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 6 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 3 }) },
);

/** Strings the IR can hold (no C0 controls but tab/LF/CR, no DEL), often long enough to fold. */
export const hostile: fc.Arbitrary<string> = fc
  .tuple(fc.array(piece, { maxLength: 24 }), fc.oneof({ weight: 9, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 12 }) }))
  .map(([ps, n]) => ps.join('').repeat(n))
  .filter(isPlainText);
