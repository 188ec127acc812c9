import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { dotGraph, mermaidGraph } from '../src/cli/graph.js';
import type { Image } from '../src/ir/schema.js';
import { imgc, irOf, tempDir } from './helpers/cli.js';
import { needTools } from './helpers/tools.js';

/** Graphviz's placement of each node: centre x, y (inches, y grows upwards) from `dot -Tplain`. */
const layout = async (dot: string) => {
  const file = path.join(tempDir('dot'), 'g.dot');
  writeFileSync(file, dot);
  const plain = await execa('dot', ['-Tplain', file]);
  const nodes = new Map<string, { x: number; y: number }>();
  for (const line of plain.stdout.split('\n')) {
    const [kind, name, x, y] = line.split(' ');
    if (kind === 'node') nodes.set(name!, { x: Number(x), y: Number(y) });
  }
  return { file, nodes };
};

const nodeId = (id: string) => `s_${id.replace(/[^A-Za-z0-9]/g, '_')}`;

describe('imgc explain --graph', () => {
  let ir: Image;
  beforeAll(async () => {
    ir = await irOf('examples/node-image.ts');
  });

  it('dot draws the phases top to bottom and each phase\'s steps in reading order', async (ctx) => {
    needTools(ctx, 'dot');
    const { nodes } = await layout(dotGraph(ir));
    const placed = (id: string) => nodes.get(nodeId(id)) ?? expect.fail(`step ${id} not drawn`);
    // Reading order: a later step is on a lower row, or on the same row further right.
    const steps = ir.phases.flatMap((p) => [...p.pre, ...p.steps, ...p.post]);
    expect(nodes.get('base')!.y).toBeGreaterThan(placed(steps[0]!.id).y);
    for (let i = 1; i < steps.length; i++) {
      const a = placed(steps[i - 1]!.id);
      const b = placed(steps[i]!.id);
      const sameRow = Math.abs(a.y - b.y) < 0.01;
      expect(sameRow ? b.x > a.x : b.y < a.y, `${steps[i - 1]!.id} then ${steps[i]!.id}`).toBe(true);
    }
  });

  it("the reference image's picture is readable: at most 3:1 either way, and no wider than 2400 px", async (ctx) => {
    needTools(ctx, 'dot');
    const { file } = await layout(dotGraph(ir));
    const png = await execa('dot', ['-Tpng', file], { encoding: 'buffer' });
    const buf = Buffer.from(png.stdout);
    const width = buf.readUInt32BE(16);
    const height = buf.readUInt32BE(20);
    expect(Math.max(width / height, height / width), `${width}x${height}`).toBeLessThanOrEqual(3);
    // Shown 1600 px wide, 12 pt labels stay above 10 px.
    expect(width).toBeLessThanOrEqual(2400);
  });

  it('draws an arrow from each provider to each step that needs its facts, and hides the base\'s on request', async () => {
    const dot = dotGraph(ir);
    expect(dot).toMatch(/s_provision_\d+_packages -> s_provision_\d+_service \[constraint=false, label="service 'containerd'"\]/);
    expect(dot).toMatch(/\n {2}base -> s_customize_\d+_user \[constraint=false/);
    const hidden = dotGraph(ir, { baseEdges: false });
    expect(hidden).not.toMatch(/\n {2}base -> s_\w+ \[constraint=false/);
    expect(hidden).toMatch(/s_provision_\d+_packages -> s_provision_\d+_service \[constraint=false/);
    expect(mermaidGraph(ir, { baseEdges: false })).not.toMatch(/\n {2}base -->/);
  });

  it('the CLI passes --no-base-edges through, and Graphviz accepts what it prints', async (ctx) => {
    needTools(ctx, 'dot');
    const r = await imgc(['explain', '--no-typecheck', '--graph', 'dot', '--no-base-edges', 'examples/node-image.ts']);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).not.toMatch(/\n {2}base -> s_\w+ \[constraint=false/);
    const { file } = await layout(r.stdout);
    const svg = await execa('dot', ['-Tsvg', file], { reject: false, all: true });
    expect(svg.exitCode, svg.all).toBe(0);
  });

  it('mermaid draws phases, ordered rows of steps, and who provides what to whom', () => {
    const text = mermaidGraph(ir);
    expect(text.startsWith('flowchart TB\n')).toBe(true);
    expect(text).toContain('subgraph phase_2["phase 2 provision"]');
    expect(text).toMatch(/s_customize_2_user -->\|"path '\/home\/ops', user 'ops', group 'ops'"\| s_customize_3_directory/);
    // Steps of a row chained invisibly in order; rows and phases chained top to bottom.
    expect(text).toContain('s_customize_pre1_hook ~~~ s_customize_1_group\n');
    expect(text).toContain('s_customize_2_user ~~~ s_customize_3_directory\n');
    expect(text).toContain('  base ~~~ s_customize_pre1_hook\n');
    // A long list is cut into lines, and what does not fit is counted (explain lists it all).
    expect(text).toMatch(/s_provision_\d+_\w+\["removal of [^"]*<br>[^"]*<br>… and \d+ more"\]/);
    expect(text).not.toMatch(/[^#]quot/);
  });

  it('the text form lists each step with its facts', async () => {
    const r = await imgc(['explain', 'examples/node-image.ts']);
    expect(r.stdout).toContain("customize.2.user: user 'ops'  node-image.ts:24");
    expect(r.stdout).toContain("requires group 'admins', group 'sudo', path '/home'");
  });
});
