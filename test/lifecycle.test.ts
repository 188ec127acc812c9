import { describe, expect, it } from 'vitest';
import { lifecycle, nodeStates } from '../src/ir/lifecycle.js';
import { imgc } from './helpers/cli.js';

describe('node lifecycle', () => {
  it('is one path from base to decommissioned through every state', () => {
    const path = [lifecycle[0]!.from, ...lifecycle.map((e) => e.to)];
    expect(path).toEqual([...nodeStates]);
    lifecycle.forEach((e, i) => i > 0 && expect(e.from).toBe(lifecycle[i - 1]!.to));
  });

  it('explain --graph lifecycle draws it, marking the edges this image has hooks on', async () => {
    const r = await imgc(['explain', '--graph', 'lifecycle', 'examples/node-image.ts']);
    expect(r.exitCode, r.all).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('stateDiagram-v2');
    for (const e of lifecycle) expect(lines.some((l) => l.startsWith(`  ${e.from} --> ${e.to}: `))).toBe(true);
    expect(r.stdout).toMatch(/customized --> provisioned: .*\[hooks 1 pre, 1 post\]/);
    expect(r.stdout).not.toMatch(/provisioned --> bootstrapped: .*hooks/);
  });
});
