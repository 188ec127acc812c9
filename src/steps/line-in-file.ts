// lineInFile: one line of an existing file, with Ansible lineinfile's
// semantics — present: the last line the regexp matches is replaced (else the
// line is appended unless a line equal to it is there); absent: every line the
// regexp matches (or equal to the line) goes. The file must exist (its path is
// a fact); owner and mode stay. The regexp is read by Python's `re` (Ansible)
// and by awk (shell, cloud-init), so only the syntax both read alike is taken
// (docs/file-edits.md).
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { AbsPath, OneLine, stepBase } from '../core/fields.js';
import { words } from '../emit/shell/quote.js';
import { unsafe, word } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import type { StepInput, StepKind } from './kind.js';

/**
 * Why `re` is outside the regular expressions Python's `re` and POSIX awk
 * (mawk included) read alike, or undefined when it is inside: printable
 * ASCII; no `\` before a letter or digit but `\t` (\s, \d, \b differ or do not exist);
 * no intervals `{n}` (mawk has none), no `(?` extensions, no two quantifiers
 * in a row (lazy in Python, undefined in awk); in brackets no `\` but `\t`, no
 * `[:class:]`.
 */
export const portableRegexProblem = (re: string): string | undefined => {
  if (re === '') return 'the regexp is empty';
  if (!/^[\x20-\x7e]*$/.test(re)) return 'the regexp holds a character outside printable ASCII';
  let inBracket = false;
  let bracket = 0;
  let prevQuantifier = false;
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (inBracket) {
      if (c === '\\' && re[i + 1] === 't') {
        i++;
        continue;
      }
      if (c === '\\') return 'a backslash inside [...] other than \\t is read differently by Python and the awks';
      if (c === '[' && /[:=.]/.test(re[i + 1] ?? '')) return `'${c}${re[i + 1]}' classes are POSIX only`;
      // A ']' first in the brackets (after an optional '^') is one of its characters.
      if (c === ']' && i > bracket + 1 && !(i === bracket + 2 && re[bracket + 1] === '^')) inBracket = false;
      continue;
    }
    if (c === '\\') {
      const n = re[i + 1];
      if (n === undefined) return 'the regexp ends in a backslash';
      if (/[A-Za-z0-9]/.test(n) && n !== 't') return `'\\${n}' is read differently by Python and awk: write the characters out ([ \\t] for blanks, [0-9] for digits)`;
      i++;
      prevQuantifier = false;
      continue;
    }
    if (c === '{' || c === '}') return "intervals ('{n,m}') are not read by mawk: escape the brace or repeat the atom";
    if (c === '(' && re[i + 1] === '?') return "'(?' extensions are Python's only";
    const quantifier = c === '*' || c === '+' || c === '?';
    if (quantifier && prevQuantifier) return 'two quantifiers in a row are lazy in Python and undefined in awk';
    prevQuantifier = quantifier;
    if (c === '[') {
      inBracket = true;
      bracket = i;
    }
  }
  if (inBracket) return "a '[' is not closed";
  try {
    new RegExp(re);
  } catch (e) {
    return `not a regular expression: ${(e as Error).message}`;
  }
  return undefined;
};

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('lineInFile'),
    path: AbsPath,
    /** Present: the line the file has; absent without a regexp: the line that goes. */
    line: OneLine.optional(),
    regexp: z.string().optional(),
    state: z.enum(['present', 'absent']),
  })
  .strict()
  .superRefine((s, ctx) => {
    const problem = s.regexp === undefined ? undefined : portableRegexProblem(s.regexp);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['regexp'], message: `${problem} (the regexp is read by both Python and awk)` });
    else if (s.line === undefined && (s.state === 'present' || s.regexp === undefined))
      ctx.addIssue({ code: 'custom', path: ['line'], message: s.state === 'present' ? 'a present line needs its text' : 'an absent line needs its text or a regexp' });
    // A line its own regexp does not match is appended or written again by every run.
    else if (s.state === 'present' && s.regexp !== undefined && s.line !== undefined && !new RegExp(s.regexp).test(s.line))
      ctx.addIssue({ code: 'custom', path: ['regexp'], message: `the regexp /${s.regexp}/ does not match the line '${s.line}', so a second run would not find it: make the regexp match the line too` });
  });
type LineInFileStep = z.infer<typeof schema>;

export interface LineInFileOptions {
  readonly line?: string;
  readonly regexp?: string;
  readonly state?: 'present' | 'absent';
}

const what = (s: LineInFileStep): string => (s.state === 'absent' && s.regexp !== undefined ? `lines matching /${s.regexp}/` : `line '${s.line ?? ''}'`);

