// unit: a systemd unit file, or a drop-in of a unit, under /etc/systemd/system
// (image-builder's kubelet.service and its 10-kubeadm.conf, containerd's
// drop-ins). A unit file provides its service; a drop-in requires the unit it
// changes. Written like a file (0644 root:root); the live-host handlers of the
// runtime outputs reload systemd after a change, keyed on the path
// (src/compilers/handlers.ts). Nothing is started.
import { z } from '../util/zod.js';
import { fact, type Fact } from '../core/facts.js';
import { stepBase } from '../core/fields.js';
import { word } from '../emit/shell/quote.js';
import { mode, str, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellAttrs, writeFile } from './shared.js';
import { UNIT_DIR, unitPath } from '../core/root.js';
import type { StepInput, StepKind } from './kind.js';

const ATTRS = { mode: '0644', owner: 'root', group: 'root' } as const;

/** A unit file's name: systemd reads only names with a unit type suffix. */
export const UnitFileName = z
  .string()
  .regex(/^[A-Za-z0-9@._:\\-]+\.(service|socket|timer|target|path|mount|automount|swap|slice)$/, 'a unit file name ends in its type: kubelet.service, fstrim.timer');
/** A drop-in's name: systemd reads only `*.conf` in a unit's `.d` directory. */
const DropInName = z.string().regex(/^[A-Za-z0-9@._-]+\.conf$/, 'a drop-in is a .conf file name (systemd reads nothing else in a unit\'s .d directory)');

const schema = z.object({ ...stepBase, kind: z.literal('unit'), unit: UnitFileName, dropIn: DropInName.optional(), content: z.string() }).strict();
type UnitStep = z.infer<typeof schema>;

/** Where the step's file is. */
/** The service facts of a unit: a `.service` unit answers to its bare name too (`kubelet`), as packages name it. */
export const serviceFacts = (unit: string): Fact[] => {
  const bare = unit.replace(/\.service$/, '');
  return bare === unit ? [fact('service', unit)] : [fact('service', bare), fact('service', unit)];
};

const what = (s: UnitStep): string => (s.dropIn === undefined ? `unit ${s.unit}` : `drop-in ${s.dropIn} of ${s.unit}`);

export const unit = {
  kind: 'unit',
  schema,
  make: (name: string, content: string, dropIn?: string): StepInput<UnitStep> => {
    const p = unitPath({ unit: name, dropIn });
    return dropIn === undefined
      ? { kind: 'unit', unit: name, content, provides: [fact('path', p), ...serviceFacts(name)], requires: [fact('path', UNIT_DIR)] }
      : { kind: 'unit', unit: name, dropIn, content, provides: [fact('path', p)], requires: [fact('path', UNIT_DIR), serviceFacts(name)[0]!] };
  },

  describe: (s) => (s.dropIn === undefined ? `unit '${s.unit}'` : `drop-in '${s.dropIn}' of '${s.unit}'`),
  comment: (s) => `${what(s)} (${unitPath(s)})`,
  paths: (s) => [[unitPath(s), 'file']],
  touches: (s) => ({ changes: [fact('path', unitPath(s))], writesFiles: true }),
  inRoot: true,
  variables: ['content'],

  shell: (s) => ({
    lines: [...(s.dropIn !== undefined ? [`imgc_parent ${word(unitPath(s))}`] : []), `imgc_file ${word(unitPath(s))} ${shellAttrs(ATTRS)} \\\n    ${word(s.content)}`],
    helpers: ['parent', 'file'],
  }),
  ansible: (s) => [
    ...(s.dropIn !== undefined
      ? [
          task({
            name: stepTaskName(`Drop-in directory of ${labelText(s.unit)}`, s),
            module: 'ansible.builtin.file',
            args: map({ path: unsafe(`${UNIT_DIR}/${s.unit}.d`), state: str('directory'), mode: mode('0755') }),
          }),
        ]
      : []),
    task({
      name: stepTaskName(s.dropIn === undefined ? `Unit ${labelText(s.unit)}` : `Drop-in ${labelText(s.dropIn)} of ${labelText(s.unit)}`, s),
      module: 'ansible.builtin.copy',
      args: map({ content: unsafe(s.content), dest: unsafe(unitPath(s)), owner: unsafe('root'), group: unsafe('root'), mode: mode('0644') }),
    }),
  ],
  cloudInit: {
    // write_files makes the drop-in directory itself.
    stages: () => ['write_files', 'write_files_deferred'],
    run: (s) => [
      ...(s.dropIn !== undefined ? [call([fn('parent'), unitPath(s)], 'parent')] : []),
      call([fn('file'), unitPath(s), ATTRS.mode, ATTRS.owner, ATTRS.group, s.content], 'file'),
    ],
    entries: (s, stage) => [writeFile(unitPath(s), s.content, ATTRS, stage === 'write_files_deferred')],
  },

  runtime: (s, { path }) => ({ creations: path(unitPath(s), 'file') }),

  verify: {
    root: (s) => [
      {
        subject: `fact:path:${unitPath(s)}`,
        what: what(s),
        check: (r) => {
          const p = unitPath(s);
          const m = r.view.lstat(p);
          if (!m) return `${p} does not exist`;
          if (m.type !== 'file') return `${p} is a ${m.type}, not a regular file`;
          const got = r.view.readFile(p);
          return got?.equals(Buffer.from(s.content, 'utf8')) ? undefined : `${p}: content differs from the definition (${got?.length ?? 0} bytes, expected ${Buffer.byteLength(s.content)})`;
        },
      },
    ],
    boot: (s) => [
      {
        subject: `unit:${unitPath(s)}`,
        what: `systemd reads ${what(s)}`,
        script: `out=$(systemctl show -P FragmentPath -P DropInPaths ${word(s.unit)} 2>&1) || { echo "$out"; exit 1; }\ncase $out in *${word(unitPath(s))}*) ;; *) echo "systemd does not read ${unitPath(s).replace(/["$`\\]/g, '')}: $out"; exit 1 ;; esac`,
      },
    ],
  },
} as const satisfies StepKind<UnitStep> & { make(name: string, content: string, dropIn?: string): StepInput<UnitStep> };
