// A small HCL document model with two writers: native syntax laid out the way
// `packer fmt` lays it out (two-space indent, `=` aligned across consecutive
// single-line attributes, blank lines between blocks), and HCL JSON syntax for
// `.pkr.json`. Every string goes through quote.ts.
import {
  hclCommentText,
  hclString,
  hclTemplate,
  isHclIdentifier,
  jsonComment,
  jsonReference,
  jsonString,
  jsonTemplate,
  type TemplatePart,
} from './quote.js';

export type Value =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'bool'; readonly value: boolean }
  /** A string template with interpolated references written by this backend. */
  | { readonly kind: 'template'; readonly parts: readonly TemplatePart[] }
  /** A bare reference such as `var.x`. */
  | { readonly kind: 'ref'; readonly expr: string }
  /** A type keyword in a variable's `type`. */
  | { readonly kind: 'type'; readonly name: 'string' | 'number' | 'bool' | 'list(string)' }
  | { readonly kind: 'list'; readonly items: readonly Value[] }
  | { readonly kind: 'map'; readonly entries: readonly (readonly [string, Value])[] };

export type Item =
  | { readonly kind: 'attr'; readonly name: string; readonly value: Value }
  | { readonly kind: 'block'; readonly type: string; readonly labels: readonly string[]; readonly body: readonly Item[]; readonly comment?: readonly string[] }
  /** Comment lines inside a body (JSON: joined into the body's "//"). */
  | { readonly kind: 'comment'; readonly lines: readonly string[] }
  | { readonly kind: 'blank' };

export const str = (value: string): Value => ({ kind: 'string', value });
export const num = (value: number): Value => ({ kind: 'number', value });
export const bool = (value: boolean): Value => ({ kind: 'bool', value });
export const ref = (expr: string): Value => ({ kind: 'ref', expr });
export const tmpl = (...parts: TemplatePart[]): Value => ({ kind: 'template', parts });
export const list = (items: readonly Value[]): Value => ({ kind: 'list', items });
export const map = (entries: readonly (readonly [string, Value])[]): Value => ({ kind: 'map', entries });
export const attr = (name: string, value: Value): Item => {
  if (!isHclIdentifier(name)) throw new Error(`internal: '${name}' is not an HCL attribute name`);
  return { kind: 'attr', name, value };
};
export const block = (type: string, labels: readonly string[], body: readonly Item[], comment?: readonly string[]): Item =>
  comment && comment.length ? { kind: 'block', type, labels, body, comment } : { kind: 'block', type, labels, body };
export const comment = (...lines: string[]): Item => ({ kind: 'comment', lines });
export const blank: Item = { kind: 'blank' };

/** Packer's order-sensitive blocks: always a JSON array of single-key objects. */
const orderedBlocks = new Set(['provisioner', 'post-processor']);

const numberText = (n: number): string => {
  if (!Number.isFinite(n)) throw new Error(`internal: ${n} is not an HCL number`);
  return String(n);
};

// ---- native syntax ---------------------------------------------------------

const INDENT = '  ';
/** Lists longer than this on one line are written one item per line. */
const MAX_INLINE = 100;

const inlineValue = (v: Value): string | undefined => {
  switch (v.kind) {
    case 'string':
      return hclString(v.value);
    case 'number':
      return numberText(v.value);
    case 'bool':
      return String(v.value);
    case 'template':
      return hclTemplate(v.parts);
    case 'ref':
      return v.expr;
    case 'type':
      return v.name;
    case 'list': {
      const items = v.items.map(inlineValue);
      if (items.some((i) => i === undefined)) return undefined;
      return `[${items.join(', ')}]`;
    }
    case 'map':
      return v.entries.length === 0 ? '{}' : undefined;
  }
};

const mapKey = (k: string): string => (isHclIdentifier(k) ? k : hclString(k));

