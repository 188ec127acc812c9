// The relative imports of a module, for the tests that walk imgc's import graph
// (folder layers, file loops, the files naming a step kind, the declarations a
// definition is checked against).
import path from 'node:path';

/**
 * What `text`, the contents of `file`, imports by a relative specifier, resolved to absolute paths as
 * written (`./x.js` stays `.js`): static imports and re-exports, dynamic imports and the inline type
 * imports of declaration files, in either quote.
 */
export const relativeImports = (file: string, text: string): string[] =>
  [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => path.resolve(path.dirname(file), m[1]!));
