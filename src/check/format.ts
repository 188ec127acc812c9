// Diagnostics as text (with tsc-like code frames), JSON, or SARIF 2.1.0.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SourceLocation } from '../ir/schema.js';
import { diagnosticCodes } from './codes.js';
import type { Diagnostic, SeenBy } from './diagnostic.js';

export interface FormatContext {
  /** Directory the diagnostics' locations are relative to. */
  dir: string;
  /** Paths are printed relative to this directory (the cwd). */
  cwd: string;
  color: boolean;
}

const paint = (on: boolean, code: string) => (s: string) => (on ? `\u001b[${code}m${s}\u001b[0m` : s);

const displayPath = (ctx: FormatContext, loc: SourceLocation) => {
  const rel = path.relative(ctx.cwd, path.resolve(ctx.dir, loc.file));
  return rel.split(path.sep).join('/');
};

const sourceCache = new Map<string, string[] | undefined>();
const sourceLines = (file: string): string[] | undefined => {
  if (!sourceCache.has(file)) {
    try {
      sourceCache.set(file, readFileSync(file, 'utf8').split(/\r?\n/));
    } catch {
      sourceCache.set(file, undefined);
    }
  }
  return sourceCache.get(file);
};

const codeFrame = (ctx: FormatContext, loc: SourceLocation, mark: (s: string) => string, dim: (s: string) => string): string[] => {
  const lines = sourceLines(path.resolve(ctx.dir, loc.file));
  const text = lines?.[loc.line - 1];
  if (text === undefined) return [];
  const num = String(loc.line);
  const gutter = ' '.repeat(num.length);
  const rest = text.slice(loc.column - 1);
  const width = Math.max(1, /^[\w$.'"`/-]+/.exec(rest)?.[0].length ?? 1);
  return ['', `${dim(num)} ${text}`, `${gutter} ${' '.repeat(Math.max(0, loc.column - 1))}${mark('~'.repeat(width))}`];
};

const layerName = { contract: 'the contract checker', typescript: 'TypeScript' } as const;

/** `the contract checker (IMGC0003), TypeScript (TS2820 at 15:47)`: one mistake, every layer that reported it. */
const seenByText = (ctx: FormatContext, seenBy: readonly SeenBy[]): string =>
  seenBy.map((s) => `${layerName[s.layer]} (${s.code}${s.loc ? ` at ${displayPath(ctx, s.loc)}:${s.loc.line}:${s.loc.column}` : ''})`).join(', ');

export const formatText = (ds: readonly Diagnostic[], ctx: FormatContext): string => {
  const red = paint(ctx.color, '31');
  const yellow = paint(ctx.color, '33');
  const cyan = paint(ctx.color, '36');
  const gray = paint(ctx.color, '90');
  const blocks = ds.map((d) => {
    const sev = d.severity === 'error' ? red : yellow;
    const where = d.loc ? `${cyan(displayPath(ctx, d.loc))}:${yellow(String(d.loc.line))}:${yellow(String(d.loc.column))} - ` : '';
    const lines = [`${d.variant ? `${d.variant}: ` : ''}${where}${sev(d.severity)} ${gray(d.code)}: ${d.message}`];
    if (d.loc) lines.push(...codeFrame(ctx, d.loc, sev, gray));
    for (const r of d.related) {
      lines.push('', `  ${r.loc ? `${cyan(displayPath(ctx, r.loc))}:${yellow(String(r.loc.line))}:${yellow(String(r.loc.column))}` : ''}`);
      if (r.loc) lines.push(...codeFrame(ctx, r.loc, cyan, gray).slice(1).map((l) => `    ${l}`));
      lines.push(`    ${r.message}`);
    }
    if (d.hint) lines.push('', `  ${gray('hint:')} ${d.hint}`);
    if (d.seenBy) lines.push(...(d.hint ? [] : ['']), `  ${gray('seen by:')} ${seenByText(ctx, d.seenBy)}`);
    return lines.join('\n');
  });
  const errors = ds.filter((d) => d.severity === 'error').length;
  const warnings = ds.length - errors;
  const summary = ds.length === 0 ? '' : `\nFound ${errors} error${errors === 1 ? '' : 's'} and ${warnings} warning${warnings === 1 ? '' : 's'}.\n`;
  return blocks.join('\n\n') + (blocks.length ? '\n' : '') + summary;
};

/** The diagnostics as JSON values, with paths relative to the cwd (check's and compile's --format json). */
export const jsonDiagnostics = (ds: readonly Diagnostic[], ctx: FormatContext) => {
  const withPath = (loc: SourceLocation | undefined) => (loc ? { ...loc, file: displayPath(ctx, loc) } : undefined);
  return ds.map((d) => ({
    ...d,
    loc: withPath(d.loc),
    related: d.related.map((r) => ({ ...r, loc: withPath(r.loc) })),
    ...(d.seenBy ? { seenBy: d.seenBy.map((s) => ({ ...s, loc: withPath(s.loc) })) } : {}),
  }));
};

/** JSON: the diagnostics with paths relative to the cwd, plus counts. */
export const formatJson = (ds: readonly Diagnostic[], ctx: FormatContext): string => {
  return `${JSON.stringify(
    {
      diagnostics: jsonDiagnostics(ds, ctx),
      errors: ds.filter((d) => d.severity === 'error').length,
      warnings: ds.filter((d) => d.severity === 'warning').length,
    },
    null,
    2,
  )}\n`;
};

const sarifLocation = (ctx: FormatContext, loc: SourceLocation) => ({
  physicalLocation: {
    artifactLocation: { uri: encodeURI(displayPath(ctx, loc)), uriBaseId: '%SRCROOT%' },
    region: { startLine: loc.line, startColumn: loc.column },
  },
});

/** SARIF 2.1.0, as GitHub code scanning and other CI uploads accept it. */
export const formatSarif = (ds: readonly Diagnostic[], ctx: FormatContext, toolVersion: string): string => {
  const used = [...new Set(ds.map((d) => d.code))].sort();
  const rules = used.map((code) => {
    const info = diagnosticCodes[code];
    return {
      id: code,
      name: info.title.replace(/(^|[^a-z0-9])([a-z0-9])/gi, (_, _sep: string, c: string) => c.toUpperCase()),
      shortDescription: { text: info.title },
      help: { text: info.fix },
      defaultConfiguration: { level: info.severity === 'error' ? 'error' : 'warning' },
    };
  });
  const results = ds.map((d) => ({
    ruleId: d.code,
    ruleIndex: used.indexOf(d.code),
    level: d.severity === 'error' ? 'error' : 'warning',
    message: { text: `${d.variant ? `${d.variant}: ` : ''}${d.hint ? `${d.message} (${d.hint})` : d.message}` },
    ...(d.loc ? { locations: [sarifLocation(ctx, d.loc)] } : {}),
    ...(d.related.some((r) => r.loc)
      ? { relatedLocations: d.related.filter((r) => r.loc).map((r, i) => ({ id: i, ...sarifLocation(ctx, r.loc!), message: { text: r.message } })) }
      : {}),
    // SARIF's property bag: the layers that reported this one mistake, each with its own code and place.
    // and the combination of a matrix the result is about.
    ...(d.seenBy || d.variant
      ? {
          properties: {
            ...(d.variant ? { variant: d.variant } : {}),
            ...(d.seenBy ? { seenBy: d.seenBy.map((s) => ({ layer: s.layer, code: s.code, ...(s.loc ? { file: displayPath(ctx, s.loc), line: s.loc.line, column: s.loc.column } : {}) })) } : {}),
          },
        }
      : {}),
  }));
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        // No informationUri: imgc has no public page yet, and a link that leads nowhere is worse than none.
        tool: { driver: { name: 'imgc', version: toolVersion, rules } },
        originalUriBaseIds: { '%SRCROOT%': { uri: `${new URL(`file://${ctx.cwd.endsWith('/') ? ctx.cwd : `${ctx.cwd}/`}`).href}` } },
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
};
