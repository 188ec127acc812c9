// Where in the user's definition a step was declared. We read the V8 stack
// (source-mapped by the loader) and take the first frame outside imgc itself,
// so a stdlib module's steps point at the user's `.use(module())` line.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { SourceLocation } from '../ir/schema.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// Works from src/dsl (tests, tsc paths) and from dist/src/dsl (the built CLI).
const ownRoots = (() => {
  const root = path.basename(packageRoot) === 'dist' ? path.dirname(packageRoot) : packageRoot;
  return ['src', 'stdlib', 'dist'].map((d) => path.join(root, d) + path.sep);
})();

/** The definition file locations are made relative to; set by the loader. */
let definitionDir: string | undefined;
export const setDefinitionDir = (dir: string | undefined): void => {
  definitionDir = dir;
};

const framePattern = /\(?((?:file:\/\/)?\/[^():]+|[A-Za-z]:\\[^():]+):(\d+):(\d+)\)?$/;

export const callerLocation = (): SourceLocation | undefined => {
  const stack = new Error().stack ?? '';
  for (const line of stack.split('\n').slice(1)) {
    const m = framePattern.exec(line.trim());
    if (!m) continue;
    const [, rawFile = '', lineNo = '0', col = '0'] = m;
    const file = rawFile.startsWith('file://') ? fileURLToPath(rawFile) : rawFile;
    if (ownRoots.some((r) => file.startsWith(r)) || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    const rel = path.relative(definitionDir ?? process.cwd(), file).split(path.sep).join('/');
    return { file: rel, line: Number(lineNo), column: Number(col) };
  }
  return undefined;
};
