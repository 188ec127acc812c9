// The imgc package's own directory. Modules run from src/ (tests, tsc paths)
// and from dist/src/ (the built CLI); both sit two folders below it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const twoUp = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const packageRoot = path.basename(twoUp) === 'dist' ? path.dirname(twoUp) : twoUp;

/** imgc's own code: its sources, its stdlib and their build (where a built module's source map points too). */
const ownRoots = ['src', 'stdlib', 'dist'].map((d) => path.join(packageRoot, d) + path.sep);
/** A file of the user's: neither imgc's own nor a package's. */
export const isUsersFile = (file: string): boolean => !file.includes(`${path.sep}node_modules${path.sep}`) && !ownRoots.some((r) => file.startsWith(r));
