// clean: removes paths (with what lies below them) or empties files, the
// work of image-builder's sysprep role: machine-id, SSH host keys, apt lists,
// logs, temporary files. A path's last segment may be an sh glob (`*`, `?`,
// `[...]`, matched as sh matches: no leading dot unless the pattern has one);
// a pattern that names nothing is no error, so a second run changes nothing.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { globMatches, globParts, isGlob } from '../core/glob.js';
import { stepBase } from '../core/fields.js';
import { words } from '../emit/shell/quote.js';
import { bool, str, template, unsafe, word } from '../emit/ansible/quote.js';
import { entry, map } from '../emit/ansible/yaml.js';
import { task, type Task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import type { RootExpectation, StepInput, StepKind } from './kind.js';

/** An absolute path, globs in its last segment only, nothing a shell would split or that climbs out. */
const CleanPath = z
  .string()
  .regex(/^\/./, 'paths to remove or empty are absolute, and not / itself')
  .regex(/^[^\s]*$/, 'paths to remove or empty hold no white space (a glob is expanded by the shell)')
  .refine((p) => !p.split('/').includes('..'), 'paths to remove or empty have no ".." segment')
  .refine((p) => !isGlob(p.slice(0, p.lastIndexOf('/'))), 'globs (*, ?, [...]) may stand in the last segment of a path only')
  .refine((p) => !p.includes('**'), '"**" is not a glob here: * matches within one segment');

const schema = z
  .object({ ...stepBase, kind: z.literal('clean'), action: z.enum(['remove', 'truncate']), paths: z.array(CleanPath).min(1) })
  .strict();
type CleanStep = z.infer<typeof schema>;

const list = (s: CleanStep): string => s.paths.join(', ');

/** The registered result of finding a glob's matches: a one-word variable name per step and pattern. */
const found = (s: CleanStep, n: number): string => `imgc_${s.id.replace(/[^A-Za-z0-9]/g, '_').toLowerCase()}_${n + 1}`;

const ansibleTasks = (s: CleanStep): Task[] =>
  s.paths.flatMap((p, n): Task[] => {
    // A plain path to remove needs no search; the file module's absent is idempotent.
    if (s.action === 'remove' && !isGlob(p))
      return [task({ name: stepTaskName(`Remove ${p}`, s), module: 'ansible.builtin.file', args: map({ path: unsafe(p), state: word('absent') }) })];
    const { dir, name } = globParts(p);
    const reg = found(s, n);
    const each = { loop: template(`${reg}.files`), label: template('item.path') };
    return [
      task({
        name: stepTaskName(`Find ${p}`, s),
        module: 'ansible.builtin.find',
        // find's patterns are shell globs too; like sh, a pattern without a leading dot skips hidden names.
        args: map({ paths: unsafe(dir), patterns: unsafe(name), file_type: word(s.action === 'remove' ? 'any' : 'file'), hidden: bool(name.startsWith('.')) }),
        keywords: [entry('register', word(reg))],
      }),
      task({
        name: stepTaskName(`${s.action === 'remove' ? 'Remove' : 'Empty'} ${p}`, s),
        module: s.action === 'remove' ? 'ansible.builtin.file' : 'community.general.filesize',
        args: s.action === 'remove' ? map({ path: template('item.path'), state: word('absent') }) : map({ path: template('item.path'), size: str('0') }),
        keywords: [entry('loop', each.loop), entry('loop_control', map({ label: each.label }))],
      }),
    ];
  });

/** What verify expects: a removed plain path is gone and a glob names nothing; an emptied file that exists is empty. */
const expectations = (s: CleanStep): RootExpectation[] =>
  s.paths.map((p) => {
    if (!isGlob(p))
      return {
        // The path's own subject: a later step that makes the path again replaces this expectation.
        subject: `fact:path:${p}`,
        what: `${p} ${s.action === 'remove' ? 'removed' : 'empty'}`,
        check: (r) => {
          if (s.action === 'remove') return r.view.lstat(p) ? `${p} still exists` : undefined;
          const m = r.view.lstat(p);
          if (!m || m.type !== 'file') return undefined;
          const size = r.view.readFile(p)?.length ?? 0;
          return size === 0 ? undefined : `${p} is not empty (${size} bytes)`;
        },
      };
    const { dir } = globParts(p);
    return {
      subject: `clean:${s.action}:${p}`,
      what: `${p} ${s.action === 'remove' ? 'removed' : 'emptied'}`,
      check: (r) => {
        const matches = r.view.readdir(dir).map((e) => `${dir === '/' ? '' : dir}/${e}`).filter((e) => globMatches(p, e));
        const left = s.action === 'remove' ? matches : matches.filter((m) => r.view.lstat(m)?.type === 'file' && (r.view.readFile(m)?.length ?? 0) > 0);
        return left.length ? `${s.action === 'remove' ? 'still there' : 'not empty'}: ${left.join(', ')}` : undefined;
      },
    };
  });

export const clean = {
  kind: 'clean',
  schema,
  /** Removing a path takes its fact (and, for the checker, what lies below it or what a glob names); emptying a file keeps it. */
  make: (action: CleanStep['action'], paths: readonly string[]): StepInput<CleanStep> => ({
    kind: 'clean',
    action,
    paths: [...paths],
    removes: action === 'remove' ? paths.map((p) => fact('path', p)) : [],
  }),

  describe: (s) => `${s.action === 'remove' ? 'removal' : 'emptying'} of ${s.paths.map((p) => `'${p}'`).join(', ')}`,
  comment: (s) => `${s.action === 'remove' ? 'remove' : 'empty'} ${list(s)}`,
  touches: (s) => ({ changes: s.paths.map((p) => fact('path', isGlob(p) ? globParts(p).dir : p)), writesFiles: true }),
  inRoot: true,

  shellHelpers: {
    remove: {
      deps: [],
      code: [
        '# imgc_remove PATTERN...: removes each path a PATTERN names, with what lies',
        '# below it. The last segment of a pattern may hold sh globs (* ? [...]); one',
        '# that names nothing is no error. Patterns hold no white space (the IR refuses it).',
        'imgc_remove() {',
        '  for imgc_pattern in "$@"; do',
        '    # Unquoted on purpose: the glob expands here, in the root.',
        '    # shellcheck disable=SC2086',
        '    for imgc_path in $imgc_pattern; do',
        '      if [ -e "$imgc_path" ] || [ -L "$imgc_path" ]; then',
        '        rm -rf -- "$imgc_path"',
        '        imgc_dirty=1',
        '      fi',
        '    done',
        '  done',
        '}',
      ],
    },
    truncate: {
      deps: [],
      code: [
        '# imgc_truncate PATTERN...: empties each regular file a PATTERN names (globs as',
        '# for imgc_remove), keeping its owner and mode; a missing file stays missing.',
        'imgc_truncate() {',
        '  for imgc_pattern in "$@"; do',
        '    # shellcheck disable=SC2086',
        '    for imgc_path in $imgc_pattern; do',
        '      if [ -f "$imgc_path" ] && [ ! -L "$imgc_path" ] && [ -s "$imgc_path" ]; then',
        '        : >"$imgc_path"',
        '        imgc_dirty=1',
        '      fi',
        '    done',
        '  done',
        '}',
      ],
    },
  },
  shell: (s) => ({ lines: [`imgc_${s.action} ${words(s.paths)}`], helpers: [s.action] }),
  ansible: ansibleTasks,
  cloudInit: {
    run: (s) => [{ argv: [fn(s.action), ...s.paths], helpers: [s.action] }],
  },
  packer: { comment: (s) => `${s.action === 'remove' ? 'remove' : 'empty'} ${list(s)}` },

  runtime: (s) => ({ creations: [], kept: `what ${s.action === 'remove' ? 'a removal' : 'emptying a file'} took is gone: decommission cannot bring it back` }),

  verify: {
    root: expectations,
    // Nothing on a booted node: it makes a machine-id, keys and logs of its own as it boots.
  },
} as const satisfies StepKind<CleanStep> & { make(action: CleanStep['action'], paths: readonly string[]): StepInput<CleanStep> };
