// `imgc explain --graph mermaid|dot`: phases as clusters, steps as nodes, and
// an arrow from the step (or base) that provides a fact to each step that
// requires it, labelled with the facts.
import { describeStep, factFlow, type FactEdge } from '../check/checker.js';
import { describeFact } from '../ir/facts.js';
import type { Image } from '../ir/schema.js';

const nodeId = (stepId: string) => (stepId === 'base' ? 'base' : `s_${stepId.replace(/[^A-Za-z0-9]/g, '_')}`);

/** Edges merged per (from, to) pair so the picture stays readable. */
const mergedEdges = (ir: Image) => {
  const byPair = new Map<string, { from: string; to: string; facts: FactEdge['fact'][] }>();
  for (const e of factFlow(ir)) {
    const key = `${e.from}\u0000${e.to}`;
    const entry = byPair.get(key) ?? { from: e.from, to: e.to, facts: [] };
    entry.facts.push(e.fact);
    byPair.set(key, entry);
  }
  return [...byPair.values()];
};

const phaseSteps = (p: Image['phases'][number]) => [...p.pre, ...p.steps, ...p.post];

const mermaidText = (s: string) => s.replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;');

export const mermaidGraph = (ir: Image): string => {
  const lines = ['flowchart TB', `  base[("phase 0 base: ${mermaidText(ir.base.name)}")]`];
  ir.phases.forEach((p, i) => {
    lines.push(`  subgraph phase_${i + 1}["phase ${i + 1} ${mermaidText(p.name)}"]`, '    direction TB');
    for (const s of phaseSteps(p)) lines.push(`    ${nodeId(s.id)}["${mermaidText(describeStep(s))}"]`);
    lines.push('  end');
  });
  for (const e of mergedEdges(ir)) lines.push(`  ${nodeId(e.from)} -->|"${mermaidText(e.facts.map(describeFact).join(', '))}"| ${nodeId(e.to)}`);
  return `${lines.join('\n')}\n`;
};

const dotText = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

export const dotGraph = (ir: Image): string => {
  const lines = [`digraph ${dotText(ir.name)} {`, '  rankdir=TB;', '  node [shape=box, fontname="Helvetica"];', `  base [shape=cylinder, label=${dotText(`phase 0 base: ${ir.base.name}`)}];`];
  ir.phases.forEach((p, i) => {
    lines.push(`  subgraph cluster_${i + 1} {`, `    label=${dotText(`phase ${i + 1} ${p.name}`)};`);
    for (const s of phaseSteps(p)) lines.push(`    ${nodeId(s.id)} [label=${dotText(describeStep(s))}];`);
    lines.push('  }');
  });
  for (const e of mergedEdges(ir)) lines.push(`  ${nodeId(e.from)} -> ${nodeId(e.to)} [label=${dotText(e.facts.map(describeFact).join('\n'))}];`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
};
