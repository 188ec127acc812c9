// Steps the shell target's build runs on the build machine (a kind's
// `fromBuildMachine`: an Ansible role): each becomes a play of its own,
// NN-NAME.K.yml beside build.sh (where ansible-playbook finds roles/), which
// build.sh applies to the root with the chroot connection between the parts
// of the phase script, phases/NN-NAME.K.sh. The play holds the kind's own
// `ansible` rendering, as the ansible target writes it; the step's conditions
// stay with build.sh, which decides them as the phase scripts do.
import type { Image, Phase, Step } from '../../ir/schema.js';
import { kindOf } from '../../steps/index.js';
import type { AnsibleContext } from '../../steps/kind.js';
import { document, map, seq } from '../../emit/ansible/yaml.js';
import { bool, label, word } from '../../emit/ansible/quote.js';
import { labelName, labelText } from '../../emit/ansible/names.js';
import { taskItem } from '../../emit/ansible/tasks.js';
import { rendered, rendering } from '../renderings.js';
import { cut, type Piece } from '../parts.js';

/**
 * ansible-playbook's arguments for a root directory through the chroot
 * connection. The path comes from $IMGC_ROOT by a lookup, not the inventory:
 * an inventory of `PATH,` splits at a comma in the path, and a lookup's value
 * is never templated.
 */
export const chrootPlayArgs = ['-i', 'imgc-root,', '-c', 'community.general.chroot', '-e', '{"ansible_host": "{{ lookup(\'ansible.builtin.env\', \'IMGC_ROOT\') }}"}'] as const;

export const fromBuildMachine = (s: Step): boolean => kindOf(s).fromBuildMachine !== undefined;

/** A phase's root steps in pieces: runs of steps for phase scripts, and the steps the build machine applies between them. */
export const phasePieces = <S extends Step>(steps: readonly S[]): Piece<S>[] => cut(steps, fromBuildMachine);

/** Whether the phase's script is cut into parts (some step is the build machine's). */
export const inParts = (steps: readonly Step[]): boolean => steps.some(fromBuildMachine);

/** The file of piece `k` (1-based) of the phase `stem`: a part's script, or a step's play. */
export const pieceFile = (stem: string, k: number, piece: Piece<unknown>): string => ('part' in piece ? `phases/${stem}.${k}.sh` : `${stem}.${k}.yml`);

/** The play that applies `s` (the build machine's) to the root. */
export const stepPlay = (ir: Image, phase: Phase, s: Step, file: string): string => {
  const ctx: AnsibleContext = { base: ir.base, refresh: true, notes: new Set(), verify: false };
  const tasks = rendered(rendering(kindOf(s).ansible, s, 'ansible')(s, ctx), s, 'ansible');
  const at = s.loc ? ` (${labelText(s.loc.file)}:${s.loc.line})` : '';
  return document(
    seq([
      {
        value: map({
          name: label(labelName(`Phase ${phase.name}: ${s.id}${at}`)),
          hosts: word('all'),
          gather_facts: bool(false),
          tasks: seq(tasks.map(taskItem), { spaced: true }),
        }),
      },
    ]),
    [
      `${ir.name}, phase ${phase.name}: step ${s.id}, written by imgc from ${labelText(ir.source)}; edit the definition, not this file.`,
      '',
      'build.sh applies this play to the root from this machine, between the parts of the',
      'phase script (no gathered facts, no become: a chroot runs as root):',
      `  ansible-playbook -i /path/to/root, -c community.general.chroot ${file}`,
      ...ctx.notes,
    ],
  );
};
