// dataKey: one key of an existing TOML or YAML file (`tomlKey`, `yamlKey` in
// the builder), at a path of keys through nested tables (TOML) or mappings
// (YAML): present sets it to a string, number or boolean, making the tables on
// the way; absent removes it. One kind for both formats: what the step means
// (a path of keys, a typed value, the same idempotence, verify and inverse) is
// the same, only the parser differs, and that is the `format` field. The edit
// is the Python program of src/emit/key-edit.ts, run in the root with a real
// parser of the format that keeps comments and order (tomlkit, ruamel.yaml):
// its package is a requirement, as the file is (docs/file-edits.md).
import { createRequire } from 'node:module';
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { AbsPath, stepBase } from '../core/fields.js';
import { DefinitionError } from '../core/definition-error.js';
import { keyEditParsers, keyEditProgram, type KeyFormat } from '../emit/key-edit.js';
import { words } from '../emit/shell/quote.js';
import { str, unsafe, word } from '../emit/ansible/quote.js';
import { entry, map, seq } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, editedFile, shellLine } from './shared.js';
import type { MakeContext, StepInput, StepKind } from './kind.js';

// A command line cannot hold NUL, and a lone surrogate has no UTF-8: neither reaches the file.
const Text = z.string().refine((t) => !/[\0\p{Cs}]/u.test(t), { message: 'no NUL character and no lone surrogate (neither can be passed to the edit)' });
const Value = z.union([
  Text,
  z.number().refine((n) => !Number.isInteger(n) || Number.isSafeInteger(n), { message: 'an integer beyond ±2^53 does not survive JSON exactly' }),
  z.boolean(),
]);

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('dataKey'),
    format: z.enum(['toml', 'yaml']),
    path: AbsPath,
    /** The keys from the top of the file down to the one set, each as it is written unquoted. */
    key: z.array(Text.refine((k) => k !== '', { message: 'a key is not empty' })).min(1),
    /** The value a present key has: a string, a number (an integer when whole) or a boolean. */
    value: Value.optional(),
    state: z.enum(['present', 'absent']),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.state === 'present' && s.value === undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: 'a present key needs its value' });
    if (s.state === 'absent' && s.value !== undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: 'an absent key has no value' });
    // ruamel.yaml writes these as line breaks (YAML 1.1) and YAML 1.2 readers take them as text: the two would read different keys.
    const breaks = /[\x85\u2028\u2029]/;
    if (s.format === 'yaml') {
      s.key.forEach((k, i) => breaks.test(k) && ctx.addIssue({ code: 'custom', path: ['key', i], message: 'a YAML key holds no U+0085, U+2028 or U+2029 (YAML 1.1 and 1.2 readers disagree on them)' }));
      if (typeof s.value === 'string' && breaks.test(s.value)) ctx.addIssue({ code: 'custom', path: ['value'], message: 'a YAML value holds no U+0085, U+2028 or U+2029 (YAML 1.1 and 1.2 readers disagree on them)' });
    }
  });
type DataKeyStep = z.infer<typeof schema>;

export type KeyValue = string | number | boolean;

export interface DataKeyOptions {
  /** The value (required unless state is absent). */
  readonly value?: KeyValue;
  readonly state?: 'present' | 'absent';
}

/**
 * TOML's own dotted key (`plugins."io.containerd.grpc.v1.cri".containerd`):
 * bare keys, "basic" keys with escapes and 'literal' keys, joined by dots
 * with optional blanks around them; undefined when it is not one.
 */
export const tomlKeyPath = (text: string): string[] | undefined => {
  const out: string[] = [];
  let i = 0;
  const blanks = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  for (;;) {
    blanks();
    const m = /^(?:[A-Za-z0-9_-]+|"(?:[^"\\\0-\x1f\x7f]|\\(?:["\\bfnrt]|u[0-9A-Fa-f]{4}))*"|'[^'\0-\x08\x0a-\x1f\x7f]*')/.exec(text.slice(i));
    if (!m) return undefined;
    const k = m[0];
    out.push(k.startsWith('"') ? (JSON.parse(k) as string) : k.startsWith("'") ? k.slice(1, -1) : k);
    i += k.length;
    blanks();
    if (i === text.length) return out;
    if (text[i] !== '.') return undefined;
    i++;
  }
};

/** The key path of a dotted string (TOML's syntax; YAML's keys split at dots) or of the segments given. */
const keyPath = (format: KeyFormat, key: string | readonly string[]): string[] => {
  if (typeof key !== 'string') return [...key];
  if (format === 'yaml') return key.split('.');
  const path = tomlKeyPath(key);
  if (!path) throw new Error(`'${key}' is not a TOML dotted key; quote segments holding other characters than letters, digits, '_' and '-' ("io.containerd.grpc.v1.cri"), or give the segments as an array`);
  return path;
};

/** The key path as the file's format writes it, for messages and comments. */
const keyText = (s: DataKeyStep): string =>
  s.format === 'toml' ? s.key.map((k) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k))).join('.') : s.key.map((k) => (k.includes('.') ? JSON.stringify(k) : k)).join('.');

const valueText = (v: KeyValue): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));

const comment = (s: DataKeyStep): string =>
  s.state === 'absent' ? `no key ${keyText(s)} in ${s.path}` : `${keyText(s)} = ${valueText(s.value!)} in ${s.path}`;

