// Debian 12's arm64 archive: the amd64 table (./debian-12.txt) with the
// delta `npm run gen:packages` writes to ./debian-12-arm64.txt (the lines
// that differ on arm64, and a removal line for each amd64-only package:
// docs/packages.md). A second whole table would ship another 4 MB.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { overlayArchive } from '../../src/core/catalog.js';
import { packageRoot } from '../../src/util/package-root.js';
import { debian12Archive } from './debian-12.js';

/** Every package of Debian 12 "bookworm" main (arm64): what each brings, for the checker. */
export const debian12Arm64Archive = overlayArchive('Debian 12 "bookworm" main (arm64)', debian12Archive, () =>
  readFileSync(path.join(packageRoot, 'stdlib', 'archive', 'debian-12-arm64.txt'), 'latin1'),
);