/** Lines of a value starting after `name = `; the first line has no indent. */
const valueLines = (v: Value, indent: string, lead: number): string[] => {
  const inline = inlineValue(v);
  if (inline !== undefined && lead + inline.length <= MAX_INLINE) return [inline];
  if (v.kind === 'list') {
    return ['[', ...v.items.flatMap((item) => withComma(valueLines(item, indent + INDENT, indent.length + INDENT.length), indent + INDENT)), `${indent}]`];
  }
  if (v.kind === 'map') {
    const entries = v.entries.map(([k, val]) => ({ name: mapKey(k), value: val }));
    return ['{', ...attrLines(entries, indent + INDENT), `${indent}}`];
  }
  return [inline ?? ''];
};

const withComma = (ls: string[], indent: string): string[] => ls.map((l, i) => (i === 0 ? indent + l : l) + (i === ls.length - 1 ? ',' : ''));

/** Consecutive single-line attributes share one `=` column, as packer fmt aligns them. */
const attrLines = (attrs: readonly { name: string; value: Value }[], indent: string): string[] => {
  const rendered = attrs.map((a) => ({ name: a.name, lines: valueLines(a.value, indent, indent.length + a.name.length + 3) }));
  const out: string[] = [];
  let run: { name: string; line: string }[] = [];
  const flush = () => {
    const width = Math.max(...run.map((r) => r.name.length));
    for (const r of run) out.push(`${indent}${r.name.padEnd(width)} = ${r.line}`);
    run = [];
  };
  for (const r of rendered) {
    if (r.lines.length === 1) run.push({ name: r.name, line: r.lines[0] ?? '' });
    else {
      if (run.length) flush();
      out.push(`${indent}${r.name} = ${r.lines[0]}`, ...r.lines.slice(1));
    }
  }
  if (run.length) flush();
  return out;
};

const bodyLines = (items: readonly Item[], indent: string): string[] => {
  const out: string[] = [];
  let attrs: { name: string; value: Value }[] = [];
  const flush = () => {
    if (attrs.length) out.push(...attrLines(attrs, indent));
    attrs = [];
  };
  for (const item of items) {
    if (item.kind === 'attr') {
      attrs.push({ name: item.name, value: item.value });
      continue;
    }
    flush();
    if (item.kind === 'blank') out.push('');
    else if (item.kind === 'comment') out.push(...item.lines.map((l) => commentLine(indent, l)));
    else {
      out.push(...(item.comment ?? []).map((l) => commentLine(indent, l)));
      const head = [item.type, ...item.labels.map(hclString)].join(' ');
      out.push(`${indent}${head} {`, ...bodyLines(item.body, indent + INDENT), `${indent}}`);
    }
  }
  flush();
  return out;
};

const commentLine = (indent: string, text: string): string => {
  const t = hclCommentText(text).trimEnd();
  return t ? `${indent}# ${t}` : `${indent}#`;
};

/** The document in HCL native syntax, as `packer fmt` would leave it. */
export const writeHcl = (items: readonly Item[]): string => `${bodyLines(items, '').join('\n')}\n`;

// ---- JSON syntax -----------------------------------------------------------

type Json = { readonly raw: string } | { readonly obj: readonly (readonly [string, Json])[] } | { readonly arr: readonly Json[] };

const jsonValue = (v: Value): Json => {
  switch (v.kind) {
    case 'string':
      return { raw: jsonString(v.value) };
    case 'number':
      return { raw: numberText(v.value) };
    case 'bool':
      return { raw: String(v.value) };
    case 'template':
      return { raw: jsonTemplate(v.parts) };
    case 'ref':
      return { raw: jsonReference(v.expr) };
    case 'type':
      return { raw: JSON.stringify(v.name) };
    case 'list':
      return { arr: v.items.map(jsonValue) };
    case 'map':
      // Object keys in an HCL JSON expression are templates too.
      return { obj: v.entries.map(([k, val]) => [jsonString(k), jsonValue(val)] as const) };
  }
};

