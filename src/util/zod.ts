// zod, as imgc's own modules and the definitions that import `z` from imgc
// get it. Here (the sources, which the tests run) it is the package. The
// package is 95 ES modules, and importing them took ~45 ms of the ~170 ms of
// every `imgc check`; so `npm run build` bundles the package into one
// CommonJS file, dist/src/util/zod.cjs, and replaces this file's output,
// dist/src/util/zod.js, with ./zod-cached.ts, which compiles that bundle with
// V8's code cache. The declarations stay this file's: zod's own types.
export { z } from 'zod';
