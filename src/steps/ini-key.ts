// iniKey: one key of an existing ini-style file (sections in brackets,
// `key = value` lines; or no section: the keys before the first one, as in
// /etc/default files), with the semantics of community.general.ini_file as
// Debian 12's Ansible ships it (6.6): present sets the key in the section —
// the first line with that value, else the first line with the key, a
// commented-out one (`#key = …`, `;key=…`) included, becomes `key = value`
// and the key's other lines go; else it is added after the section's last
// line that is neither blank nor a comment, or the section is appended with
// it. Absent removes the key's uncommented lines from the section. The file
// must exist (its path is a fact); owner and mode stay (docs/file-edits.md).
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { AbsPath, OneLine, stepBase } from '../core/fields.js';
import { words } from '../emit/shell/quote.js';
import { bool, unsafe, word } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import type { StepInput, StepKind } from './kind.js';

const Key = OneLine.refine((k) => k !== '' && !/^[\s#;[]/.test(k) && !/\s$/.test(k) && !k.includes('='), {
  message: "a key is not empty, holds no '=', and neither starts with a blank, '#', ';' or '[' nor ends with a blank",
});
const Section = OneLine.refine((s) => s !== '' && !s.includes(']'), { message: "a section name is not empty and holds no ']' (leave it out for the keys before the first section)" });

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('iniKey'),
    path: AbsPath,
    /** Absent: the keys before the first section. */
    section: Section.optional(),
    key: Key,
    /** The value a present key has (may be empty). */
    value: OneLine.refine((v) => !/^[ \t]/.test(v), { message: 'a value starting with a blank is read back without it (ini_file drops the blanks after =)' }).optional(),
    state: z.enum(['present', 'absent']),
    /** `key = value` (true, Ansible's default) or `key=value`. */
    spaces: z.boolean(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.state === 'present' && s.value === undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: 'a present key needs its value' });
    if (s.state === 'absent' && s.value !== undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: 'an absent key has no value: every line of the key goes' });
  });
type IniKeyStep = z.infer<typeof schema>;

export interface IniKeyOptions {
  /** The section; leave it out for the keys before the first section (an /etc/default file). */
  readonly section?: string;
  /** The value (required unless state is absent). */
  readonly value?: string;
  readonly state?: 'present' | 'absent';
  /** `key = value` (default, as Ansible) or, false, `key=value`. */
  readonly spaces?: boolean;
}

/**
 * The value of `key` when `line` sets it, or undefined: ini_file's option
 * pattern, `[#;]?[ \t]*KEY[ \t]*(=|$)[ \t]*(.*)`, matched at the line's start;
 * `commented` lets the leading `#` or `;` in (ini_file replaces such lines).
 */
export const iniValue = (line: string, key: string, commented: boolean): string | undefined => {
  let t = commented && /^[#;]/.test(line) ? line.slice(1) : line;
  t = t.replace(/^[ \t]*/, '');
  if (!t.startsWith(key)) return undefined;
  const rest = t.slice(key.length).replace(/^[ \t]*/, '');
  if (rest === '') return '';
  return rest.startsWith('=') ? rest.slice(1).replace(/^[ \t]*/, '') : undefined;
};

/** The lines of `section` (undefined: before the first section) in `text`, as ini_file finds them; undefined when there is no such section. */
const sectionLines = (text: string, section: string | undefined): string[] | undefined => {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  if (section === undefined) {
    const end = lines.findIndex((l) => l.startsWith('['));
    return end < 0 ? lines : lines.slice(0, end);
  }
  let start = -1;
  let end = lines.length;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith(`[${section}]`)) start = i;
    else if (lines[i]!.startsWith('[') && start >= 0) {
      end = i;
      break;
    }
  }
  return start < 0 ? undefined : lines.slice(start + 1, end);
};

const where = (s: IniKeyStep): string => (s.section === undefined ? '' : ` in [${s.section}]`);

const comment = (s: IniKeyStep): string =>
  s.state === 'absent' ? `no key ${s.key}${where(s)} of ${s.path}` : `${s.key}${s.spaces ? ' = ' : '='}${s.value ?? ''}${where(s)} of ${s.path}`;

export const iniKey = {
  kind: 'iniKey',
  schema,
  /** The file must be there: the step edits it, it never creates it. */
  make: (path: string, key: string, opts: IniKeyOptions): StepInput<IniKeyStep> => ({
    kind: 'iniKey',
    path,
    ...(opts.section !== undefined ? { section: opts.section } : {}),
    key,
    ...(opts.value !== undefined ? { value: opts.value } : {}),
    state: opts.state ?? 'present',
    spaces: opts.spaces ?? true,
    requires: [fact('path', path)],
  }),

  describe: (s) => `key '${s.key}'${where(s)} ${s.state === 'absent' ? 'removed from' : 'of'} '${s.path}'`,
  comment,
  touches: (s) => ({ needs: [fact('path', s.path)], changes: [fact('path', s.path)], writesFiles: true }),
  edits: (s) => [s.path],
  inRoot: true,

  shell: (s) => shellLine(`imgc_inifile ${words([s.path, s.section ?? '', s.key, s.value ?? '', s.state, s.spaces ? ' = ' : '='])}`, 'inifile'),
  ansible: (s) => [
    task({
      name: stepTaskName(`${s.state === 'absent' ? 'Remove' : 'Set'} ${labelText(s.key)}${s.section === undefined ? '' : ` in [${labelText(s.section)}]`} ${s.state === 'absent' ? 'from' : 'of'} ${labelText(s.path)}`, s),
      module: 'community.general.ini_file',
      args: map({
        path: unsafe(s.path),
        section: s.section !== undefined ? unsafe(s.section) : undefined,
        option: unsafe(s.key),
        value: s.value !== undefined ? unsafe(s.value) : undefined,
        state: word(s.state),
        no_extra_spaces: s.spaces ? undefined : bool(true),
        create: bool(false),
      }),
    }),
  ],
  cloudInit: {
    run: (s) => [call([fn('inifile'), s.path, s.section ?? '', s.key, s.value ?? '', s.state, s.spaces ? ' = ' : '='], 'inifile')],
  },
  packer: { comment },

  runtime: () => ({ creations: [], kept: 'an ini key is left as the step set it: the line it replaced is not recorded' }),

  verify: {
    root: (s) => [
      {
        subject: `iniKey:${s.path}:${s.section ?? ''}:${s.key}`,
        what: s.state === 'absent' ? `no key ${s.key}${where(s)} of ${s.path}` : `${s.key} = ${s.value ?? ''}${where(s)} of ${s.path}`,
        check: (r) => {
          const text = r.view.readFile(s.path);
          if (text === undefined) return `${s.path} does not exist`;
          const lines = sectionLines(text.toString('utf8'), s.section);
          if (lines === undefined) return s.state === 'absent' ? undefined : `${s.path} has no section [${s.section ?? ''}]`;
          const values = lines.map((l) => iniValue(l, s.key, false)).filter((v) => v !== undefined);
          if (s.state === 'absent') return values.length ? `${s.path} still sets ${s.key}${where(s)} (to '${values[0]}')` : undefined;
          if (values.length === 1 && values[0] === s.value) return undefined;
          return values.length ? `${s.path} sets ${s.key}${where(s)} to '${values.join("', '")}', not '${s.value ?? ''}'` : `${s.path} has no key ${s.key}${where(s)}`;
        },
      },
    ],
  },
} as const satisfies StepKind<IniKeyStep> & { make(path: string, key: string, opts: IniKeyOptions): StepInput<IniKeyStep> };
