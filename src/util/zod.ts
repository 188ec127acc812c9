// zod, as imgc's own modules and the definitions that import `z` from imgc
// get it. `npm run build` replaces this file's output with zod bundled into
// one ES module (build:zod): loading the package's 95 modules took twice as
// long, in every process that loads zod (docs/performance.md).
export { z } from 'zod';
