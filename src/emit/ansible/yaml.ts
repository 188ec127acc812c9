// Ansible's binding of the shared YAML model (../yaml.ts): its scalars, keys
// and comments from ./quote.ts, comments wrapped at 100 columns, flow style
// only for short lists of its own constants. Renderings import the model from
// here (`map`, `seq`, `entry`, `document`), so they cannot mix in another
// target's scalars.
import * as Y from '../yaml.js';
import { comment, key, type Scalar } from './quote.js';

export type Node = Y.Node<Scalar>;
export type Entry = Y.Entry<Scalar>;
export type YMap = Y.YMap<Scalar>;
export type Item = Y.Item<Scalar>;
export type YSeq = Y.YSeq<Scalar>;

export const map = Y.map<Scalar>;
export const entry = Y.entry<Scalar>;
export const seq = Y.seq<Scalar>;

const flow = (s: YSeq): string =>
  `[${s.items
    .map((i) => {
      if (i.value.kind !== 'scalar' || i.value.value !== undefined) throw new Error('internal: flow sequences hold constants only');
      const text = i.value.render({ column: 0, indent: 0, mappingValue: false });
      if (/[\n,\[\]{}]/.test(text)) throw new Error(`internal: ${text} does not fit a flow sequence`);
      return text;
    })
    .join(', ')}]`;

const { commentLines, renderMap, renderSeq } = Y.renderer<Scalar>({ key, comment, commentWidth: 100, flow });

/** A whole YAML file: `---`, header comments, then the node; ends with one newline. */
export const document = (node: YMap | YSeq, header: readonly string[] = []): string => {
  const body = node.kind === 'map' ? renderMap(node, 0) : renderSeq(node, 0);
  const head = commentLines(header, 0);
  return `${['---', ...head, ...(head.length ? [''] : []), ...body].join('\n')}\n`;
};
