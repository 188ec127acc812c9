// directory: a directory with its owner, group and mode (parents made as needed).
import { z } from '../util/zod.js';
import { AbsPath, Ownership, stepBase } from '../core/fields.js';
import { word } from '../emit/shell/quote.js';
import { unsafe, word as aWord } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { ansibleOwnership, call, cloudMode4, ownerFacts, ownershipProblem, shellAttrs, shellLine, ownedFields, ownedRequires, type Owned } from './shared.js';
import type { StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';

const schema = z.object({ ...stepBase, kind: z.literal('directory'), path: AbsPath, ...Ownership }).strict();
type DirectoryStep = z.infer<typeof schema>;

export const directory = {
  kind: 'directory',
  schema,
  make: (path: string, opts: Owned = {}): StepInput<DirectoryStep> => ({ kind: 'directory', path, ...ownedFields(opts), provides: [fact('path', path)], requires: ownedRequires(path, opts) }),
  describe: (s) => `directory '${s.path}'`,
  comment: (s) => `directory ${s.path}`,
  paths: (s) => [[s.path, 'directory']],
  touches: (s) => ({ needs: ownerFacts(s), changes: [{ kind: 'path', key: s.path }], writesFiles: true }),
  inRoot: true,
  owners: (s) => ({ owner: s.owner, group: s.group }),
  factDetails: (s, f) => (f.kind === 'path' && s.path === f.key ? { type: 'dir', ...(s.owner ? { owner: s.owner } : {}), ...(s.group ? { group: s.group } : {}), ...(s.mode ? { mode: s.mode } : {}) } : {}),

  shell: (s) => shellLine(`imgc_dir ${word(s.path)} ${shellAttrs(s)}`, 'dir'),
  ansible: (s) => {
    const o = ansibleOwnership(s);
    return [
      task({
        name: stepTaskName(`Directory ${labelText(s.path)}`, s),
        module: 'ansible.builtin.file',
        ...o,
        args: map({ path: unsafe(s.path), state: aWord('directory'), ...o.args }),
      }),
    ];
  },
  cloudInit: {
    run: (s) => [call([fn('dir'), s.path, cloudMode4(s.mode), s.owner ?? '', s.group ?? ''], 'dir')],
  },

  runtime: (s, { path }) => ({ creations: path(s.path, 'directory') }),

  verify: {
    root: (s) => [
      {
        subject: `fact:path:${s.path}`,
        what: `directory ${s.path}`,
        check: (r) => {
          const m = r.view.stat(s.path);
          if (!m) return `${s.path} does not exist`;
          if (m.type !== 'dir') return `${s.path} is a ${m.type}, not a directory`;
          return ownershipProblem(r, s.path, s);
        },
      },
    ],
  },
} as const satisfies StepKind<DirectoryStep>;