const commentJson = (lines: readonly string[]): Json =>
  lines.length === 1 ? { raw: jsonComment(lines[0] ?? '') } : { arr: lines.map((l) => ({ raw: jsonComment(l) })) };

const nest = (labels: readonly string[], body: Json): Json =>
  labels.reduceRight<Json>((inner, label) => ({ obj: [[JSON.stringify(label), inner]] }), body);

/** A body: `"//"` comments first, then attributes and blocks in order, blocks grouped by type. */
const jsonBody = (items: readonly Item[], extraComment: readonly string[] = []): Json => {
  const comments = [...extraComment, ...items.flatMap((i) => (i.kind === 'comment' ? i.lines : []))];
  const entries: (readonly [string, Json] | string)[] = comments.length ? [['"//"', commentJson(comments)]] : [];
  const groups = new Map<string, Extract<Item, { kind: 'block' }>[]>();
  for (const item of items) {
    if (item.kind === 'attr') entries.push([JSON.stringify(item.name), jsonValue(item.value)]);
    else if (item.kind === 'block') {
      const group = groups.get(item.type);
      if (group) group.push(item);
      else {
        groups.set(item.type, [item]);
        entries.push(item.type);
      }
    }
  }
  return { obj: entries.map((e) => (typeof e === 'string' ? ([JSON.stringify(e), jsonBlocks(e, groups.get(e) ?? [])] as const) : e)) };
};

/** Blocks of one type: an ordered array, one object, or objects keyed by label. */
const jsonBlocks = (type: string, group: readonly Extract<Item, { kind: 'block' }>[]): Json => {
  const bodies = group.map((b) => ({ labels: b.labels, body: jsonBody(b.body, b.comment) }));
  if (orderedBlocks.has(type) || (group.length > 1 && bodies.some((b) => b.labels.length === 0))) {
    return { arr: bodies.map((b) => nest(b.labels, b.body)) };
  }
  const only = bodies[0];
  if (bodies.length === 1 && only && only.labels.length === 0) return only.body;
  return mergeLabeled(bodies);
};

/** `variable "a" {…}` `variable "b" {…}` → `"variable": {"a": {…}, "b": {…}}`. */
const mergeLabeled = (bodies: readonly { labels: readonly string[]; body: Json }[]): Json => {
  const keyed = new Map<string, { labels: string[]; body: Json }[]>();
  for (const b of bodies) {
    const [first, ...rest] = b.labels;
    if (first === undefined) throw new Error('internal: mixed labeled and unlabeled blocks');
    const k = JSON.stringify(first);
    keyed.set(k, [...(keyed.get(k) ?? []), { labels: rest, body: b.body }]);
  }
  return {
    obj: [...keyed].map(([k, bs]) => {
      if (bs.length === 1 && bs[0]?.labels.length === 0) return [k, bs[0].body] as const;
      if (bs.some((b) => b.labels.length === 0)) throw new Error(`internal: duplicate block label ${k}`);
      return [k, mergeLabeled(bs)] as const;
    }),
  };
};

const scalarArray = (j: Json): boolean => 'arr' in j && j.arr.every((x) => 'raw' in x);

const jsonLines = (j: Json, indent: string): string => {
  if ('raw' in j) return j.raw;
  const inner = indent + INDENT;
  if ('arr' in j) {
    if (j.arr.length === 0) return '[]';
    if (scalarArray(j)) {
      const one = `[${j.arr.map((x) => jsonLines(x, inner)).join(', ')}]`;
      if (indent.length + one.length <= MAX_INLINE) return one;
    }
    return `[\n${j.arr.map((x) => inner + jsonLines(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (j.obj.length === 0) return '{}';
  return `{\n${j.obj.map(([k, v]) => `${inner}${k}: ${jsonLines(v, inner)}`).join(',\n')}\n${indent}}`;
};

/** The document in HCL JSON syntax (`.pkr.json`); comments become `"//"` properties. */
export const writeJson = (items: readonly Item[]): string => `${jsonLines(jsonBody(items), '')}\n`;