/** The program's arguments after `python3 -c PROGRAM`. */
const args = (s: DataKeyStep): string[] => [s.format, s.path, JSON.stringify(s.key), JSON.stringify(s.value ?? null), s.state];

/** The registered result of the Ansible task: a one-word variable name per step. */
const result = (s: DataKeyStep): string => `imgc_${s.id.replace(/[^A-Za-z0-9]/g, '_').toLowerCase()}`;

const require = createRequire(import.meta.url);

/** The file's text as a parser other than the edit's reads it (@iarna/toml; yaml, YAML 1.2 as ruamel writes), or why it cannot. */
const parsed = (format: KeyFormat, text: string): unknown => {
  if (format === 'toml') return (require('@iarna/toml') as typeof import('@iarna/toml')).parse(text);
  const docs = (require('yaml') as typeof import('yaml')).parseAllDocuments(text);
  if (!Array.isArray(docs)) return {};
  if (docs.length > 1) throw new Error(`holds ${docs.length} YAML documents`);
  if (docs[0]?.errors.length) throw new Error(docs[0].errors[0]!.message);
  return docs[0]?.toJS() ?? {};
};

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

export const dataKey = {
  kind: 'dataKey',
  schema,
  /** The file must be there, and the parser's package installed: the step edits the file, it never creates it. */
  make: ({ family }: MakeContext, format: KeyFormat, path: string, key: string | readonly string[], opts: DataKeyOptions): StepInput<DataKeyStep> => {
    try {
      return {
        kind: 'dataKey',
        format,
        path,
        key: keyPath(format, key),
        ...(opts.value !== undefined ? { value: opts.value } : {}),
        state: opts.state ?? 'present',
        requires: [fact('path', path), fact('package', keyEditParsers[format][family])],
      };
    } catch (e) {
      throw new DefinitionError(`${format}Key('${path}'): ${(e as Error).message}`);
    }
  },

  describe: (s) => `${s.format.toUpperCase()} key '${keyText(s)}' ${s.state === 'absent' ? 'removed from' : 'of'} '${s.path}'`,
  comment,
  touches: (s) => ({ needs: [fact('path', s.path)], changes: [fact('path', s.path)], writesFiles: true }),
  edits: (s) => [s.path],
  inRoot: true,

  shellHelpers: {
    keyedit: {
      deps: [],
      code: [
        '# imgc_keyedit FORMAT FILE KEYS VALUE STATE: one key of an existing TOML or YAML',
        '# FILE (KEYS and VALUE as JSON), set (present) or removed (absent) by the root\'s',
        '# python3 with tomlkit or ruamel.yaml, which keep comments and order; the file is',
        '# replaced only when the key changes (owner and mode kept). src/emit/key-edit.ts.',
        'imgc_keyedit() {',
        `  imgc_said=$(/usr/bin/python3 -c '${keyEditProgram}' "$@") || return 1`,
        '  if [ "$imgc_said" = changed ]; then',
        '    imgc_dirty=1',
        '  fi',
        '}',
      ],
    },
  },
  shell: (s) => shellLine(`imgc_keyedit ${words(args(s))}`, 'keyedit'),
  ansible: (s) => [
    task({
      name: stepTaskName(`${s.state === 'absent' ? 'Remove' : 'Set'} ${labelText(keyText(s))} ${s.state === 'absent' ? 'from' : 'of'} ${labelText(s.path)}`, s),
      module: 'ansible.builtin.command',
      // No module edits TOML, and none keeps a YAML file's comments: the shell target's program, with the root's parser.
      comments: [`No Ansible module edits ${s.format.toUpperCase()} keeping the file's comments: the shell target's program runs with the root's python3.`],
      args: map({ argv: seq([word('/usr/bin/python3'), str('-c'), unsafe(keyEditProgram), ...args(s).map(unsafe)]) }),
      keywords: [entry('register', word(result(s))), entry('changed_when', str(`${result(s)}.stdout == 'changed'`))],
    }),
  ],
  cloudInit: {
    run: (s) => [call([fn('keyedit'), ...args(s)], 'keyedit')],
  },
  packer: { comment },

  runtime: () => ({ creations: [], kept: 'a key is left as the step set it: the value it replaced is not recorded' }),

  verify: {
    root: (s) => [
      editedFile(s.path),
      {
        subject: `dataKey:${s.path}:${JSON.stringify(s.key)}`,
        what: comment(s),
        check: (r) => {
          const text = r.view.readFile(s.path);
          if (text === undefined) return `${s.path} does not exist`;
          let node: unknown;
          try {
            node = parsed(s.format, text.toString('utf8'));
          } catch (e) {
            return `${s.path} is not ${s.format.toUpperCase()} as read back: ${(e as Error).message.split('\n')[0]}`;
          }
          for (const k of s.key.slice(0, -1)) node = isTable(node) ? node[k] : undefined;
          const last = s.key[s.key.length - 1]!;
          const table = isTable(node) && Object.hasOwn(node, last) ? node : undefined;
          if (s.state === 'absent') return table ? `${s.path} still sets ${keyText(s)}` : undefined;
          if (!table) return `${s.path} has no key ${keyText(s)}`;
          const got = table[last];
          return got === s.value ? undefined : `${s.path} sets ${keyText(s)} to ${JSON.stringify(got)}, not ${valueText(s.value!)}`;
        },
      },
    ],
  },
} as const satisfies StepKind<DataKeyStep>;
