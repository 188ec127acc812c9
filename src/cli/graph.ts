// `imgc explain --graph mermaid|dot`: the phases top to bottom in run order,
// each a box whose steps read in order, left to right in rows; an arrow from
// the step (or base) that provides a fact to each step that requires it,
// labelled with the facts. The order is held by invisible edges and the fact
// arrows do not move anything: layout engines otherwise rank a step by who
// feeds it, which reverses steps and sets later phases beside earlier ones.
import { factFlow, type FactEdge } from '../ir/flow.js';
import { describeStep } from '../steps/index.js';
import { describeFact } from '../core/facts.js';
import type { Image } from '../ir/schema.js';

export interface GraphOptions {
  /** Draw the arrows from the base (default true); most steps need something of it, and they crowd the picture. */
  baseEdges?: boolean;
}

/** Steps per row inside a phase: wide enough to use the page, narrow enough that a row stays readable. */
const ROW = 2;

/** A step's label in a box: lines of at most this many characters, at most LINES of them. */
const WIDTH = 40;
const LINES = 3;

/**
 * A step's description cut into lines at its list's commas, so one step with a
 * long list (sysprep's removals) does not widen its whole row; past LINES the
 * rest is counted, not drawn (`imgc explain` lists every item).
 */
export const boxLabel = (text: string): string[] => {
  const parts = text.split(/(?<=,) /);
  const lines: string[] = [];
  let i = 0;
  for (; i < parts.length && lines.length < LINES; i++) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last]!.length + 1 + parts[i]!.length <= WIDTH) lines[last] += ` ${parts[i]}`;
    else if (lines.length < LINES - 1 || i === parts.length - 1) lines.push(parts[i]!);
    else break;
  }
  if (i < parts.length) lines.push(`… and ${parts.length - i} more`);
  return lines;
};

const nodeId = (stepId: string) => (stepId === 'base' ? 'base' : `s_${stepId.replace(/[^A-Za-z0-9]/g, '_')}`);

/** Edges merged per (from, to) pair so the picture stays readable. */
const mergedEdges = (ir: Image, opts: GraphOptions) => {
  const byPair = new Map<string, { from: string; to: string; facts: FactEdge['fact'][] }>();
  for (const e of factFlow(ir)) {
    if (opts.baseEdges === false && e.from === 'base') continue;
    const key = `${e.from}\u0000${e.to}`;
    const entry = byPair.get(key) ?? { from: e.from, to: e.to, facts: [] };
    entry.facts.push(e.fact);
    byPair.set(key, entry);
  }
  return [...byPair.values()];
};

/** Each phase's steps in run order (hooks included), cut into rows of ROW. */
const phaseRows = (ir: Image) =>
  ir.phases.map((p) => {
    const steps = [...p.pre, ...p.steps, ...p.post];
    const rows: (typeof steps)[] = [];
    for (let i = 0; i < steps.length; i += ROW) rows.push(steps.slice(i, i + ROW));
    return { phase: p, rows };
  });

/** The first step of each row, after the base: following these top to bottom reads the image in run order. */
const rowHeads = (phases: ReturnType<typeof phaseRows>) => ['base', ...phases.flatMap((p) => p.rows.map((r) => r[0]!.id))];

const mermaidText = (s: string) => s.replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;');

export const mermaidGraph = (ir: Image, opts: GraphOptions = {}): string => {
  const phases = phaseRows(ir);
  const lines = ['flowchart TB', `  base[("phase 0 base: ${mermaidText(ir.base.name)}")]`];
  phases.forEach(({ phase, rows }, i) => {
    lines.push(`  subgraph phase_${i + 1}["phase ${i + 1} ${mermaidText(phase.name)}"]`, '    direction TB');
    rows.forEach((row, r) => {
      // A row is a nested subgraph laid left to right; its steps are chained invisibly so they keep their order.
      lines.push(`    subgraph phase_${i + 1}_row_${r + 1}[" "]`, '      direction LR');
      for (const s of row) lines.push(`      ${nodeId(s.id)}["${boxLabel(describeStep(s)).map(mermaidText).join('<br>')}"]`);
      if (row.length > 1) lines.push(`      ${row.map((s) => nodeId(s.id)).join(' ~~~ ')}`);
      lines.push('    end');
    });
    lines.push('  end');
  });
  const heads = rowHeads(phases);
  for (let i = 1; i < heads.length; i++) lines.push(`  ${nodeId(heads[i - 1]!)} ~~~ ${nodeId(heads[i]!)}`);
  for (const e of mergedEdges(ir, opts)) lines.push(`  ${nodeId(e.from)} -->|"${mermaidText(e.facts.map(describeFact).join(', '))}"| ${nodeId(e.to)}`);
  return `${lines.join('\n')}\n`;
};

const dotText = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

export const dotGraph = (ir: Image, opts: GraphOptions = {}): string => {
  const phases = phaseRows(ir);
  const lines = [
    `digraph ${dotText(ir.name)} {`,
    '  rankdir=TB;',
    '  newrank=true;',
    '  nodesep=0.3;',
    '  ranksep=0.5;',
    '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=12];',
    '  edge [fontname="Helvetica", fontsize=10, color="#4a6fa5", fontcolor="#4a6fa5"];',
    `  base [shape=cylinder, label=${dotText(`phase 0 base: ${ir.base.name}`)}];`,
  ];
  phases.forEach(({ phase, rows }, i) => {
    lines.push(`  subgraph cluster_${i + 1} {`, `    label=${dotText(`phase ${i + 1} ${phase.name}`)};`, '    labeljust=l;', '    fontname="Helvetica-Bold";');
    for (const row of rows) {
      lines.push(`    { rank=same; ${row.map((s) => `${nodeId(s.id)} [label=${dotText(boxLabel(describeStep(s)).join('\n'))}];`).join(' ')} }`);
      if (row.length > 1) lines.push(`    ${row.map((s) => nodeId(s.id)).join(' -> ')} [style=invis];`);
    }
    lines.push('  }');
  });
  const heads = rowHeads(phases);
  if (heads.length > 1) lines.push(`  ${heads.map(nodeId).join(' -> ')} [style=invis, weight=100];`);
  // constraint=false: a fact arrow is drawn between steps already placed, and never moves one.
  for (const e of mergedEdges(ir, opts)) lines.push(`  ${nodeId(e.from)} -> ${nodeId(e.to)} [constraint=false, label=${dotText(e.facts.map(describeFact).join('\n'))}];`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
};
