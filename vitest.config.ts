import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';
import LongestFirst from './test/helpers/longest-first.js';

export default defineConfig({
  resolve: {
    alias: {
      'imgc/stdlib': fileURLToPath(new URL('./stdlib/index.ts', import.meta.url)),
      imgc: fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Removes each test file's temporary directories after it (test/helpers/temp.ts).
    setupFiles: ['test/helpers/setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
  },
});
