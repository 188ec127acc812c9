// The files an output carries for its steps (a kind's `carries`: an Ansible
// role's copy), added beside the frame's own files. Two steps carrying the
// same path must agree on its text, and no carried file may replace one of
// the frame's: either is IMGC2002 at the step, since the output could not
// say both.
import type { Step } from '../ir/schema.js';
import { kindOf } from '../steps/index.js';
import { refusalError, type RenderTarget } from './renderings.js';
import type { CompiledFiles } from './types.js';

/** The directory a carried file's copy is one unit under: its first two parts (`roles/<name>/`). */
const unitOf = (p: string): string => `${p.split('/').slice(0, 2).join('/')}/`;

/** `files` with what `steps` carry added; throws IMGC2002 on a clash. */
export const withCarried = (files: CompiledFiles, steps: readonly Step[], target: RenderTarget): CompiledFiles => {
  const out: CompiledFiles = { ...files };
  const own = Object.keys(files);
  const by = new Map<string, Step>();
  for (const s of steps) {
    for (const f of kindOf(s).carries?.(s) ?? []) {
      const other = by.get(f.path);
      const unit = unitOf(f.path);
      if (own.some((p) => p.startsWith(unit)))
        throw refusalError(s, target, { refuse: `its copy ${unit} would mix with the output's own ${unit}`, hint: 'rename the role\'s directory: its copy is named after it' });
      if (other !== undefined && out[f.path] !== f.text)
        throw refusalError(s, target, { refuse: `its copy ${f.path} differs from the one step ${other.id} carries`, hint: 'give different roles directories of different names: a copy is named after its directory' });
      by.set(f.path, s);
      out[f.path] = f.text;
    }
  }
  return out;
};
