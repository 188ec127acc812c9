// Native tools npm installs as platform packages (esbuild, TypeScript 7's
// tsc): run their binaries directly, without the package's Node launcher.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** A native tool's binary, `file` in the platform package `pkg` npm installed beside the package of `packageJson`; found by its package.json, the one file its `exports` may name. */
export const platformBinary = (packageJson: string, pkg: string, file: string): string | undefined => {
  try {
    const exe = path.join(path.dirname(createRequire(packageJson).resolve(`${pkg}/package.json`)), file);
    return existsSync(exe) ? exe : undefined;
  } catch {
    return undefined; // an unsupported platform: the package's own launcher says so
  }
};
