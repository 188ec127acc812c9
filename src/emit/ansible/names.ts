// Task and play names: what `ansible-playbook` prints for each task. They carry
// the step's id and source location so a failed task points back at the line of
// the definition, e.g. `File /etc/sudoers.d/admins (customize.5.file, node-image.ts:32)`.
//
// A name starts with a fixed capitalised word (ansible-lint's name[casing]),
// and user text in it is shortened; quote.ts's `label` makes it one line and
// defuses template delimiters (names are not `!unsafe`, see there).
import type { SourceLocation } from '../../core/facts.js';
import { defuse } from './quote.js';

const MAX_TEXT = 72;

/** One line of user text fit for a label. */
export const labelText = (text: string): string => {
  const cps = [...defuse(text)];
  return cps.length > MAX_TEXT ? `${cps.slice(0, MAX_TEXT - 1).join('')}…` : cps.join('');
};

/** The first line of a shell snippet, as a label. */
export const firstLine = (run: string): string => labelText(run.split('\n').find((l) => l.trim() !== '') ?? run);

export const where = (id: string, loc: SourceLocation | undefined): string => (loc ? `${id}, ${labelText(loc.file)}:${loc.line}` : id);

const MAX_NAME = 100;

/** A whole name, capped so that a `# noqa` comment still fits on its line (yamllint: 160). */
export const labelName = (name: string): string => {
  const cps = [...name];
  return cps.length > MAX_NAME ? `${cps.slice(0, MAX_NAME - 1).join('')}…` : name;
};

/** `summary (id, file:line)`; `summary` is the backend's own words with user text already passed through labelText. */
export const taskName = (summary: string, id: string, loc: SourceLocation | undefined): string => {
  const suffix = ` (${where(id, loc)})`;
  const room = Math.max(24, MAX_NAME - [...suffix].length);
  const cps = [...summary];
  return labelName(`${cps.length > room ? `${cps.slice(0, room - 1).join('')}…` : summary}${suffix}`);
};

/** A step's task name; a declared description is appended (a kind whose summary is the description passes the step without it). */
export const stepTaskName = (summary: string, s: { id: string; loc?: SourceLocation | undefined; description?: string | undefined }): string =>
  taskName(s.description !== undefined ? `${summary}: ${labelText(s.description)}` : summary, s.id, s.loc);
