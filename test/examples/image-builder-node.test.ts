// examples/image-builder-node.ts, image-builder's node said in imgc: it checks
// clean with the types and the contract checker, and keeps to the numbers the
// issue set (at least 80 steps, at most 5 raw commands, each saying why). Its
// outputs for every target are held to golden files and the real tools by the
// backends' tests, which run on every example.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { imgc, irOf, repoRoot } from '../helpers/cli.js';

const file = 'examples/image-builder-node.ts';

describe(file, () => {
  it('checks clean, types included', async () => {
    const r = await imgc(['check', file]);
    expect(r.exitCode, r.all).toBe(0);
  });

  it('has at least 80 steps that change the root, at most 5 of them raw commands, each with a comment saying why', async () => {
    const ir = await irOf(file);
    const rootSteps = ir.phases.filter((p) => !['artifact', 'verify'].includes(p.name)).flatMap((p) => p.steps);
    expect(rootSteps.length).toBeGreaterThanOrEqual(80);
    const raw = rootSteps.filter((s) => s.kind === 'command');
    expect(raw.length).toBeLessThanOrEqual(5);
    const lines = readFileSync(path.join(repoRoot, file), 'utf8').split('\n');
    for (const s of raw) expect(lines[s.loc!.line - 2]!.trim(), `comment above ${s.id}`).toMatch(/^\/\/ Raw[,:]/);
  });
});
