// The readers of a root's system databases moved to src/core/root.ts (step
// kinds' verify expectations use them); apt sources stay here, beside the
// parsers they need.
import { parseDeb822Sources, parseOneLineSources, type AptSource } from '../core/apt.js';
import type { RootView } from '../core/root.js';
export * from '../core/root.js';

/** apt sources of the root: `sources.list.d/<name>.sources` (deb822) or `.list`. */
export const readRepo = (view: RootView, name: string): { file: string; sources: AptSource[] } | undefined => {
  for (const [file, parse] of [
    [`/etc/apt/sources.list.d/${name}.sources`, parseDeb822Sources],
    [`/etc/apt/sources.list.d/${name}.list`, parseOneLineSources],
  ] as const) {
    const text = view.readFile(file)?.toString('utf8');
    if (text !== undefined) return { file, sources: parse(text, file) };
  }
  return undefined;
};
