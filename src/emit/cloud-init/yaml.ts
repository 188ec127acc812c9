// cloud-init's binding of the shared YAML model (../yaml.ts): scalars, keys
// and comments from ./quote.ts, which owns every character of quoting; a flow
// sequence falls back to block style when it would not fit on a short line;
// a blank line between top-level keys. Renderings import the model from here.
import * as Y from '../yaml.js';
import { comment, key, type Scalar } from './quote.js';

export type Node = Y.Node<Scalar>;
export type Entry = Y.Entry<Scalar>;
export type YMap = Y.YMap<Scalar>;
export type Item = Y.Item<Scalar>;
export type YSeq = Y.YSeq<Scalar>;

export const map = (entries: Record<string, Node | undefined>): YMap => Y.map<Scalar>(entries);
export const entries = (es: readonly (Entry | undefined)[]): YMap => Y.map<Scalar>(es);
export const seq = (items: readonly (Node | Item)[], opts: { flow?: boolean } = {}): YSeq => Y.seq<Scalar>(items, opts);

/** Longest line a flow sequence may make; longer ones go in block style. */
const FLOW_WIDTH = 100;

/** `[a, b]` when every item is a scalar that renders on one line and the line stays short. */
const flow = (s: YSeq, col: number): string | undefined => {
  if (s.items.some((i) => i.value.kind !== 'scalar' || i.comments?.length)) return undefined;
  const parts = s.items.map((i) => (i.value as Scalar).render({ indent: col + 2, flow: true }));
  const text = `[${parts.join(', ')}]`;
  return text.includes('\n') || col + text.length > FLOW_WIDTH ? undefined : text;
};

const { commentLines, renderMap } = Y.renderer<Scalar>({ key, comment, flow });

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
