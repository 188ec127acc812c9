// The few words on what a step does that every backend puts in a comment
// above (or next to) it. One wording for all; a backend that words a kind its
// own way passes that kind's function, and only that kind's.
import type { Step, StepKind, StepOf } from '../ir/schema.js';
import { commentOf, isRegistered, type CommentTarget } from '../steps/index.js';

/** A backend's own wording for some kinds, in place of the shared one. */
export type Wording = { readonly [K in StepKind]?: (s: StepOf<K>) => string };

/** The first line of a script, shortened, for a comment. */
export const gist = (run: string): string => {
  const [first = ''] = run.trim().split('\n');
  const cut = first.slice(0, 60);
  return cut === run.trim() ? cut : `${cut} ...`;
};

/** A few words on what a step does, for the comment above it. */
export const summary = (s: Step, wording: Wording = {}, target?: CommentTarget): string => {
  if (isRegistered(s)) return commentOf(s, target);
  const own = wording[s.kind] as ((s: Step) => string) | undefined;
  if (own) return own(s);
  switch (s.kind) {
    case 'user':
      return `user ${s.name}`;
    case 'group':
      return `group ${s.name}`;
    case 'directory':
      return `directory ${s.path}`;
    case 'file':
      return `file ${s.path}`;
    case 'symlink':
      return `symlink ${s.path} -> ${s.target}`;
    case 'packages':
      return `${s.action} ${s.names.join(' ')}`;
    case 'aptRepository':
      return `apt source ${s.name}`;
    case 'service':
      return `${s.enabled ? 'enable' : 'disable'} ${s.name}`;
    case 'sysctl':
      return `sysctl ${s.key} = ${s.value} in ${s.file}`;
    case 'kernelModule':
      return `kernel module ${s.name} in ${s.file}`;
    case 'command':
      return `${s.description ?? `run ${gist(s.run)}`}${s.creates !== undefined ? ` (unless ${s.creates} exists)` : ''}`;
    case 'hook':
      return (
        s.description ??
        (s.action.type === 'script' ? `script in the root: ${gist(s.action.run)}` : s.action.type === 'webhook' ? `webhook ${s.action.url}` : `event to ${s.action.target}`)
      );
    case 'artifact':
      return `${s.format} artifact ${s.output}`;
    case 'cloudImage':
      return `Packer source ${s.builder} ${s.name}`;
    case 'verify':
      return `verify ${s.check}`;
  }
};
