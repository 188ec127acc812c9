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

  shellHelpers: {
    inifile: {
      deps: ['file'],
      code: [
        '# imgc_inifile FILE SECTION KEY VALUE STATE SEP: community.general.ini_file 6.6 on',
        '# an existing FILE, for one value (SECTION empty: the keys before the first section).',
        '# present: the first line of KEY in the section holding VALUE, else the first line',
        '# of KEY, commented out (# or ;) or not, becomes KEY SEP VALUE and the other lines',
        '# of KEY go; with none, it is added after the last line of the section that is not',
        '# blank or a comment, or the section is appended with it. absent: the lines setting',
        '# KEY go. As ini_file, a changed file is written with line feeds and no byte order',
        '# mark; the file is rewritten only when ini_file would (owner and mode kept).',
        'imgc_inifile() {',
        '  if [ ! -f "$1" ]; then',
        '    printf \'imgc: %s: no such file (a key is set in an existing file)\\n\' "$1" >&2',
        '    return 1',
        '  fi',
        '  # Read as Python reads text: a byte order mark dropped, CR LF, CR and LF each end a line.',
        '  case $(tail -c 1 -- "$1" | od -An -tx1 | tr -d \' \') in',
        '    \'\' | 0a | 0d) imgc_ends=1 ;;',
        '    *) imgc_ends=0 ;;',
        '  esac',
        '  if [ "$(head -c 4 -- "$1" | od -An -tx1 | tr -d \' \\n\')" = efbbbf ]; then',
        '    imgc_ends=1',
        '  fi',
        '  imgc_want=$(IMGC_EOL=$imgc_ends IMGC_SECTION=$2 IMGC_KEY=$3 IMGC_VALUE=$4 IMGC_STATE=$5 IMGC_SEP=$6 LC_ALL=C awk \'',
        '    # The option pattern [#;]?[ \\t]*KEY[ \\t]*(=|$)[ \\t]*(.*): 1 (value in v) or 0.',
        '    function opt(s, commented,   r) {',
        '      if (commented && (substr(s, 1, 1) == "#" || substr(s, 1, 1) == ";")) s = substr(s, 2)',
        '      sub(/^[ \\t]+/, "", s)',
        '      if (substr(s, 1, length(key)) != key) return 0',
        '      r = substr(s, length(key) + 1)',
        '      sub(/^[ \\t]+/, "", r)',
        '      if (r != "" && substr(r, 1, 1) != "=") return 0',
        '      if (r != "") r = substr(r, 2)',
        '      sub(/^[ \\t]+/, "", r)',
        '      v = r',
        '      return 1',
        '    }',
        '    function set(i, line) {',
        '      if (S[i] != line) changed = 1',
        '      S[i] = line',
        '      C[i] = 1',
        '    }',
        '    BEGIN {',
        '      sec = ENVIRON["IMGC_SECTION"]; key = ENVIRON["IMGC_KEY"]; want = ENVIRON["IMGC_VALUE"]',
        '      present = ENVIRON["IMGC_STATE"] == "present"; line = key ENVIRON["IMGC_SEP"] want',
        '      fake = "ad01e11446efb704fcdbdb21f2c43757423d91c5"',
        '      if (sec == "") sec = fake',
        '    }',
        '    {',
        '      s = $0',
        '      if (NR == 1 && substr(s, 1, 3) == "\\357\\273\\277") s = substr(s, 4)',
        '      k = split(s, P, "\\r")',
        '      if (k > 1 && P[k] == "") k--',
        '      if (k == 0) L[++n] = ""',
        '      for (j = 1; j <= k; j++) L[++n] = P[j]',
        '    }',
        '    END {',
        '      # An empty file is one empty line; a last line without a line break is a change.',
        '      if (n == 0) L[++n] = ""',
        '      else if (ENVIRON["IMGC_EOL"] != 1) changed = 1',
        '      L[0] = "[" fake "]"',
        '      L[n + 1] = "["',
        '      within = 0; start = 0; stop = 0',
        '      for (i = 0; i <= n + 1; i++) {',
        '        if (index(L[i], "[" sec "]") == 1) { within = 1; start = i }',
        '        else if (substr(L[i], 1, 1) == "[" && within) { stop = i; break }',
        '      }',
        '      m = stop - start',
        '      for (i = 0; i < m; i++) S[i] = L[start + i]',
        '      if (present) {',
        '        todo = 1',
        '        for (i = 0; i < m && todo; i++) if (opt(S[i], 1) && v == want) { set(i, line); todo = 0 }',
        '        for (i = 0; i < m && todo; i++) if (!C[i] && opt(S[i], 1)) { set(i, line); todo = 0 }',
        '        for (i = m - 1; i > 0; i--) if (!C[i] && opt(S[i], 1)) { drop[i] = 1; changed = 1 }',
        '        if (todo) {',
        '          for (i = m; i > 0; i--) {',
        '            if (S[i - 1] !~ /^[ \\t]*([#;].*)?$/) {',
        '              add = i; todo = 0; changed = 1',
        '              break',
        '            }',
        '          }',
        '        }',
        '      } else {',
        '        for (i = 0; i < m; i++) if (opt(S[i], 0)) { drop[i] = 1; changed = 1 }',
        '      }',
        '      if (!within && present) changed = 1',
        '      if (!changed) { printf "="; exit }',
        '      printf "+"',
        '      # The file without the two sentinel lines, the key added at S index add.',
        '      for (i = 1; i <= n; i++) {',
        '        j = i - start',
        '        if (within && i >= start && i < stop) {',
        '          if (add && j == add) print line',
        '          if (!drop[j]) print S[j]',
        '        } else {',
        '          if (add && add == m && i == stop) print line',
        '          print L[i]',
        '        }',
        '      }',
        '      if (add && add == m && stop == n + 1) print line',
        '      if (!within && present) { print "[" sec "]"; print line }',
        '    }',
        '  \' "$1" && printf x)',
        '  imgc_want=${imgc_want%x}',
        '  if [ "$imgc_want" != = ]; then',
        '    imgc_file "$1" \'\' \'\' \'\' "${imgc_want#+}"',
        '  fi',
        '}',
      ],
    },
  },
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
