// `imgc check --watch`: in the foreground, like `tsc --watch`. Checks, then
// waits for a save of any of the definition's files and checks again, until
// Ctrl-C; nothing of it runs on after that.
import { watch as watchDir, type FSWatcher } from 'node:fs';
import path from 'node:path';

interface Io {
  out: (s: string) => void;
}

/** Settles at the first change of one of `files` (a save, a rename over it), a moment after, so that a burst of writes is one change. */
const changeOf = (files: readonly string[]): Promise<void> =>
  new Promise((resolve) => {
    const names = new Set(files.map((f) => path.resolve(f)));
    const watchers: FSWatcher[] = [];
    let timer: NodeJS.Timeout | undefined;
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        watchers.forEach((w) => w.close());
        resolve();
      }, 100);
    };
    // The directories, not the files: an editor that saves by renaming a new file over the old one ends a file's watch.
    for (const dir of new Set([...names].map((f) => path.dirname(f)))) {
      try {
        watchers.push(watchDir(dir, (_, name) => name && names.has(path.join(dir, name.toString())) && changed()));
      } catch {
        // a directory gone since the check: its files cannot change
      }
    }
  });

export const watch = async (file: string, check: () => Promise<{ files: string[] }>, io: Io): Promise<number> => {
  for (;;) {
    const { files } = await check();
    const watched = files.length ? files : [file];
    // The watches before the message: a save made as soon as it is read is seen.
    const change = changeOf(watched);
    io.out(`Watching ${watched.length} file${watched.length === 1 ? '' : 's'} for changes (Ctrl-C to stop).\n`);
    await change;
    io.out(`\nChange detected: checking again.\n`);
  }
};
