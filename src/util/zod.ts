// zod, as imgc's own modules and the definitions that import `z` from imgc
// get it. `npm run build` replaces this file's output with zod bundled into
// one ES module (build:zod): loading the package's 95 modules took twice as
// long, in every process that loads zod (docs/performance.md).
import { z } from 'zod';

// Without zod's generated fast path, set here so that it holds before any
// schema is made (zod reads it then), in a bundle too: a process parses the
// IR once, and generating the code (~15 ms for the IR's schema) costs more
// than it saves.
z.config({ jitless: true });

export { z };
