// The imgc package's own directory. Modules run from src/ (tests, tsc paths)
// and from dist/src/ (the built CLI); both sit two folders below it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const twoUp = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const packageRoot = path.basename(twoUp) === 'dist' ? path.dirname(twoUp) : twoUp;
