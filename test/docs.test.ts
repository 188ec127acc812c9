// Generated sections of the docs must equal what the code produces: the
// README's stdlib reference and diagnostic codes table, and the example's
// fact graph in docs/architecture.md. `npm run gen` (scripts/gen.mjs) writes them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API } from 'typescript/unstable/sync';
import { describe, expect, it } from 'vitest';
import { diagnosticCodes } from '../src/check/codes.js';
import { closeQuietly, serverOf } from '../src/cli/docs.js';
import { generators } from '../scripts/gen.mjs';
import { repoRoot } from './helpers/cli.js';

const readmePath = path.join(repoRoot, 'README.md');

describe('README', () => {
  it('generated sections are up to date', async () => {
    for (const file of ['README.md', 'docs/architecture.md'] as const) {
      expect(readFileSync(path.join(repoRoot, file), 'utf8'), `${file}: run npm run gen`).toBe(await generators[file]());
    }
  });

  it('is a user\'s document of at most 300 lines; development notes live in docs/', () => {
    const readme = readFileSync(readmePath, 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    for (const doc of ['architecture', 'development', 'performance']) expect(readme).toContain(`(docs/${doc}.md)`);
  });

  it('documents every diagnostic code', () => {
    const readme = readFileSync(readmePath, 'utf8');
    for (const code of Object.keys(diagnosticCodes)) expect(readme).toContain(`| ${code} |`);
  });

  it('starts with the two commands a newcomer runs', () => {
    const readme = readFileSync(readmePath, 'utf8');
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(block.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^npm ci && npm run build && npx imgc /), 'npm test']);
    expect(readFileSync(path.join(repoRoot, '.ci/run'), 'utf8')).toMatch(/\nnpm test\n/);
  });
});

describe('imgc docs', () => {
  // Signalled while its input ends, TypeScript's API process sometimes printed "context canceled" on the
  // stderr it shares with imgc (4 runs of `imgc docs` in 120); the end of its input alone stops it.
  it("ends the TypeScript API's process by closing its input, with no signal, and waits for it", async () => {
    const api = new API({ cwd: repoRoot });
    api.parseConfigFile(path.join(repoRoot, 'tsconfig.json'));
    // Where the API keeps its process, as imgc finds it: an API that moved it fails here.
    const server = serverOf(api)!;
    const signals: unknown[] = [];
    server.kill = (signal?: NodeJS.Signals | number) => (signals.push(signal), true);
    await closeQuietly(api);
    expect(signals).toEqual([]);
    expect([server.exitCode, server.signalCode]).toEqual([0, null]);
  });
});
