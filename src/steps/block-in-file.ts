// blockInFile: a block of lines of an existing file between two marker lines,
// with Ansible blockinfile's semantics — the block between the last begin and
// end markers is replaced, or the block is appended with its markers; absent:
// the markers and what lies between them go. The file must exist (its path is
// a fact); owner and mode stay.
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
import { blockMarkers as markers } from '../core/creations.js';
import type { StepInput, StepKind } from './kind.js';

export const DEFAULT_MARKER = '# {mark} IMGC MANAGED BLOCK';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('blockInFile'),
    path: AbsPath,
    /** The lines between the markers; a final line break is implied. */
    block: z.string().regex(/^[^\r]*$/, 'a block holds no carriage return (Python and awk split lines at it differently)'),
    /** The marker lines: `{mark}` becomes BEGIN and END. */
    marker: OneLine.regex(/\{mark\}/, 'the marker holds {mark}, which becomes BEGIN and END'),
    state: z.enum(['present', 'absent']),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.state === 'present' && s.block === '') ctx.addIssue({ code: 'custom', path: ['block'], message: 'a present block holds at least one line (state absent removes one)' });
    const [begin, end] = markers(s);
    if (s.block.split('\n').some((l) => l === begin || l === end)) ctx.addIssue({ code: 'custom', path: ['block'], message: 'the block holds one of its own marker lines: a second run would not find its end' });
  });
type BlockInFileStep = z.infer<typeof schema>;


export interface BlockInFileOptions {
  readonly marker?: string;
  readonly state?: 'present' | 'absent';
}

const count = (s: BlockInFileStep): string => {
  const n = s.block.replace(/\n$/, '').split('\n').length;
  return `${n} line${n === 1 ? '' : 's'}`;
};

export const blockInFile = {
  kind: 'blockInFile',
  schema,
  make: (path: string, block: string, opts: BlockInFileOptions = {}): StepInput<BlockInFileStep> => ({
    kind: 'blockInFile',
    path,
    block,
    marker: opts.marker ?? DEFAULT_MARKER,
    state: opts.state ?? 'present',
    requires: [fact('path', path)],
  }),

  describe: (s) => `block '${markers(s)[0]}' ${s.state === 'absent' ? 'removed from' : 'in'} '${s.path}'`,
  comment: (s) => (s.state === 'absent' ? `no block '${markers(s)[0]}' in ${s.path}` : `block of ${count(s)} in ${s.path} ('${markers(s)[0]}')`),
  touches: (s) => ({ needs: [fact('path', s.path)], changes: [fact('path', s.path)], writesFiles: true }),
  edits: (s) => [s.path],
  inRoot: true,

  shellHelpers: {
    blockinfile: {
      deps: ['eol', 'file'],
      code: [
        '# imgc_blockinfile FILE BEGIN END BLOCK: Ansible blockinfile on an existing FILE',
        '# (symbolic links followed; owner and mode kept): the lines from the last BEGIN',
        '# line to the last END line are replaced by BEGIN, the lines of BLOCK and END,',
        '# else those are appended; an empty BLOCK removes them.',
        'imgc_blockinfile() {',
        '  imgc_path=$(readlink -f -- "$1") || imgc_path=$1',
        '  if [ ! -f "$imgc_path" ]; then',
        '    printf \'imgc: %s: no such file (a block is edited in an existing file)\\n\' "$1" >&2',
        '    return 1',
        '  fi',
        '  imgc_want=$(IMGC_EOL=$(imgc_eol "$imgc_path") IMGC_BEGIN=$2 IMGC_END=$3 IMGC_BLOCK=$4 LC_ALL=C awk \'',
        '    BEGIN { m0 = ENVIRON["IMGC_BEGIN"]; m1 = ENVIRON["IMGC_END"]; eol = ENVIRON["IMGC_EOL"] }',
        '    {',
        '      l[NR] = $0',
        '      if ($0 == m0) { p0 = n0; n0 = NR }',
        '      if ($0 == m1) { p1 = n1; n1 = NR }',
        '    }',
        '    END {',
        '      n = NR',
        '      # A marker counts only as a whole line, line break included.',
        '      if (!eol && n0 == n) n0 = p0',
        '      if (!eol && n1 == n) n1 = p1',
        '      if (n0 && n1) {',
        '        a = n0 < n1 ? n0 : n1',
        '        b = n0 < n1 ? n1 : n0',
        '      } else {',
        '        a = n + 1',
        '        b = n',
        '      }',
        '      for (i = 1; i < a; i++) print l[i]',
        '      block = ENVIRON["IMGC_BLOCK"]',
        '      if (block != "") {',
        '        sub(/\\n$/, "", block)',
        '        print m0',
        '        print block',
        '        print m1',
        '      }',
        '      for (i = b + 1; i <= n; i++) printf "%s%s", l[i], (i < n || eol ? "\\n" : "")',
        '    }',
        '  \' "$imgc_path" && printf x)',
        '  imgc_file "$imgc_path" \'\' \'\' \'\' "${imgc_want%x}"',
        '}',
      ],
    },
  },
  shell: (s) => shellLine(`imgc_blockinfile ${words([s.path, ...markers(s)])} \\\n    ${words([s.state === 'absent' ? '' : s.block])}`, 'blockinfile'),
  ansible: (s) => [
    task({
      name: stepTaskName(`${s.state === 'absent' ? 'Remove block' : 'Block'} ${labelText(markers(s)[0])} ${s.state === 'absent' ? 'from' : 'in'} ${labelText(s.path)}`, s),
      module: 'ansible.builtin.blockinfile',
      args: map({
        path: unsafe(s.path),
        marker: unsafe(s.marker),
        block: s.state === 'present' ? unsafe(s.block) : undefined,
        state: word(s.state),
      }),
    }),
  ],
  cloudInit: {
    run: (s) => [call([fn('blockinfile'), s.path, ...markers(s), s.state === 'absent' ? '' : s.block], 'blockinfile')],
  },
  packer: { comment: (s) => `block '${markers(s)[0]}' in ${s.path}` },

  runtime: (s) =>
    s.state === 'present'
      ? { creations: [{ token: s.id, kind: 'block', file: s.path, marker: s.marker }], kept: 'a block the step replaced is not put back' }
      : { creations: [], kept: 'a removed block is not put back: what it held is not recorded' },

  verify: {
    root: (s) => [
      {
        subject: `blockInFile:${s.path}:${s.marker}`,
        what: `block '${markers(s)[0]}' ${s.state === 'absent' ? 'not ' : ''}in ${s.path}`,
        check: (r) => {
          const text = r.view.readFile(s.path);
          if (text === undefined) return `${s.path} does not exist`;
          const [begin, end] = markers(s);
          const body = text.toString('utf8');
          if (s.state === 'absent') return body.split('\n').includes(begin) ? `${s.path} still has the line '${begin}'` : undefined;
          const want = `${begin}\n${s.block.replace(/\n$/, '')}\n${end}\n`;
          return body === want || body.startsWith(want) || body.includes(`\n${want}`) ? undefined : `${s.path} has no block '${begin}' with the step's ${count(s)}`;
        },
      },
    ],
  },
} as const satisfies StepKind<BlockInFileStep> & { make(path: string, block: string, opts?: BlockInFileOptions): StepInput<BlockInFileStep> };
