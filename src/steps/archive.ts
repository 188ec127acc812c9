// archive: a tar (gz, xz, zst) or zip archive fetched by URL with a required
// sha256 (the download kind's fetch, cached the same way) and unpacked into a
// directory of the root (image-builder's crictl, CNI plugins and containerd
// release tarballs). The checker cannot see into an archive, so the step
// declares the paths the image relies on (`/usr/local/bin/crictl`); they are
// its facts, what verify expects and what decommission removes, and the
// archive is unpacked again only when one of them is missing.
import { z } from '../util/zod.js';
import { DefinitionError } from '../core/definition-error.js';
import { fact, type Fact } from '../core/facts.js';
import { AbsPath, Ownership, stepBase } from '../core/fields.js';
import { words } from '../emit/shell/quote.js';
import { bool, mode as ansibleMode, str, unsafe } from '../emit/ansible/quote.js';
import { map, seq } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { ansibleOwnership, call, cloudMode4, normalMode, ownedFields, ownedRequires, ownerFacts, ownershipProblem, type Owned } from './shared.js';
import { commandAt, DownloadUrl, fetchNeeds, Sha256 } from './fetch.js';
import type { RootExpectation, StepInput, StepKind } from './kind.js';

export const archiveFormats = ['tar.gz', 'tar.xz', 'tar.zst', 'zip'] as const;
export type ArchiveFormat = (typeof archiveFormats)[number];

/** The command each format needs in the root besides curl. */
const formatNeeds: Record<ArchiveFormat, readonly string[]> = {
  'tar.gz': ['tar', 'gzip'],
  'tar.xz': ['tar', 'xz'],
  'tar.zst': ['tar', 'zstd'],
  zip: ['unzip'],
};

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('archive'),
    url: DownloadUrl,
    sha256: Sha256,
    format: z.enum(archiveFormats),
    /** The directory it is unpacked into (made if missing, with owner/group/mode). */
    dest: AbsPath,
    /** Leading path components dropped from each member (tar --strip-components). */
    strip: z.number().int().min(0).max(16),
    /** The paths the image relies on: the archive's facts, checked by verify, removed by decommission. */
    creates: z.array(AbsPath).min(1, 'an archive declares at least one path it creates (the checker cannot see into it)'),
    ...Ownership,
  })
  .strict()
  .refine((s) => s.format !== 'zip' || s.strip === 0, { message: 'strip applies to tar archives only (unzip has no --strip-components)', path: ['strip'] });
type ArchiveStep = z.infer<typeof schema>;

export interface ArchiveOptions extends Owned {
  readonly sha256: string;
  /** Absent: read from the URL's ending (a URL that is a variable needs it). */
  readonly format?: ArchiveFormat;
  readonly strip?: number;
  readonly creates: readonly string[];
}

