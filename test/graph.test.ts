import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { imgc, tempDir } from './helpers/cli.js';

describe('imgc explain --graph', () => {
  it('dot output is accepted by Graphviz', async () => {
    const r = await imgc(['explain', '--graph', 'dot', 'examples/node-image.ts']);
    expect(r.exitCode, r.all).toBe(0);
    const file = path.join(tempDir('dot'), 'g.dot');
    writeFileSync(file, r.stdout);
    const dot = await execa('dot', ['-Tsvg', file], { reject: false, all: true });
    expect(dot.exitCode, dot.all).toBe(0);
    expect(dot.stdout).toContain('<svg');
    expect(r.stdout).toContain('s_provision_7_packages -> s_provision_9_service');
  });

  it('mermaid output draws phases, steps and who provides what to whom', async () => {
    const r = await imgc(['explain', '--graph', 'mermaid', 'examples/node-image.ts']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.startsWith('flowchart TB\n')).toBe(true);
    expect(r.stdout).toContain('subgraph phase_2["phase 2 provision"]');
    expect(r.stdout).toMatch(/s_customize_2_user -->\|"path '\/home\/ops', user 'ops', group 'ops'"\| s_customize_3_directory/);
    expect(r.stdout).not.toMatch(/[^#]quot/);
  });

  it('the text form lists each step with its facts', async () => {
    const r = await imgc(['explain', 'examples/node-image.ts']);
    expect(r.stdout).toContain("customize.2.user: user 'ops'  node-image.ts:24");
    expect(r.stdout).toContain("requires group 'admins', group 'sudo', path '/home'");
  });
});
