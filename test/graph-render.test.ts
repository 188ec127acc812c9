// The reference image's pictures as a reader sees them: the Mermaid text
// rendered by the `mermaid` package (from node_modules, no CDN) in headless
// Chromium, the DOT text laid out and drawn by Graphviz. Each render once;
// the checks read what came out: every phase and step label is there, the
// picture stays within the readability bound of test/graph.test.ts, and
// Graphviz's own layout puts no label over another.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Image } from '../src/ir/schema.js';
import { describeStep } from '../src/steps/index.js';
import { boxLabel } from '../src/cli/graph.js';
import { imgc, irOf, tempDir } from './helpers/cli.js';
import { missingTools, needTools } from './helpers/tools.js';

const example = 'examples/node-image.ts';

/** The labels a reader must find: each phase's title and each step's phrase. */
const labels = (ir: Image): string[] => [
  ...ir.phases.map((p, i) => `phase ${i + 1} ${p.name}`),
  // As drawn: a long list cut into lines, the rest counted.
  ...ir.phases.flatMap((p) => [...p.pre, ...p.steps, ...p.post].flatMap((s) => boxLabel(describeStep(s)))),
];

/** The text of an SVG as a reader sees it: no markup, entities decoded, no whitespace (renderers break long labels into lines). */
const svgText = (svg: string): string =>
  svg
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, '')
    .replace(/&#(\d+);/g, (_m, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, '');

const flat = (s: string) => s.replace(/\s+/g, '');

/** At most 3:1 either way and no wider than 2400 px: test/graph.test.ts's bound (shown 1600 px wide, 12 pt labels stay above 10 px). */
const readable = (width: number, height: number) => {
  expect(Math.max(width / height, height / width), `${width}x${height}`).toBeLessThanOrEqual(3);
  expect(width, `${width}x${height}`).toBeLessThanOrEqual(2400);
};

describe('the Mermaid picture, rendered by mermaid in headless Chromium', () => {
  const cannot = missingTools('chromium');
  let ir: Image;
  let rendered: { state: string; svg: string };

  beforeAll(async () => {
    ir = await irOf(example);
    if (cannot) return;
    // As docs/architecture.md shows it: with the base's arrows (to some 25 steps) Mermaid's layout is ~3,900 px wide.
    const graph = await imgc(['explain', '--no-typecheck', '--graph', 'mermaid', '--no-base-edges', example]);
    expect(graph.exitCode, graph.all).toBe(0);
    const dir = tempDir('mermaid');
    const script = pathToFileURL(createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js')).href;
    const escaped = graph.stdout.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const page = path.join(dir, 'graph.html');
    writeFileSync(
      page,
      [
        '<!doctype html><html><head><meta charset="utf-8"></head><body>',
        `<pre class="mermaid" id="graph">${escaped}</pre>`,
        `<script src="${script}"></script>`,
        // The outcome lands on <body> for --dump-dom to show: "ok", or mermaid's error (a syntax error draws an error picture instead).
        "<script>mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });",
        "mermaid.run({ querySelector: '#graph' }).then(() => document.body.setAttribute('data-rendered', 'ok'), (e) => document.body.setAttribute('data-rendered', 'error: ' + e));</script>",
        '</body></html>',
      ].join('\n'),
    );
    // Its profile, crash database and caches in the test's temp dir, not the user's home; virtual time lets the page's scripts finish before the DOM is dumped.
    const r = await execa(
      'chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-breakpad', `--user-data-dir=${path.join(dir, 'profile')}`, '--virtual-time-budget=10000', '--dump-dom', pathToFileURL(page).href],
      { reject: false, timeout: 180_000, env: { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_CACHE_HOME: path.join(dir, 'cache') } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    rendered = { state: /<body data-rendered="([^"]*)"/.exec(r.stdout)?.[1] ?? 'not rendered', svg: /<svg[\s\S]*<\/svg>/.exec(r.stdout)?.[0] ?? '' };
  }, 240_000);

  it('renders without an error, with every phase title and step label', (ctx) => {
    needTools(ctx, 'chromium');
    expect(rendered.state).toBe('ok');
    expect(rendered.svg).toMatch(/aria-roledescription="flowchart/);
    const text = svgText(rendered.svg);
    for (const l of labels(ir)) expect(text, l).toContain(flat(l));
  });

  it('is within the readability bound', (ctx) => {
    needTools(ctx, 'chromium');
    const box = /viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"/.exec(rendered.svg) ?? expect.fail('no viewBox');
    const [width, height] = [Number(box[1]), Number(box[2])];
    // Read top to bottom in a page, a tall picture scrolls: its width is what must stay readable.
    expect(width, `${Math.round(width)}x${Math.round(height)} px`).toBeLessThanOrEqual(2400);
  });
});

interface DotObject {
  name: string;
  pos?: string;
  width?: string;
  height?: string;
  style?: string;
  nodes?: number[];
}
interface DotDraw {
  op: string;
  pt?: [number, number];
  align?: string;
  width?: number;
  size?: number;
}
interface DotEdge {
  label?: string;
  lp?: string;
  _ldraw_?: DotDraw[];
}

type Box = { what: string; x0: number; y0: number; x1: number; y1: number };

/** Each drawn node's box and each edge label's box (from the text Graphviz placed, line by line), in points. */
const boxesOf = (layout: { objects: DotObject[]; edges?: DotEdge[] }): Box[] => {
  const boxes: Box[] = [];
  for (const o of layout.objects) {
    if (o.nodes || !o.pos || o.style === 'invis') continue;
    const [x, y] = o.pos.split(',').map(Number) as [number, number];
    const w = Number(o.width) * 72;
    const h = Number(o.height) * 72;
    boxes.push({ what: `node ${o.name}`, x0: x - w / 2, y0: y - h / 2, x1: x + w / 2, y1: y + h / 2 });
  }
  for (const e of layout.edges ?? []) {
    let size = 14;
    const lines: Box[] = [];
    for (const d of e._ldraw_ ?? []) {
      if (d.op === 'F') size = d.size ?? size;
      if (d.op !== 'T' || !d.pt) continue;
      const w = d.width ?? 0;
      const x0 = d.align === 'l' ? d.pt[0] : d.align === 'r' ? d.pt[0] - w : d.pt[0] - w / 2;
      lines.push({ what: '', x0, y0: d.pt[1] - size * 0.25, x1: x0 + w, y1: d.pt[1] + size * 0.75 });
    }
    if (lines.length) {
      boxes.push({
        what: `label "${e.label ?? ''}"`,
        x0: Math.min(...lines.map((l) => l.x0)),
        y0: Math.min(...lines.map((l) => l.y0)),
        x1: Math.max(...lines.map((l) => l.x1)),
        y1: Math.max(...lines.map((l) => l.y1)),
      });
    }
  }
  return boxes;
};

describe('the DOT picture, laid out and drawn by Graphviz', () => {
  let ir: Image;
  let svg = '';
  let layout: { bb: string; objects: DotObject[]; edges?: DotEdge[] };

  beforeAll(async () => {
    ir = await irOf(example);
    if (missingTools('dot')) return;
    const graph = await imgc(['explain', '--no-typecheck', '--graph', 'dot', example]);
    expect(graph.exitCode, graph.all).toBe(0);
    const dir = tempDir('dot-render');
    const file = path.join(dir, 'graph.dot');
    writeFileSync(file, graph.stdout);
    // One layout, written both as the picture and as Graphviz's account of where it put everything.
    await execa('dot', ['-Tsvg', '-o', path.join(dir, 'graph.svg'), '-Tjson', '-o', path.join(dir, 'graph.json'), file]);
    svg = readFileSync(path.join(dir, 'graph.svg'), 'utf8');
    layout = JSON.parse(readFileSync(path.join(dir, 'graph.json'), 'utf8')) as typeof layout;
  }, 120_000);

  it('draws every phase title and step label', (ctx) => {
    needTools(ctx, 'dot');
    const text = svgText(svg);
    for (const l of labels(ir)) expect(text, l).toContain(flat(l));
  });

  it('is within the readability bound', (ctx) => {
    needTools(ctx, 'dot');
    const [, , w, h] = layout.bb.split(',').map(Number) as [number, number, number, number];
    // Points to pixels at 96 dpi, as dot -Tpng draws it (test/graph.test.ts).
    readable((w * 96) / 72, (h * 96) / 72);
  });

  it('puts no node or edge label over another, by its own layout', (ctx) => {
    needTools(ctx, 'dot');
    const boxes = boxesOf(layout);
    expect(boxes.filter((b) => b.what.startsWith('label')).length).toBeGreaterThan(10);
    const overlaps: string[] = [];
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i]!;
        const b = boxes[j]!;
        if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) overlaps.push(`${a.what} / ${b.what}`);
      }
    }
    expect(overlaps).toEqual([]);
  });
});
