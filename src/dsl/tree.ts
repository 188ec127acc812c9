// Reading a directory of text files when the definition runs (an Ansible
// role's, Puppet modules), or one text file (a Puppet manifest): the IR carries the files, so the outputs are self-contained and the
// IR changes whenever one does. Every file and directory read is noted, so the
// loader's cached result follows edits, added files and removed ones
// (src/util/cache.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { callerDir, noteFileRead } from './location.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface TextTree {
  /** The directory, resolved against the calling file's. */
  root: string;
  /** Its files, "/"-separated paths under it, in name order; a symbolic link counts as what it points at. */
  files: { path: string; text: string }[];
}

/** The UTF-8 text of `file` (`shown` in messages), noted as read. */
const decoded = (file: string, shown: string): string => {
  let text: string;
  try {
    text = utf8.decode(readFileSync(file));
  } catch {
    throw new Error(`${shown} is not UTF-8 text: imgc's outputs carry these files as text`);
  }
  noteFileRead(file);
  return text;
};

/** The text file `file` (relative to the calling file): its resolved path and text; throws a message for the step to prefix. */
export const readTextFile = (file: string): { path: string; text: string } => {
  const abs = path.resolve(callerDir(), file);
  // Noted even when missing: creating it makes the cached load result stale.
  noteFileRead(abs);
  let isFile = false;
  try {
    isFile = statSync(abs).isFile();
  } catch {
    // isFile stays false: the message below says so
  }
  if (!isFile) throw new Error(`no such file (${abs})`);
  return { path: abs, text: decoded(abs, file) };
};

/** The text files under `dir` (relative to the calling file); throws a message for the step to prefix. */
export const readTextTree = (dir: string): TextTree => {
  const root = path.resolve(callerDir(), dir);
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    // isDir stays false: the message below says so
  }
  // Noted even when missing: creating it makes the cached load result stale.
  noteFileRead(root);
  if (!isDir) throw new Error(`no such directory (${root})`);
  const files: { path: string; text: string }[] = [];
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    noteFileRead(abs);
    for (const e of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      const st = statSync(path.join(root, child));
      if (st.isDirectory()) walk(child);
      else if (st.isFile()) {
        files.push({ path: child, text: decoded(path.join(root, child), child) });
      }
    }
  };
  walk('');
  return { root, files };
};