export const lineInFile = {
  kind: 'lineInFile',
  schema,
  /** The file must be there: the step edits it, it never creates it. */
  make: (path: string, opts: LineInFileOptions): StepInput<LineInFileStep> => ({
    kind: 'lineInFile',
    path,
    ...(opts.line !== undefined ? { line: opts.line } : {}),
    ...(opts.regexp !== undefined ? { regexp: opts.regexp } : {}),
    state: opts.state ?? 'present',
    requires: [fact('path', path)],
  }),

  describe: (s) => `${what(s)} ${s.state === 'absent' ? 'removed from' : 'in'} '${s.path}'`,
  comment: (s) => `${s.state === 'absent' ? 'no ' : ''}${what(s)} in ${s.path}${s.state === 'present' && s.regexp !== undefined ? ` (replacing /${s.regexp}/)` : ''}`,
  touches: (s) => ({ needs: [fact('path', s.path)], changes: [fact('path', s.path)], writesFiles: true }),
  edits: (s) => [s.path],
  inRoot: true,

  shellHelpers: {
    lineinfile: {
      deps: ['eol', 'file'],
      code: [
        '# imgc_lineinfile FILE STATE REGEXP LINE: Ansible lineinfile on an existing FILE',
        '# (symbolic links followed; owner and mode kept). present: the last line the',
        '# extended regular expression REGEXP (empty: none) matches becomes LINE; with no',
        '# match and no line equal to LINE, LINE is appended. absent: the lines REGEXP',
        '# matches (without REGEXP: equal to LINE) go. As Ansible, a last line without a',
        '# line break keeps it missing unless the step rewrites it or appends after it.',
        'imgc_lineinfile() {',
        '  imgc_path=$(readlink -f -- "$1") || imgc_path=$1',
        '  if [ ! -f "$imgc_path" ]; then',
        '    printf \'imgc: %s: no such file (a line is edited in an existing file)\\n\' "$1" >&2',
        '    return 1',
        '  fi',
        '  imgc_want=$(IMGC_EOL=$(imgc_eol "$imgc_path") IMGC_STATE=$2 IMGC_RE=$3 IMGC_LINE=$4 LC_ALL=C awk \'',
        '    BEGIN { re = ENVIRON["IMGC_RE"]; line = ENVIRON["IMGC_LINE"]; eol = ENVIRON["IMGC_EOL"] }',
        '    {',
        '      l[NR] = $0',
        '      k = $0',
        '      sub(/\\r+$/, "", k)',
        '      if (re != "" && $0 ~ re) { hit[NR] = 1; at = NR }',
        '      if (k == line) { same[NR] = 1; eq = NR }',
        '    }',
        '    END {',
        '      n = NR',
        '      if (ENVIRON["IMGC_STATE"] == "absent") {',
        '        for (i = 1; i <= n; i++) if (re != "" ? hit[i] : same[i]) drop[i] = 1',
        '      } else {',
        '        if (!at) at = eq',
        '        if (at) {',
        '          l[at] = line',
        '          if (at == n) eol = 1',
        '        } else {',
        '          l[++n] = line',
        '          eol = 1',
        '        }',
        '      }',
        '      for (i = 1; i <= n; i++) if (!drop[i]) printf "%s%s", l[i], (i < n || eol ? "\\n" : "")',
        '    }',
        '  \' "$imgc_path" && printf x)',
        '  imgc_file "$imgc_path" \'\' \'\' \'\' "${imgc_want%x}"',
        '}',
      ],
    },
  },
  shell: (s) => shellLine(`imgc_lineinfile ${words([s.path, s.state, s.regexp ?? '', s.line ?? ''])}`, 'lineinfile'),
  ansible: (s) => [
    task({
      name: stepTaskName(s.state === 'absent' ? `Remove ${labelText(what(s))} from ${labelText(s.path)}` : `Line '${labelText(s.line ?? '')}' in ${labelText(s.path)}`, s),
      module: 'ansible.builtin.lineinfile',
      args: map({
        path: unsafe(s.path),
        regexp: s.regexp !== undefined ? unsafe(s.regexp) : undefined,
        line: s.line !== undefined && (s.state === 'present' || s.regexp === undefined) ? unsafe(s.line) : undefined,
        state: word(s.state),
      }),
    }),
  ],
  cloudInit: {
    run: (s) => [call([fn('lineinfile'), s.path, s.state, s.regexp ?? '', s.line ?? ''], 'lineinfile')],
  },
  packer: { comment: (s) => `${s.state === 'absent' ? 'no ' : ''}${what(s)} in ${s.path}` },

  // The line goes again; a line it replaced is not put back, and a removed line is not restored.
  runtime: (s) =>
    s.state === 'present' && s.line !== undefined && s.line.trim() !== ''
      ? { creations: [{ token: s.id, kind: 'line', file: s.path, sep: '', key: s.line.trim() }], kept: 'a line the step replaced is not put back' }
      : { creations: [], kept: 'removed lines are not put back: what they held is not recorded' },

  verify: {
    root: (s) => [
      {
        subject: `lineInFile:${s.path}:${s.regexp ?? s.line ?? ''}`,
        what: `${what(s)} ${s.state === 'absent' ? 'not ' : ''}in ${s.path}`,
        check: (r) => {
          const text = r.view.readFile(s.path);
          if (text === undefined) return `${s.path} does not exist`;
          const lines = text.toString('utf8').split('\n').map((l) => l.replace(/\r+$/, ''));
          const re = s.regexp !== undefined ? new RegExp(s.regexp) : undefined;
          if (s.state === 'present') return lines.includes(s.line ?? '') ? undefined : `${s.path} has no line '${s.line ?? ''}'`;
          const left = lines.filter((l) => (re ? re.test(l) : l === s.line));
          return left.length ? `${s.path} still has '${left[0]}'` : undefined;
        },
      },
    ],
  },
} as const satisfies StepKind<LineInFileStep> & { make(path: string, opts: LineInFileOptions): StepInput<LineInFileStep> };
