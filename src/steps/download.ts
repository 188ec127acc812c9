// download: a file fetched from a URL into the root, checked against a
// required sha256 before it takes its place (image-builder's get_url tasks
// for kubectl, crictl, CNI plugins). A chroot build fetches it on the build
// machine into the cache by its sum (`downloads`) and hands it to the phase
// script: nothing inside the root needs the network for it.
import { z } from '../util/zod.js';
import { fact, parentDir } from '../core/facts.js';
import { AbsPath, Ownership, stepBase } from '../core/fields.js';
import { commandAt, DownloadUrl, fetchNeeds, Sha256 } from './fetch.js';
import { hasMarker } from '../core/variables.js';
import { createHash } from 'node:crypto';
import { words } from '../emit/shell/quote.js';
import { unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { ansibleOwnership, call, cloudMode4, normalMode, ownerFacts, ownershipProblem, type Owned } from './shared.js';
import type { RootExpectation, StepInput, StepKind } from './kind.js';

const schema = z.object({ ...stepBase, kind: z.literal('download'), url: DownloadUrl, sha256: Sha256, path: AbsPath, ...Ownership }).strict();
type DownloadStep = z.infer<typeof schema>;

/** Options of a download (and of an archive's fetch). */
export interface DownloadOptions extends Owned {
  readonly sha256: string;
}

/** The sum of a file in the root, compared with a declared one (skipped when the sum is a variable). */
export const sumProblem = (bytes: Buffer, sha256: string, p: string): string | undefined => {
  if (hasMarker(sha256)) return undefined;
  const got = createHash('sha256').update(bytes).digest('hex');
  return got === sha256 ? undefined : `${p}: sha256 is ${got}, not ${sha256}`;
};

export const download = {
  kind: 'download',
  schema,
  make: (url: string, path: string, o: DownloadOptions): StepInput<DownloadStep> => ({
    kind: 'download',
    url,
    sha256: o.sha256,
    path,
    ...(o.owner !== undefined ? { owner: o.owner } : {}),
    ...(o.group !== undefined ? { group: o.group } : {}),
    ...(o.mode !== undefined ? { mode: o.mode } : {}),
    provides: [fact('path', path), ...(o.mode !== undefined ? commandAt(path, o.mode) : [])],
    requires: [fact('path', parentDir(path)), ...ownerFacts(o), ...fetchNeeds],
  }),

  describe: (s) => `download '${s.path}'`,
  comment: (s) => `download ${s.path} (sha256 checked)`,
  paths: (s) => [[s.path, 'file']],
  touches: (s) => ({ needs: [...ownerFacts(s), ...fetchNeeds], changes: [fact('path', s.path)], writesFiles: true }),
  inRoot: true,
  // The shell target's build fetches it on the build machine and hands it over (src/build/runner.ts); the
  // ansible target's get_url fetches inside the root, which needs a resolver there.
  chroot: { network: () => true },
  downloads: (s) => [{ url: s.url, sha256: s.sha256 }],
  variables: ['url', 'sha256'],

  shellHelpers: {
    download: {
      deps: ['attrs', 'parent', 'get'],
      code: [
        '# imgc_download URL SHA256 PATH MODE OWNER GROUP: PATH is the file at URL, checked',
        '# against SHA256 before it takes PATH\'s place (a file there with that sum stays).',
        '# A new file is 0644 root:root unless given.',
        'imgc_download() {',
        '  if [ -f "$3" ] && [ ! -h "$3" ] && printf \'%s  %s\\n\' "$2" "$3" | sha256sum -c --status; then',
        '    imgc_attrs "$3" "$4" "$5" "$6"',
        '    return 0',
        '  fi',
        '  imgc_parent "$3"',
        '  imgc_tmp=$(mktemp "$3.imgc-XXXXXX")',
        '  if ! imgc_get "$1" "$2" "$imgc_tmp"; then',
        '    rm -f -- "$imgc_tmp"',
        '    imgc_tmp=',
        '    return 1',
        '  fi',
        '  chmod 0644 "$imgc_tmp"',
        '  imgc_attrs "$imgc_tmp" "$4" "$5" "$6"',
        '  mv -f -- "$imgc_tmp" "$3"',
        '  imgc_tmp=',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s) => ({ lines: [`imgc_download ${words([s.url, s.sha256, s.path, normalMode(s.mode), s.owner ?? '', s.group ?? ''])}`], helpers: ['download'] }),
  ansible: (s) => {
    const o = ansibleOwnership(s);
    return [
      task({
        name: stepTaskName(`Download ${labelText(s.path)}`, s),
        module: 'ansible.builtin.get_url',
        ...o,
        args: map({ url: unsafe(s.url), dest: unsafe(s.path), checksum: unsafe(`sha256:${s.sha256}`), ...o.args }),
      }),
    ];
  },
  cloudInit: {
    run: (s) => [call([fn('download'), s.url, s.sha256, s.path, cloudMode4(s.mode), s.owner ?? '', s.group ?? ''], 'download')],
  },

  runtime: (s, { path }) => ({ creations: path(s.path, 'file') }),

  verify: {
    root: (s): RootExpectation[] => [
      {
        subject: `fact:path:${s.path}`,
        what: `download ${s.path}`,
        check: (r) => {
          const m = r.view.lstat(s.path);
          if (!m) return `${s.path} does not exist`;
          if (m.type !== 'file') return `${s.path} is a ${m.type}, not a regular file`;
          return sumProblem(r.view.readFile(s.path) ?? Buffer.alloc(0), s.sha256, s.path) ?? ownershipProblem(r, s.path, s);
        },
      },
    ],
  },
} as const satisfies StepKind<DownloadStep> & { make(url: string, path: string, o: DownloadOptions): StepInput<DownloadStep> };
