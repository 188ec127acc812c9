#!/usr/bin/env node
// The installed `imgc` command: runs the compiled CLI in dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const main = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('imgc: dist/ is missing: this imgc was not built (a checkout, or an install from a directory or git, which never builds it); run `npm run build` in the checkout, or install the tarball `npm pack` makes there\n');
  process.exit(2);
}
// A reader that stops early (`imgc schema | head -1`) closes the pipe: end quietly, as a Unix tool killed by SIGPIPE does.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(141);
  });
}
const { run } = await import(pathToFileURL(main).href);
try {
  process.exitCode = await run(process.argv.slice(2), {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    isTTY: Boolean(process.stdout.isTTY),
  });
} catch (e) {
  process.stderr.write(`imgc: internal error: ${e instanceof Error ? e.stack : String(e)}\nPlease report this with the definition that caused it.\n`);
  process.exitCode = 3;
}
