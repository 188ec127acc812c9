// Where imgc's own modules are, for the loader: `imgc` and `imgc/stdlib` in
// a definition resolve to them, and the type-check reads their declarations.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/src (built) or src (tests). */
export const srcRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = (name: string) => {
  const js = path.join(srcRoot, `${name}.js`);
  return existsSync(js) ? js : path.join(srcRoot, `${name}.ts`);
};
export const imgcEntry = entry('index');
export const stdlibEntry = path.join(path.dirname(srcRoot), 'stdlib', path.basename(imgcEntry));
/** The declarations when built; the sources themselves in a checkout's tests. */
export const imgcTypes = imgcEntry.replace(/\.js$/, '.d.ts');
export const stdlibTypes = stdlibEntry.replace(/\.js$/, '.d.ts');
/** The name of the error ./link.ts throws for a file that cannot be parsed; its stack names the place (IMGC1006). */
export const syntaxErrorName = 'TypeScriptSyntaxError';
