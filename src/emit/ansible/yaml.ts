// A small YAML document model and its renderer: block style, 2-space indent,
// sequences indented under their key (yamllint's default), comments where the
// backend puts them. Scalars come from ./quote.ts, which owns all quoting.
import { comment, key as plainKey, type Scalar } from './quote.js';

export type Node = Scalar | YMap | YSeq;

export interface Entry {
  readonly key: string;
  readonly value: Node;
  /** Comment lines written above the entry. */
  readonly comments?: readonly string[];
}

export interface YMap {
  readonly kind: 'map';
  readonly entries: readonly Entry[];
}

export interface Item {
  readonly value: Node;
  /** Comment lines written above the item. */
  readonly comments?: readonly string[];
  /** ansible-lint rules skipped for this item, as `# noqa:` on its first line. */
  readonly noqa?: readonly string[];
}

export interface YSeq {
  readonly kind: 'seq';
  readonly items: readonly Item[];
  /** A blank line between items (task lists). */
  readonly spaced?: boolean;
  /** `[a, b]` on one line: only for short lists of the backend's own scalars. */
  readonly flow?: boolean;
}

/** Entries whose value is undefined are left out, so optional fields read naturally. */
export const map = (entries: Record<string, Node | undefined> | readonly (Entry | undefined)[]): YMap => ({
  kind: 'map',
  entries: Array.isArray(entries)
    ? (entries as readonly (Entry | undefined)[]).filter((e): e is Entry => e !== undefined)
    : Object.entries(entries)
        .filter((e): e is [string, Node] => e[1] !== undefined)
        .map(([key, value]) => ({ key, value })),
});

export const entry = (key: string, value: Node | undefined, comments?: readonly string[]): Entry | undefined =>
  value === undefined ? undefined : { key, value, ...(comments?.length ? { comments } : {}) };

export const seq = (items: readonly (Node | Item)[], opts: { spaced?: boolean; flow?: boolean } = {}): YSeq => ({
  kind: 'seq',
  items: items.map((i) => ('kind' in i ? { value: i } : i)),
  ...(opts.spaced ? { spaced: true } : {}),
  ...(opts.flow ? { flow: true } : {}),
});

const flowSeq = (s: YSeq): string =>
  `[${s.items
    .map((i) => {
      if (i.value.kind !== 'scalar' || i.value.value !== undefined) throw new Error('internal: flow sequences hold constants only');
      const text = i.value.render({ column: 0, indent: 0, mappingValue: false });
      if (/[\n,\[\]{}]/.test(text)) throw new Error(`internal: ${text} does not fit a flow sequence`);
      return text;
    })
    .join(', ')}]`;

const pad = (n: number): string => ' '.repeat(n);

const COMMENT_WIDTH = 100;

/** Word-wraps one comment's text; continuation lines keep its leading spaces. */
const wrap = (text: string, room: number): string[] => {
  const lead = /^ */.exec(text)![0];
  const words = text.slice(lead.length).split(' ');
  const out: string[] = [];
  let line = '';
  for (const w of words) {
    if (line !== '' && lead.length + line.length + 1 + w.length > room) {
      out.push(lead + line);
      line = w;
    } else line = line === '' ? w : `${line} ${w}`;
  }
  out.push(lead + line);
  return out;
};

const commentLines = (cs: readonly string[] | undefined, indent: number): string[] =>
  (cs ?? []).flatMap((c) => wrap(c, COMMENT_WIDTH - indent - 2).map((l) => pad(indent) + comment(l)));

const renderMap = (m: YMap, indent: number): string[] =>
  m.entries.flatMap((e) => {
    const k = plainKey(e.key);
    const head = `${pad(indent)}${k}:`;
    const out = commentLines(e.comments, indent);
    const v = e.value;
    if (v.kind === 'scalar') out.push(`${head} ${v.render({ column: indent + k.length + 2, indent: indent + 2, mappingValue: true })}`);
    else if (v.kind === 'map') out.push(...(v.entries.length ? [head, ...renderMap(v, indent + 2)] : [`${head} {}`]));
    else if (v.flow) out.push(`${head} ${flowSeq(v)}`);
    else out.push(...(v.items.length ? [head, ...renderSeq(v, indent + 2)] : [`${head} []`]));
    return out;
  });

const renderSeq = (s: YSeq, indent: number): string[] =>
  s.items.flatMap((item, i) => {
    const out = [...(s.spaced && i > 0 ? [''] : []), ...commentLines(item.comments, indent)];
    const v = item.value;
    let lines: string[];
    if (v.kind === 'scalar') lines = [`${pad(indent)}- ${v.render({ column: indent + 2, indent: indent + 2, mappingValue: false })}`];
    else if (v.kind === 'map' && v.entries.length) {
      if (v.entries[0]!.comments?.length) throw new Error('internal: put comments of a sequence item on the item');
      lines = renderMap(v, indent + 2);
      lines[0] = `${pad(indent)}- ${lines[0]!.slice(indent + 2)}`;
    } else if (v.kind === 'seq' && v.items.length) {
      lines = renderSeq(v, indent + 2);
      lines[0] = `${pad(indent)}- ${lines[0]!.slice(indent + 2)}`;
    } else lines = [`${pad(indent)}- ${v.kind === 'map' ? '{}' : '[]'}`];
    if (item.noqa?.length) lines[0] += `  # noqa: ${item.noqa.join(' ')}`;
    return [...out, ...lines];
  });

/** A whole YAML file: `---`, header comments, then the node; ends with one newline. */
export const document = (node: YMap | YSeq, header: readonly string[] = []): string => {
  const body = node.kind === 'map' ? renderMap(node, 0) : renderSeq(node, 0);
  const head = commentLines(header, 0);
  return `${['---', ...head, ...(head.length ? [''] : []), ...body].join('\n')}\n`;
};
