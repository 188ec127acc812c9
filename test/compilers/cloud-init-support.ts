// Shared by the cloud-init backend's tests: running Debian's cloud-init and
// its Python (PyYAML, cloudinit.*) with a private HOME and no network, YAML
// parsing, synthetic IR and hostile strings.
import { execa } from 'execa';
import fc from 'fast-check';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { isPlainText } from '../../src/check/representable.js';
import { Image, type Phase, type Step } from '../../src/ir/schema.js';
import { tempDir } from '../helpers/cli.js';

/** Debian's interpreter: the one with python3-yaml and cloud-init's modules (not a pyenv shim). */
export const PYTHON = '/usr/bin/python3';
export const CLOUD_INIT = '/usr/bin/cloud-init';

/** A private HOME, C.UTF-8, and proxies that make any network attempt fail at once. */
export const toolEnv = (home: string): Record<string, string> => {
  mkdirSync(home, { recursive: true });
  return {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    http_proxy: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    no_proxy: '',
  };
};

export const run = (cmd: string, args: string[], opts: { cwd: string; home: string; input?: string }) =>
  execa(cmd, args, { cwd: opts.cwd, env: toolEnv(opts.home), extendEnv: false, reject: false, stdin: opts.input === undefined ? 'ignore' : 'pipe', ...(opts.input !== undefined ? { input: opts.input } : {}) });

/** A fresh directory for one test's files plus the HOME the tools use; `remove()` unless IMGC_KEEP_TMP=1. */
export const workspace = (prefix: string) => {
  const root = tempDir(`cloud-init-${prefix}`);
  const out = path.join(root, 'out');
  mkdirSync(out, { recursive: true });
  return {
    root,
    out,
    home: path.join(root, 'home'),
    remove: () => {
      if (process.env['IMGC_KEEP_TMP'] !== '1') rmSync(root, { recursive: true, force: true });
    },
  };
};

export const writeFiles = (dir: string, files: Record<string, string>): void => {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
};

/** The `yaml` package, strict, as YAML 1.2 (its default) or 1.1 (what PyYAML speaks). */
export const parseYaml = (text: string, version: '1.1' | '1.2' = '1.2'): unknown =>
  YAML.parse(text, { version, uniqueKeys: true, strict: true, prettyErrors: true });

/**
 * Runs a Python snippet with Debian's python3; `input` is JSON on stdin, the
 * snippet prints JSON on stdout, which is returned parsed.
 */
export const python = async (code: string, input: unknown, cwd: string, home: string): Promise<unknown> => {
  const r = await run(PYTHON, ['-c', code], { cwd, home, input: JSON.stringify(input) });
  if (r.exitCode !== 0) throw new Error(`python3 failed (${r.exitCode}):\n${r.stderr}`);
  return JSON.parse(r.stdout);
};

export type Cfg = Record<string, unknown> & {
  bootcmd?: (string | string[])[];
  write_files?: Record<string, unknown>[];
  groups?: string[];
  users?: (string | Record<string, unknown>)[];
  packages?: string[];
  runcmd?: (string | string[])[];
};

/**
 * What cloud-init makes of the user-data: the config its loader reads, and
 * the runcmd and bootcmd scripts util.shellify writes (runcmd.sh, bootcmd.sh in `dir`).
 */
export const cloudInitView = async (dir: string, home: string): Promise<Cfg> =>
  (await python(
    `
import json, sys
from cloudinit import util
cfg = util.load_yaml(open("user-data", encoding="utf-8").read())
for k in ("runcmd", "bootcmd"):
    if k in cfg:
        with open(k + ".sh", "w", encoding="utf-8") as f:
            f.write(util.shellify(cfg[k]))
json.dump(cfg, sys.stdout)
`,
    null,
    dir,
    home,
  )) as Cfg;

// --- synthetic IR ---------------------------------------------------------

type StepInput = { id: string } & Record<string, unknown>;

/** A step as the IR holds it; facts default to none. */
export const step = (s: StepInput): Step => ({ provides: [], requires: [], removes: [], loc: { file: 'test.ts', line: 10, column: 3 }, ...s }) as unknown as Step;

export const phase = (name: string, steps: Step[], hooks: { pre?: Step[]; post?: Step[] } = {}): Phase =>
  ({ name, runtime: false, pre: hooks.pre ?? [], steps, post: hooks.post ?? [] }) as Phase;

export const fact = (kind: string, key: string) => ({ kind, key }) as Step['provides'][number];

const debian12: Image['base'] = {
  name: 'debian-12',
  distro: 'debian',
  release: '12',
  suite: 'bookworm',
  variant: 'minbase',
  packageManager: 'apt',
  include: [],
  provides: [fact('group', 'root'), fact('group', 'sudo'), fact('user', 'root'), fact('path', '/etc'), fact('path', '/usr/local/bin')],
};

/** An Image with the given phases, not checked against the schema (for what compile must refuse). */
export const uncheckedImageOf = (phases: Phase[], name = 'test-image', base: Partial<Image['base']> = {}): Image => ({
  irVersion: 1,
  name,
  source: 'test.ts',
  base: { ...debian12, ...base },
  phases,
});

/** A valid Image (checked against the schema). */
export const imageOf = (phases: Phase[], name = 'test-image', base: Partial<Image['base']> = {}): Image => Image.parse(uncheckedImageOf(phases, name, base));

// --- hostile strings --------------------------------------------------------

const specials = [
  '"', "'", '$', '`', '${', '${x}', '$(id)', '`id`', '}', '%{', '%}', '{{', '}}', '{{ x }}', '{%', '%}', '{% if %}', '{#', '#}', '## template: jinja', '#cloud-config',
  '#!/bin/sh', '#include', 'MIME-Version: 1.0', 'mime-version:', 'Content-Type: multipart/mixed; boundary="b"', '--b', 'Content-Type: text/x-shellscript',
  '\\', '\\n', '\\x41', '\\u00e9', '\n', '\n\n', '\n\n\n\n', '\r', '\r\n', '\t', '\t\t', ' ', '   ', ': ', ' #', '#', '- ', '? ', '|', '|-', '|+', '>', '&a', '*a', '!', '!!binary ',
  '!unsafe ', '@', '%', '%YAML 1.1', ',', '[', ']', '{', '---', '...', '<<', '=', '~', 'y', 'n', 'yes', 'no', 'on', 'off', 'null', 'true', 'False', 'NO', '0644', '0o17',
  '017', '1e3', '0x1F', '.inf', '.NaN', '12:30', '1_000', '2001-01-01', "'\\''", '\u0085', '\u2028', '\u2029', '\ufeff', '\u00a0', '\u00ad', '\u200b', '\u200e', '\u202e',
  '\u2066', '\u0080', '\u009f', '\ufffd', '\ufffe', '\uffff', 'é', 'ß', 'ǅ', 'ſ', '日本語', '😀', '👩‍👩‍👧', '𝔘𝔫𝔦', '\u{10FFFF}', '\u{1FFFE}', 'שלום', 'مرحبا', 'e\u0301',
];

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...specials) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 6 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 3 }) },
);

/** Strings the IR can hold, from empty to long multi-line ones. */
export const hostile: fc.Arbitrary<string> = fc
  .tuple(fc.array(piece, { maxLength: 20 }), fc.oneof({ weight: 9, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 10 }) }))
  .map(([ps, n]) => ps.join('').repeat(n))
  .filter(isPlainText);