/** The format a URL's ending names, if any. */
export const formatOfUrl = (url: string): ArchiveFormat | undefined => {
  const u = url.replace(/[?#].*$/, '');
  if (/\.(tar\.gz|tgz)$/.test(u)) return 'tar.gz';
  if (/\.(tar\.xz|txz)$/.test(u)) return 'tar.xz';
  if (/\.(tar\.zst|tzst)$/.test(u)) return 'tar.zst';
  if (/\.zip$/.test(u)) return 'zip';
  return undefined;
};

const needs = (s: { format: ArchiveFormat }): Fact[] => [...fetchNeeds, ...formatNeeds[s.format].map((c) => fact('command', c))];

export const archive = {
  kind: 'archive',
  schema,
  /** The format, unless given, is the URL's (else a DefinitionError). */
  make: (url: string, dest: string, opts: ArchiveOptions & { format?: ArchiveFormat }): StepInput<ArchiveStep> => {
    const format = opts.format ?? formatOfUrl(url);
    if (!format) throw new DefinitionError(`archive ${url}: its format does not show in the URL; say it: { format: ${archiveFormats.map((f) => `'${f}'`).join(' | ')} }`);
    return {
      kind: 'archive',
      url,
      sha256: opts.sha256,
      format,
      dest,
      strip: opts.strip ?? 0,
      creates: [...opts.creates],
      ...ownedFields(opts),
      provides: [fact('path', dest), ...opts.creates.flatMap((p) => [fact('path', p), ...commandAt(p)])],
      requires: [...ownedRequires(dest, opts), ...needs({ format })],
    };
  },

  describe: (s) => `archive into '${s.dest}'`,
  comment: (s) => `unpack ${s.format} into ${s.dest} (sha256 checked): ${s.creates.join(' ')}`,
  paths: (s) => [[s.dest, 'directory']],
  touches: (s) => ({ needs: [...ownerFacts(s), ...needs(s)], changes: [fact('path', s.dest), ...s.creates.map((p) => fact('path', p))], writesFiles: true }),
  inRoot: true,
  chroot: { network: () => true },
  downloads: (s) => [{ url: s.url, sha256: s.sha256 }],
  variables: ['url', 'sha256'],

  shellHelpers: {
    archive: {
      deps: ['dir', 'get'],
      code: [
        '# imgc_archive URL SHA256 FORMAT STRIP DIR MODE OWNER GROUP PATH...: DIR (made if',
        '# missing, with MODE OWNER GROUP) holds the archive at URL unpacked, its sha256',
        '# checked first; OWNER and GROUP own what it unpacks. Unpacked in a temporary',
        '# directory, then copied in; again only when one of the PATHs it declares is',
        '# missing, and it fails when one is still missing after.',
        'imgc_archive() {',
        '  imgc_dir "$5" "$6" "$7" "$8"',
        '  imgc_a_url=$1',
        '  imgc_a_sum=$2',
        '  imgc_a_fmt=$3',
        '  imgc_a_strip=$4',
        '  imgc_a_dir=$5',
        '  imgc_a_own=$7${8:+:$8}',
        '  shift 8',
        '  imgc_a_missing=',
        '  for imgc_p in "$@"; do',
        '    if [ ! -e "$imgc_p" ] && [ ! -h "$imgc_p" ]; then',
        '      imgc_a_missing=1',
        '    fi',
        '  done',
        '  if [ -z "$imgc_a_missing" ]; then',
        '    return 0',
        '  fi',
        '  imgc_a_tmp=$(mktemp -d /tmp/imgc-archive-XXXXXX)',
        '  mkdir "$imgc_a_tmp/t"',
        '  if ! imgc_get "$imgc_a_url" "$imgc_a_sum" "$imgc_a_tmp/a"; then',
        '    rm -rf -- "$imgc_a_tmp"',
        '    return 1',
        '  fi',
        '  case $imgc_a_fmt in',
        '    zip) unzip -q "$imgc_a_tmp/a" -d "$imgc_a_tmp/t" ;;',
        '    tar.gz) tar -x -z --no-same-owner -f "$imgc_a_tmp/a" -C "$imgc_a_tmp/t" --strip-components="$imgc_a_strip" ;;',
        '    tar.xz) tar -x -J --no-same-owner -f "$imgc_a_tmp/a" -C "$imgc_a_tmp/t" --strip-components="$imgc_a_strip" ;;',
        '    *) tar -x --zstd --no-same-owner -f "$imgc_a_tmp/a" -C "$imgc_a_tmp/t" --strip-components="$imgc_a_strip" ;;',
        '  esac',
        '  if [ -n "$imgc_a_own" ]; then',
        '    find "$imgc_a_tmp/t" -mindepth 1 -exec chown -h -- "$imgc_a_own" {} +',
        '  fi',
        '  find "$imgc_a_tmp/t" -mindepth 1 -maxdepth 1 -exec cp -a -- {} "$imgc_a_dir/" \\;',
        '  rm -rf -- "$imgc_a_tmp"',
        '  imgc_dirty=1',
        '  for imgc_p in "$@"; do',
        '    if [ ! -e "$imgc_p" ] && [ ! -h "$imgc_p" ]; then',
        '      printf \'imgc: %s: the archive from %s did not hold it (check strip and the declared paths)\\n\' "$imgc_p" "$imgc_a_url" >&2',
        '      return 1',
        '    fi',
        '  done',
        '}',
      ],
    },
  },
  shell: (s) => ({
    lines: [`imgc_archive ${words([s.url, s.sha256, s.format, String(s.strip), s.dest, normalMode(s.mode), s.owner ?? '', s.group ?? '', ...s.creates])}`],
    helpers: ['archive'],
  }),
  ansible: (s) => {
    const o = ansibleOwnership(s);
    const fetched = `/tmp/imgc-archive-${s.sha256}.${s.format}`;
    const dest = labelText(s.dest);
    return [
      task({ name: stepTaskName(`Archive into ${dest}: directory`, s), module: 'ansible.builtin.file', ...o, args: map({ path: unsafe(s.dest), state: str('directory'), ...o.args }) }),
      task({
        name: stepTaskName(`Archive into ${dest}: download`, s),
        module: 'ansible.builtin.get_url',
        comments: ['Fetched to a temporary file, checked against its sha256, removed once unpacked.'],
        args: map({ url: unsafe(s.url), dest: unsafe(fetched), checksum: unsafe(`sha256:${s.sha256}`), mode: ansibleMode('0600') }),
      }),
      task({
        name: stepTaskName(`Archive into ${dest}: unpack`, s),
        module: 'ansible.builtin.unarchive',
        args: map({
          src: unsafe(fetched),
          dest: unsafe(s.dest),
          remote_src: bool(true),
          owner: o.args.owner,
          group: o.args.group,
          extra_opts: s.strip ? seq([str(`--strip-components=${s.strip}`)]) : undefined,
        }),
      }),
      task({ name: stepTaskName(`Archive into ${dest}: remove the download`, s), module: 'ansible.builtin.file', args: map({ path: unsafe(fetched), state: str('absent') }) }),
    ];
  },
  cloudInit: {
    run: (s) => [call([fn('archive'), s.url, s.sha256, s.format, String(s.strip), s.dest, cloudMode4(s.mode), s.owner ?? '', s.group ?? '', ...s.creates], 'archive')],
  },

  runtime: (s, { path }) => ({
    creations: [...path(s.dest, 'directory', 0), ...s.creates.flatMap((p, i) => path(p, 'file', i + 1))],
    kept: 'only the declared paths are removed (and the directory when empty): the rest of what the archive held is not known',
  }),

  verify: {
    root: (s): RootExpectation[] => [
      {
        subject: `fact:path:${s.dest}`,
        what: `directory ${s.dest}`,
        check: (r) => {
          const m = r.view.meta(s.dest);
          if (!m) return `${s.dest} does not exist`;
          if (m.type !== 'dir') return `${s.dest} is a ${m.type}, not a directory`;
          return ownershipProblem(r, s.dest, s);
        },
      },
      ...s.creates.map((p) => ({
        subject: `fact:path:${p}`,
        what: `${p} (from the archive into ${s.dest})`,
        check: (r: Parameters<RootExpectation['check']>[0]) => (r.view.lstat(p) ? undefined : `${p} does not exist: the archive did not hold it (check strip and the declared paths)`),
      })),
    ],
  },
} as const satisfies StepKind<ArchiveStep>;
