// file: a file with exactly this content, owner, group and mode. sudoers and
// sshd configuration are checked by the tool that reads them before they take
// their place (src/emit/validators.ts).
import { z } from '../util/zod.js';
import { AbsPath, Ownership, stepBase } from '../core/fields.js';
import { word } from '../emit/shell/quote.js';
import { unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { validatorFor } from '../emit/validators.js';
import { ansibleOwnership, ansibleValidate, call, checkHelper, cloudMode4, ownerFacts, ownershipProblem, shellAttrs, shellLine, writeFile, ownedFields, ownedRequires, type Owned } from './shared.js';
import type { StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';

const schema = z.object({ ...stepBase, kind: z.literal('file'), path: AbsPath, content: z.string(), ...Ownership }).strict();
type FileStep = z.infer<typeof schema>;

export const file = {
  kind: 'file',
  schema,
  make: (path: string, opts: Owned & { content: string }): StepInput<FileStep> => ({
    kind: 'file',
    path,
    content: opts.content,
    ...ownedFields(opts),
    provides: [fact('path', path)],
    requires: ownedRequires(path, opts),
  }),
  describe: (s) => `file '${s.path}'`,
  comment: (s) => `file ${s.path}`,
  paths: (s) => [[s.path, 'file']],
  touches: (s) => ({ needs: ownerFacts(s), changes: [{ kind: 'path', key: s.path }], writesFiles: true }),
  inRoot: true,
  writes: 'content',
  owners: (s) => ({ owner: s.owner, group: s.group }),
  factDetails: (s, f) => (f.kind === 'path' && s.path === f.key ? { type: 'file', ...(s.owner ? { owner: s.owner } : {}), ...(s.group ? { group: s.group } : {}), ...(s.mode ? { mode: s.mode } : {}) } : {}),
  variables: ['content'],

  shell: (s) => {
    const check = validatorFor(s.path);
    const line = `imgc_file ${word(s.path)} ${shellAttrs(s)} \\\n    ${word(s.content)}`;
    if (!check) return shellLine(line, 'file');
    return shellLine(`imgc_checked ${checkHelper[check].fn} ${line}`, 'checked', checkHelper[check].helper, 'file');
  },
  ansible: (s) => {
    const o = ansibleOwnership(s);
    return [
      task({
        name: stepTaskName(`File ${labelText(s.path)}`, s),
        module: 'ansible.builtin.copy',
        ...o,
        args: map({ content: unsafe(s.content), dest: unsafe(s.path), ...o.args, ...ansibleValidate(s.path) }),
      }),
    ];
  },
  cloudInit: {
    // write_files cannot check a file before it takes its place; runcmd's helper does (src/emit/validators.ts).
    stages: (s) => (validatorFor(s.path) ? [] : ['write_files', 'write_files_deferred']),
    run: (s) => {
      const argv = [fn('file'), s.path, cloudMode4(s.mode), s.owner ?? '', s.group ?? '', s.content];
      const check = validatorFor(s.path);
      return [check ? call([fn('checked'), checkHelper[check].fn, ...argv], 'checked', checkHelper[check].helper, 'file') : call(argv, 'file')];
    },
    entries: (s, stage) => [writeFile(s.path, s.content, s, stage === 'write_files_deferred')],
  },

  runtime: (s, { path }) => ({ creations: path(s.path, 'file') }),

  verify: {
    root: (s) => [
      {
        subject: `fact:path:${s.path}`,
        what: `file ${s.path}`,
        check: (r) => {
          const m = r.view.lstat(s.path);
          if (!m) return `${s.path} does not exist`;
          if (m.type !== 'file') return `${s.path} is a ${m.type}, not a regular file`;
          const got = r.view.readFile(s.path);
          const want = Buffer.from(s.content, 'utf8');
          if (!got || !got.equals(want)) return `${s.path}: content differs from the definition (${got?.length ?? 0} bytes, expected ${want.length})`;
          return ownershipProblem(r, s.path, s);
        },
      },
    ],
  },
} as const satisfies StepKind<FileStep>;
