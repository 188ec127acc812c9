// The one YAML document model both YAML targets (ansible, cloud-init) write
// with, and its block-style renderer: 2-space indent, sequences indented under
// their key (yamllint's default), comments above entries and items. What
// differs per target is a `Dialect`: its scalars (each target's quote.ts owns
// every character of quoting), keys, comments and when a sequence goes in flow
// style. src/emit/ansible/yaml.ts and src/emit/cloud-init/yaml.ts bind it.

/** Where a scalar goes; each target reads the fields it needs. */
export interface ScalarAt {
  /** Column (0-based) where the scalar's first character goes. */
  readonly column: number;
  /** Indentation of continuation lines and block-scalar content. */
  readonly indent: number;
  /** True when the scalar is a mapping value (block scalars are only used there). */
  readonly mappingValue: boolean;
  /** Inside `[ ]`: one line, no block scalars. */
  readonly flow: boolean;
}

export interface ScalarBase {
  readonly kind: 'scalar';
  render(at: ScalarAt): string;
}

export type Node<S extends ScalarBase> = S | YMap<S> | YSeq<S>;

export interface Entry<S extends ScalarBase> {
  readonly key: string;
  readonly value: Node<S>;
  /** Comment lines written above the entry. */
  readonly comments?: readonly string[];
}

export interface YMap<S extends ScalarBase> {
  readonly kind: 'map';
  readonly entries: readonly Entry<S>[];
}

export interface Item<S extends ScalarBase> {
  readonly value: Node<S>;
  /** Comment lines written above the item. */
  readonly comments?: readonly string[];
  /** ansible-lint rules skipped for this item, as `# noqa:` on its first line. */
  readonly noqa?: readonly string[];
}

export interface YSeq<S extends ScalarBase> {
  readonly kind: 'seq';
  readonly items: readonly Item<S>[];
  /** A blank line between items (task lists). */
  readonly spaced?: boolean;
  /** `[a, b]` on one line, when the dialect takes it (see `Dialect.flow`). */
  readonly flow?: boolean;
}

/** What a target decides about its YAML; everything else is shared. */
export interface Dialect<S extends ScalarBase> {
  /** A mapping key as written (the target refuses what it never writes). */
  key(k: string): string;
  /** One comment line's text, `#` included. */
  comment(text: string): string;
  /** Comments are word-wrapped so their lines stay within this width; none: one line per comment. */
  readonly commentWidth?: number;
  /** The `[a, b]` text of a flow sequence starting at `column`, or undefined for block style. */
  flow(s: YSeq<S>, column: number): string | undefined;
}

/** Entries whose value is undefined are left out, so optional fields read naturally. */
export const map = <S extends ScalarBase>(entries: Record<string, Node<S> | undefined> | readonly (Entry<S> | undefined)[]): YMap<S> => ({
  kind: 'map',
  entries: Array.isArray(entries)
    ? (entries as readonly (Entry<S> | undefined)[]).filter((e): e is Entry<S> => e !== undefined)
    : Object.entries(entries)
        .filter((e): e is [string, Node<S>] => e[1] !== undefined)
        .map(([key, value]) => ({ key, value })),
});

export const entry = <S extends ScalarBase>(key: string, value: Node<S> | undefined, comments?: readonly string[]): Entry<S> | undefined =>
  value === undefined ? undefined : { key, value, ...(comments?.length ? { comments } : {}) };

export const seq = <S extends ScalarBase>(items: readonly (Node<S> | Item<S>)[], opts: { spaced?: boolean; flow?: boolean } = {}): YSeq<S> => ({
  kind: 'seq',
  items: items.map((i) => ('kind' in i ? { value: i } : i)),
  ...(opts.spaced ? { spaced: true } : {}),
  ...(opts.flow ? { flow: true } : {}),
});

const pad = (n: number): string => ' '.repeat(n);

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

/** Renders nodes in one dialect; the targets' `document` functions put the file around them. */
export const renderer = <S extends ScalarBase>(d: Dialect<S>) => {
  const commentLines = (cs: readonly string[] | undefined, col: number): string[] =>
    (cs ?? []).flatMap((c) => (d.commentWidth === undefined ? [c] : wrap(c, d.commentWidth - col - 2)).map((l) => pad(col) + d.comment(l)));

  /** Puts `- ` before a nested block's first line. */
  const dashed = (lines: string[], col: number): string[] => [`${pad(col)}- ${lines[0]!.slice(col + 2)}`, ...lines.slice(1)];

  const renderMap = (m: YMap<S>, col: number): string[] =>
    m.entries.flatMap((e) => {
      const head = `${pad(col)}${d.key(e.key)}:`;
      const out = commentLines(e.comments, col);
      const v = e.value;
      if (v.kind === 'scalar') out.push(`${head} ${v.render({ column: head.length + 1, indent: col + 2, mappingValue: true, flow: false })}`);
      else if (v.kind === 'map') out.push(...(v.entries.length ? [head, ...renderMap(v, col + 2)] : [`${head} {}`]));
      else {
        const flow = v.flow ? d.flow(v, head.length + 1) : undefined;
        out.push(...(flow !== undefined ? [`${head} ${flow}`] : v.items.length ? [head, ...renderSeq(v, col + 2)] : [`${head} []`]));
      }
      return out;
    });

  const renderSeq = (s: YSeq<S>, col: number): string[] =>
    s.items.flatMap((item, i) => {
      const out = [...(s.spaced && i > 0 ? [''] : []), ...commentLines(item.comments, col)];
      const v = item.value;
      let lines: string[];
      if (v.kind === 'scalar') lines = [`${pad(col)}- ${v.render({ column: col + 2, indent: col + 2, mappingValue: false, flow: false })}`];
      else if (v.kind === 'map' && v.entries.length) {
        if (v.entries[0]!.comments?.length) throw new Error('internal: put the comments of a sequence item on the item');
        lines = dashed(renderMap(v, col + 2), col);
      } else if (v.kind === 'seq' && v.items.length) {
        const flow = v.flow ? d.flow(v, col + 2) : undefined;
        if (flow !== undefined) lines = [`${pad(col)}- ${flow}`];
        else {
          if (v.items[0]!.comments?.length) throw new Error('internal: put the comments of a sequence item on the item');
          lines = dashed(renderSeq(v, col + 2), col);
        }
      } else lines = [`${pad(col)}- ${v.kind === 'map' ? '{}' : '[]'}`];
      if (item.noqa?.length) lines[0] += `  # noqa: ${item.noqa.join(' ')}`;
      return [...out, ...lines];
    });

  return { commentLines, renderMap, renderSeq };
};
