// aptRepository: an apt source as a deb822 .sources file, and its signing key
// (text, or a URL fetched once at build time). apt bases only.
import { z } from '../util/zod.js';
import { AbsPath, Word, oneWord, oneWordMessage, stepBase, urlOrReference } from '../core/fields.js';
import { aptKeyPath, aptSourcesPath, debSources, parseDeb822Sources } from '../core/apt.js';
import type { RootFacts } from '../core/root.js';
import { word, words } from '../emit/shell/quote.js';
import type { Emitted } from '../emit/shell/emitted.js';
import { bool, mode, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn, type Call } from '../emit/cloud-init/calls.js';
import { call, shellAttrs, writeFile } from './shared.js';
import type { PathKind, StepKind, StepInput } from './kind.js';
import { fact } from '../core/facts.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('aptRepository'),
    /** The file /etc/apt/sources.list.d/<name>.sources: apt ignores other names (sources.list(5)). */
    name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'apt source names are letters, digits, "_", "." or "-" (apt ignores other .sources file names)'),
    // The word check first: zod's url() drops tabs and line breaks, as URL parsers do.
    uri: urlOrReference(z.string().regex(oneWord, oneWordMessage).url()),
    /** "/" alone for a flat repository. */
    suites: z.array(Word).min(1),
    components: z.array(Word),
    /** ASCII-armored key text, written to keyPath. */
    key: z.string().optional(),
    /** Or: where to download the ASCII-armored key from at build time. */
    keyUrl: urlOrReference(z.string().url()).optional(),
    keyPath: AbsPath.regex(oneWord, oneWordMessage).optional(),
  })
  .strict();
type AptRepositoryStep = z.infer<typeof schema>;

const repoCheck = (r: RootFacts, s: AptRepositoryStep): string | undefined => {
  const file = `/etc/apt/sources.list.d/${s.name}.sources`;
  const text = r.view.readFile(file)?.toString('utf8');
  if (text === undefined) return `${file} does not exist`;
  const entries = parseDeb822Sources(text, file);
  const e = entries[0];
  if (!e) return `${file} has no source entry`;
  const problems: string[] = [];
  const norm = (u: string) => u.replace(/\/+$/, '');
  if (!e.types.includes('deb')) problems.push(`Types is '${e.types.join(' ')}', not deb`);
  if (!e.uris.map(norm).includes(norm(s.uri))) problems.push(`URIs is '${e.uris.join(' ')}', not ${s.uri}`);
  if (e.suites.join(' ') !== s.suites.join(' ')) problems.push(`Suites is '${e.suites.join(' ')}', not '${s.suites.join(' ')}'`);
  if (e.components.join(' ') !== s.components.join(' ')) problems.push(`Components is '${e.components.join(' ')}', not '${s.components.join(' ')}'`);
  if (s.keyPath) {
    if (e.signedBy !== s.keyPath) problems.push(`Signed-By is '${e.signedBy ?? ''}', not ${s.keyPath}`);
    const key = r.view.readFile(s.keyPath);
    if (!key) problems.push(`key ${s.keyPath} does not exist`);
    else if (s.key !== undefined && key.toString('utf8').trim() !== s.key.trim()) problems.push(`key ${s.keyPath} differs from the definition's key`);
  }
  return problems.length ? `${file}: ${problems.join('; ')}` : undefined;
};

