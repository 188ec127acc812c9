// Reading an Ansible role's directory for `ansibleRole` when the definition
// runs: the IR carries the role's files (src/steps/ansible-role.ts), so the
// outputs are self-contained and the IR changes whenever a role file does.
// Every file and directory read is noted, so the loader's cached result
// follows edits, added files and removed ones (src/util/cache.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { RoleName } from '../steps/ansible-role.js';
import { callerDir, noteFileRead } from './location.js';
import { DefinitionError } from './builder.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The role in `dir` (relative to the calling file): its name in outputs and its files, by path. */
export const readRole = (dir: string): { name: string; files: { path: string; text: string }[] } => {
  const root = path.resolve(callerDir(), dir);
  const say = (why: string): DefinitionError => new DefinitionError(`ansibleRole('${dir}'): ${why}`);
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    // isDir stays false: the message below says so
  }
  // Noted even when missing: creating it makes the cached load result stale.
  noteFileRead(root);
  if (!isDir) throw say(`no such directory (${root})`);
  // Hyphens are common in role directory names; ansible-lint's role-name rule wants "_".
  const name = path.basename(root).replace(/-/g, '_');
  if (!RoleName.safeParse(name).success) throw say(`the role's copy is named after its directory, and '${name}' is not a role name (lower-case letters, digits and "_", starting with a letter): rename the directory`);
  const files: { path: string; text: string }[] = [];
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    noteFileRead(abs);
    for (const e of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      const full = path.join(root, child);
      // A symbolic link counts as what it points at.
      const st = statSync(full);
      if (st.isDirectory()) walk(child);
      else if (st.isFile()) {
        let text: string;
        try {
          text = utf8.decode(readFileSync(full));
        } catch {
          throw say(`${child} is not UTF-8 text: imgc's outputs carry a role's files as text`);
        }
        noteFileRead(full);
        files.push({ path: child, text });
      }
    }
  };
  walk('');
  if (!files.some((f) => f.path === 'tasks/main.yml' || f.path === 'tasks/main.yaml')) throw say(`${root} has no tasks/main.yml (or tasks/main.yaml): not an Ansible role`);
  return { name, files };
};
