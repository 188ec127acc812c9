// symlink: a symbolic link pointing at `target`.
import { z } from '../util/zod.js';
import { AbsPath, stepBase } from '../core/fields.js';
import { words } from '../emit/shell/quote.js';
import { unsafe, word } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import type { StepKind, StepInput } from './kind.js';
import { fact, parentDir } from '../core/facts.js';

const schema = z.object({ ...stepBase, kind: z.literal('symlink'), path: AbsPath, target: z.string().min(1) }).strict();
type SymlinkStep = z.infer<typeof schema>;

export const symlink = {
  kind: 'symlink',
  schema,
  make: (path: string, target: string): StepInput<SymlinkStep> => ({ kind: 'symlink', path, target, provides: [fact('path', path)], requires: [fact('path', parentDir(path))] }),
  describe: (s) => `symlink '${s.path}'`,
  comment: (s) => `symlink ${s.path} -> ${s.target}`,
  paths: (s) => [[s.path, 'symlink']],
  touches: (s) => ({ changes: [{ kind: 'path', key: s.path }], writesFiles: true }),
  inRoot: true,
  writes: 'link',

  shellHelpers: {
    symlink: {
      deps: [],
      code: [
        '# imgc_symlink PATH TARGET: PATH is a symbolic link to TARGET.',
        'imgc_symlink() {',
        '  if [ -h "$1" ]; then',
        '    # readlink ends its output with a newline; the x keeps $( ) from eating',
        '    # newlines that belong to the target, and both go again below.',
        '    imgc_have=$(readlink -- "$1" && printf x)',
        '    if [ "${imgc_have%?x}" = "$2" ]; then',
        '      return 0',
        '    fi',
        '  elif [ -d "$1" ]; then',
        '    printf \'imgc: %s is a directory, not a symbolic link\\n\' "$1" >&2',
        '    return 1',
        '  fi',
        '  ln -sfn -- "$2" "$1"',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s) => shellLine(`imgc_symlink ${words([s.path, s.target])}`, 'symlink'),
  ansible: (s) => [
    task({
      name: stepTaskName(`Symlink ${labelText(s.path)} -> ${labelText(s.target)}`, s),
      module: 'ansible.builtin.file',
      args: map({ path: unsafe(s.path), src: unsafe(s.target), state: word('link') }),
    }),
  ],
  cloudInit: {
    run: (s) => [call([fn('symlink'), s.path, s.target], 'symlink')],
  },

  runtime: (s, { path }) => ({ creations: path(s.path, 'symlink') }),

  verify: {
    root: (s) => [
      {
        subject: `fact:path:${s.path}`,
        what: `symlink ${s.path}`,
        check: (r) => {
          const t = r.view.readlink(s.path);
          if (t === undefined) return `${s.path} is not a symlink`;
          return t === s.target ? undefined : `${s.path} points to '${t}', not '${s.target}'`;
        },
      },
    ],
  },
} as const satisfies StepKind<SymlinkStep>;
