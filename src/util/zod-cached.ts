// Built into dist/src/util/zod.js in place of ./zod.ts (see there): zod from
// the one-file bundle beside it, compiled with V8's code cache in imgc's
// cache, as the type-check compiles TypeScript (../load/typecheck-child.cjs).
import { createRequire } from 'node:module';
import type { z as Zod } from 'zod';
import { cacheDir } from './cache.js';

const require = createRequire(import.meta.url);
const { loadCached } = require('../load/typecheck-child.cjs') as typeof import('../load/typecheck-child.cjs');
const { exports, saveCode } = loadCached(require.resolve('./zod.cjs'), cacheDir(), 'imgc');
// At exit, the cache holds the functions this process ran compiled too; once written, V8 takes it and this is a no-op.
process.once('exit', saveCode);

export const z = (exports as { z: typeof Zod }).z;
