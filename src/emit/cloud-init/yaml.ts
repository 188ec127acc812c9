// A small YAML document model and its renderer: block style, 2-space indent,
// sequences indented under their key, comments above entries and items, a
// blank line between top-level keys. Scalars, keys and comments all come from
// ./quote.ts, which owns every character of quoting.
import { comment, key as plainKey, type Scalar } from './quote.js';

export type Node = Scalar | YMap | YSeq;

export interface Entry {
  readonly key: string;
  readonly value: Node;
  readonly comments?: readonly string[];
}

export interface YMap {
  readonly kind: 'map';
  readonly entries: readonly Entry[];
}

export interface Item {
  readonly value: Node;
  readonly comments?: readonly string[];
}

export interface YSeq {
  readonly kind: 'seq';
  readonly items: readonly Item[];
  /** `[a, b]` on one line when every item fits on it. */
  readonly flow?: boolean;
}

/** Entries whose value is undefined are left out, so optional fields read naturally. */
export const map = (entries: Record<string, Node | undefined>): YMap => ({
  kind: 'map',
  entries: Object.entries(entries)
    .filter((e): e is [string, Node] => e[1] !== undefined)
    .map(([key, value]) => ({ key, value })),
});

export const entries = (es: readonly (Entry | undefined)[]): YMap => ({ kind: 'map', entries: es.filter((e): e is Entry => e !== undefined) });

export const seq = (items: readonly (Node | Item)[], opts: { flow?: boolean } = {}): YSeq => ({
  kind: 'seq',
  items: items.map((i) => ('kind' in i ? { value: i } : i)),
  ...(opts.flow ? { flow: true } : {}),
});

const pad = (n: number): string => ' '.repeat(n);

/** Longest line a flow sequence may make; longer ones go in block style. */
const FLOW_WIDTH = 100;

const commentLines = (cs: readonly string[] | undefined, col: number): string[] => (cs ?? []).map((c) => pad(col) + comment(c));

/** `[a, b]` when every item is a scalar that renders on one line and the line stays short. */
const flowText = (s: YSeq, col: number): string | undefined => {
  if (!s.flow || s.items.some((i) => i.value.kind !== 'scalar' || i.comments?.length)) return undefined;
  const parts = s.items.map((i) => (i.value as Scalar).render({ indent: col + 2, flow: true }));
  const text = `[${parts.join(', ')}]`;
  return text.includes('\n') || col + text.length > FLOW_WIDTH ? undefined : text;
};

const renderMap = (m: YMap, col: number): string[] =>
  m.entries.flatMap((e) => {
    const head = `${pad(col)}${plainKey(e.key)}:`;
    const out = commentLines(e.comments, col);
    const v = e.value;
    if (v.kind === 'scalar') out.push(`${head} ${v.render({ indent: col + 2, flow: false })}`);
    else if (v.kind === 'map') out.push(...(v.entries.length ? [head, ...renderMap(v, col + 2)] : [`${head} {}`]));
    else {
      const flow = flowText(v, head.length + 1);
      out.push(...(flow !== undefined ? [`${head} ${flow}`] : v.items.length ? [head, ...renderSeq(v, col + 2)] : [`${head} []`]));
    }
    return out;
  });

const renderSeq = (s: YSeq, col: number): string[] =>
  s.items.flatMap((item) => {
    const out = commentLines(item.comments, col);
    const v = item.value;
    const dash = `${pad(col)}- `;
    if (v.kind === 'scalar') out.push(dash + v.render({ indent: col + 2, flow: false }));
    else if (v.kind === 'map' && v.entries.length) {
      if (v.entries[0]!.comments?.length) throw new Error('internal: put the comments of a sequence item on the item');
      const lines = renderMap(v, col + 2);
      out.push(dash + lines[0]!.slice(col + 2), ...lines.slice(1));
    } else if (v.kind === 'seq' && v.items.length) {
      const flow = flowText(v, col + 2);
      if (flow !== undefined) out.push(dash + flow);
      else {
        if (v.items[0]!.comments?.length) throw new Error('internal: put the comments of a sequence item on the item');
        const lines = renderSeq(v, col + 2);
        out.push(dash + lines[0]!.slice(col + 2), ...lines.slice(1));
      }
    } else out.push(dash + (v.kind === 'map' ? '{}' : '[]'));
    return out;
  });

/**
 * A whole file: `first` (e.g. `#cloud-config`), header comments, then the
 * mapping's entries (`spaced`: a blank line before each); ends with one newline.
 */
export const document = (first: string, header: readonly string[], body: YMap, opts: { spaced?: boolean } = {}): string => {
  const head = [first, ...commentLines(header, 0)];
  if (!body.entries.length) return `${[...head, '{}'].join('\n')}\n`;
  if (!opts.spaced) return `${[...head, ...renderMap(body, 0)].join('\n')}\n`;
  const parts = [head, ...body.entries.map((e) => renderMap({ kind: 'map', entries: [e] }, 0))];
  return `${parts.map((p) => p.join('\n')).join('\n\n')}\n`;
};
