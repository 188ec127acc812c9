// mask: a systemd unit masked (linked to /dev/null, so nothing can start or
// enable it) or unmasked again — image-builder masks apt's daily timers so
// they cannot race the build or a node's first minutes. Like enabling, it is
// links only: it works offline in a chroot, and nothing is stopped.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { stepBase, UnitName } from '../core/fields.js';
import { isMasked, unitName, unitPath } from '../core/root.js';
import { word as shWord } from '../emit/shell/quote.js';
import { bool, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import type { StepInput, StepKind } from './kind.js';

const schema = z.object({ ...stepBase, kind: z.literal('mask'), name: UnitName, masked: z.boolean() }).strict();
type MaskStep = z.infer<typeof schema>;

const verb = (s: MaskStep) => (s.masked ? 'mask' : 'unmask');

export const mask = {
  kind: 'mask',
  schema,
  /**
   * Masking takes the service fact away (a later enable of it is IMGC0005:
   * systemctl refuses to enable a masked unit). Unmasking gives nothing back:
   * whether the unit is installed is not its to say (verify would find a
   * promise of a unit that is not there), so enabling a unit masked earlier
   * needs the install that provides it after the unmask. A unit need not
   * exist to be masked or unmasked.
   */
  make: (name: string, masked: boolean): StepInput<MaskStep> => ({
    kind: 'mask',
    name,
    masked,
    requires: [fact('command', 'systemctl')],
    ...(masked ? { removes: [fact('service', name)] } : {}),
  }),

  describe: (s) => `${verb(s)} of service '${s.name}'`,
  comment: (s) => `${verb(s)} ${unitName(s.name)}`,
  // The mask is a link to /dev/null where a unit file of /etc/systemd/system would be (systemctl mask refuses a file there).
  paths: (s) => (s.masked ? [[unitPath({ unit: unitName(s.name) }), 'symlink']] : []),
  inRoot: true,

  shellHelpers: {
    mask: {
      deps: [],
      code: [
        '# imgc_mask UNIT: UNIT is masked (linked to /dev/null: nothing starts or enables it;',
        '# links only, nothing is stopped).',
        'imgc_mask() {',
        '  if [ "$(readlink "/etc/systemd/system/$1" || :)" = /dev/null ]; then',
        '    return 0',
        '  fi',
        '  systemctl mask "$1"',
        '  imgc_dirty=1',
        '}',
      ],
    },
    unmask: {
      deps: [],
      code: [
        '# imgc_unmask UNIT: UNIT is not masked.',
        'imgc_unmask() {',
        '  if [ "$(readlink "/etc/systemd/system/$1" || :)" != /dev/null ]; then',
        '    return 0',
        '  fi',
        '  systemctl unmask "$1"',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s) => ({ lines: [`imgc_${verb(s)} ${shWord(unitName(s.name))}`], helpers: [verb(s)] }),
  ansible: (s) => [
    task({
      name: stepTaskName(`${s.masked ? 'Mask' : 'Unmask'} ${unitName(s.name)}`, s),
      module: 'ansible.builtin.systemd_service',
      args: map({ name: unsafe(unitName(s.name)), masked: bool(s.masked) }),
    }),
  ],
  cloudInit: {
    run: (s) => [{ argv: [fn(verb(s)), unitName(s.name)], helpers: [verb(s)] }],
  },
  packer: { comment: (s) => `${verb(s)} ${unitName(s.name)}` },

  runtime: (s) => ({
    creations: [],
    kept: s.masked ? 'a masked unit stays masked: whether it was masked before is not recorded' : 'an unmasked unit stays unmasked',
  }),

  verify: {
    root: (s) => [
      {
        subject: `service-masked:${unitName(s.name)}`,
        what: `service '${s.name}' ${s.masked ? 'masked' : 'not masked'}`,
        check: (r) =>
          isMasked(r.view, s.name) === s.masked ? undefined : s.masked ? `/etc/systemd/system/${unitName(s.name)} is not a link to /dev/null` : `${unitName(s.name)} is still masked`,
      },
    ],
    boot: (s) => [
      {
        subject: `service-masked:${unitName(s.name)}`,
        what: `service '${s.name}' ${s.masked ? 'masked' : 'not masked'}`,
        script: `st=$(systemctl is-enabled ${shWord(unitName(s.name))} 2>/dev/null || :)\n[ ${s.masked ? '' : '! '}"$st" = masked ] || { echo "systemctl is-enabled says: $st"; exit 1; }`,
      },
    ],
  },
} as const satisfies StepKind<MaskStep> & { make(name: string, masked: boolean): StepInput<MaskStep> };