export const aptRepository = {
  kind: 'aptRepository',
  schema,
  make: (name: string, opts: { uri: string; suites: readonly string[]; components?: readonly string[]; key?: string; keyUrl?: string }): StepInput<AptRepositoryStep> => {
    const keyPath = opts.key !== undefined || opts.keyUrl !== undefined ? `/etc/apt/keyrings/${name}.asc` : undefined;
    return {
      kind: 'aptRepository',
      name,
      uri: opts.uri,
      suites: [...opts.suites],
      components: [...(opts.components ?? [])],
      ...(opts.key !== undefined ? { key: opts.key } : {}),
      ...(opts.keyUrl !== undefined ? { keyUrl: opts.keyUrl } : {}),
      ...(keyPath ? { keyPath } : {}),
      provides: [fact('repo', name), fact('path', aptSourcesPath(name)), ...(keyPath ? [fact('path', keyPath)] : [])],
      requires: [
        fact('path', '/etc/apt/sources.list.d'),
        ...(keyPath ? [fact('path', '/etc/apt/keyrings')] : []),
        ...(opts.keyUrl !== undefined ? [fact('command', 'curl')] : []),
      ],
    };
  },
  // A .sources file means something only to apt: on another base it is a mistake in the image, whichever target compiles it.
  onBase: (family) => (family === 'apt' ? undefined : `an apt repository cannot be added to a ${family} base; use a repository step of its package manager`),
  describe: (s) => `apt repository '${s.name}'`,
  comment: (s) => `apt source ${s.name}`,
  paths: (s) => [[aptSourcesPath(s.name), 'file'], ...(s.keyPath ? [[s.keyPath, 'file'] as [string, PathKind]] : [])],
  touches: (s) => ({
    changes: [{ kind: 'repo', key: s.name }, { kind: 'path', key: aptSourcesPath(s.name) }, ...(s.keyPath !== undefined ? [{ kind: 'path' as const, key: s.keyPath }] : [])],
    writesFiles: true,
  }),
  inRoot: true,
  addsSource: true,
  chroot: { network: () => true },
  variables: ['uri', 'keyUrl'],

  shellHelpers: {
    fetch: {
      deps: ['parent'],
      code: [
        '# imgc_fetch URL PATH: downloads URL to PATH unless PATH exists and is not empty.',
        'imgc_fetch() {',
        '  if [ -s "$2" ]; then',
        '    return 0',
        '  fi',
        '  imgc_parent "$2"',
        '  imgc_tmp=$(mktemp "$2.imgc-XXXXXX")',
        '  curl -fsSL --retry 3 -o "$imgc_tmp" --url "$1"',
        '  chmod 0644 "$imgc_tmp"',
        '  mv -f -- "$imgc_tmp" "$2"',
        '  imgc_tmp=',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s, ctx) => {
    const keyPath = aptKeyPath(s) ?? '';
    const key: Emitted =
      s.key !== undefined
        ? { lines: [`imgc_parent ${word(keyPath)}`, `imgc_file ${word(keyPath)} ${shellAttrs({ mode: '0644' })} \\\n    ${word(s.key)}`], helpers: ['parent', 'file'] }
        : s.keyUrl !== undefined
          ? { lines: [`imgc_fetch ${words([s.keyUrl, keyPath])}`], helpers: ['fetch'] }
          : { lines: [], helpers: [] };
    const after = ctx.installsAfter(s) ? ctx.pm.repositoryChanged : { lines: [], helpers: [] };
    return {
      lines: [...key.lines, `imgc_file ${word(aptSourcesPath(s.name))} ${shellAttrs({ mode: '0644' })} \\\n    ${word(debSources(s))}`, ...after.lines],
      helpers: [...key.helpers, 'file', ...after.helpers],
    };
  },
  ansible: (s, ctx) => {
    // The schema allows apt repositories on apt bases only, and keeps each field to one word.
    const keyPath = aptKeyPath(s);
    const repo = labelText(s.name);
    ctx.refresh = true;
    return [
      ...(s.key !== undefined && keyPath
        ? [
            task({
              name: stepTaskName(`Apt repository ${repo}: signing key`, s),
              module: 'ansible.builtin.copy',
              args: map({ content: unsafe(s.key), dest: unsafe(keyPath), mode: mode('0644') }),
            }),
          ]
        : s.keyUrl !== undefined && keyPath
          ? [
              task({
                name: stepTaskName(`Apt repository ${repo}: signing key`, s),
                module: 'ansible.builtin.get_url',
                comments: ['Downloaded only when the key file is missing (force: false).'],
                args: map({ url: unsafe(s.keyUrl), dest: unsafe(keyPath), mode: mode('0644'), force: bool(false) }),
              }),
            ]
          : []),
      // ansible.builtin.deb822_repository is not in ansible-core 2.14: the .sources file is written as a file.
      task({
        name: stepTaskName(`Apt repository ${repo}: sources`, s),
        module: 'ansible.builtin.copy',
        args: map({ content: unsafe(debSources(s)), dest: unsafe(aptSourcesPath(s.name)), mode: mode('0644') }),
      }),
    ];
  },
  cloudInit: {
    // A key URL is fetched by runcmd; key text and the .sources file are plain files.
    stages: (s) => (s.keyUrl !== undefined && s.key === undefined ? [] : ['write_files', 'write_files_deferred']),
    run: (s, ctx) => {
      const keyPath = aptKeyPath(s) ?? '';
      const key: Call[] =
        s.key !== undefined
          ? [call([fn('parent'), keyPath], 'parent'), call([fn('file'), keyPath, '0644', '', '', s.key], 'file')]
          : s.keyUrl !== undefined
            ? [call([fn('fetch'), s.keyUrl, keyPath], 'fetch')]
            : [];
      return [...key, call([fn('file'), aptSourcesPath(s.name), '0644', '', '', debSources(s)], 'file'), ctx.packageManager().sourcesChanged];
    },
    entries: (s, stage) => {
      const defer = stage === 'write_files_deferred';
      return [
        ...(s.key !== undefined ? [writeFile(aptKeyPath(s) ?? '', s.key, { mode: '0644' }, defer)] : []),
        writeFile(aptSourcesPath(s.name), debSources(s), { mode: '0644' }, defer),
      ];
    },
  },

  packer: { comment: (s) => `apt repository ${s.name}` },

  runtime: (s, { path }) => {
    const key = s.keyPath ?? (s.key !== undefined || s.keyUrl !== undefined ? `/etc/apt/keyrings/${s.name}.asc` : undefined);
    return { creations: [...(key !== undefined ? path(key, 'file', 0) : []), ...path(aptSourcesPath(s.name), 'file', 1)] };
  },

  verify: {
    root: (s) => [{ subject: `fact:repo:${s.name}`, what: `apt repository '${s.name}'`, check: (r) => repoCheck(r, s) }],
  },
} as const satisfies StepKind<AptRepositoryStep>;
