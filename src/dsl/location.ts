// Where in the user's definition a step was declared. We read the V8 stack
// (source-mapped by the loader) and take the first frame outside imgc itself,
// so a stdlib module's steps point at the user's `.use(module())` line.
import { fileURLToPath } from 'node:url';
import { findSourceMap, type SourceMap } from 'node:module';
import path from 'node:path';
import type { SourceLocation } from '../ir/types.js';
import { isUsersFile } from '../util/package-root.js';

/** The definition file locations are made relative to; set by the loader. */
let definitionDir: string | undefined;
export const setDefinitionDir = (dir: string | undefined): void => {
  definitionDir = dir;
  relativeNames.clear();
};

const rawFrames = (_: Error, frames: NodeJS.CallSite[]): NodeJS.CallSite[] => frames;

// Per generated file, its source map once found: the loader's (src/load/link.ts), registered before
// any of the module's code runs and parsed when first asked, else Node's.
const maps = new Map<string, SourceMap>();
const registered = new Map<string, () => SourceMap | undefined>();
export const registerSourceMap = (file: string, map: () => SourceMap | undefined): void => {
  registered.set(file, map);
  maps.delete(file);
};
const mapOf = (file: string): SourceMap | undefined => {
  let map = maps.get(file);
  if (!map && (map = registered.get(file)?.() ?? findSourceMap(file))) maps.set(file, map);
  return map;
};

/** Original (source-mapped) position of a generated one, when the file has a map. */
const original = (file: string, line: number, column: number): { file: string; line: number; column: number } => {
  const entry = mapOf(file)?.findEntry(line - 1, column - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
  if (!entry || entry.originalLine === undefined || entry.originalColumn === undefined) return { file, line, column };
  return { file: entry.originalSource ?? file, line: entry.originalLine + 1, column: entry.originalColumn + 1 };
};

// Per file name or URL, the path the IR writes: relative to the definition's directory (kept while it is set), with "/".
const relativeNames = new Map<string, string>();
const relativeName = (name: string): string => {
  let rel = relativeNames.get(name);
  if (rel === undefined) {
    rel = definitionRelative(name.startsWith('file://') ? fileURLToPath(name) : name);
    if (definitionDir !== undefined) relativeNames.set(name, rel);
  }
  return rel;
};

// Per file name: is it imgc's own code (or node's, or a dependency's)? The
// same few names recur for every step, so the answer is kept.
const ownFrame = new Map<string, boolean>();
const isOwnFrame = (name: string): boolean => {
  let own = ownFrame.get(name);
  if (own === undefined) {
    const file = name.startsWith('file://') ? fileURLToPath(name) : name;
    own = name.startsWith('node:') || !isUsersFile(file);
    ownFrame.set(name, own);
  }
  return own;
};

/** Where a stack frame (a file name or URL, 1-based) is in the user's code, source-mapped, as the IR writes it; undefined for imgc's, Node's or a package's. */
export const userLocation = (name: string, line: number, column: number): SourceLocation | undefined => {
  if (isOwnFrame(name)) return undefined;
  const at = original(name, line, column);
  return { file: relativeName(at.file), line: at.line, column: at.column };
};

// The structured stack (CallSite objects) instead of the formatted string:
// formatting maps every frame through source maps, which cost most of the
// time of a 10,000-step definition; we map the one frame we keep. V8 makes
// an object for every frame it collects: the nearest five first (a step's
// method, then the user's line, as a rule), all only when those are imgc's.
export const callerLocation = (): SourceLocation | undefined => {
  const limit = Error.stackTraceLimit;
  const near = Math.min(5, limit);
  return firstUserFrame(near) ?? (near < limit ? firstUserFrame(limit) : undefined);
};

const firstUserFrame = (depth: number): SourceLocation | undefined => {
  const { prepareStackTrace, stackTraceLimit } = Error;
  Error.prepareStackTrace = rawFrames;
  Error.stackTraceLimit = depth;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  Error.captureStackTrace(holder, callerLocation);
  const frames = holder.stack ?? [];
  Error.prepareStackTrace = prepareStackTrace;
  Error.stackTraceLimit = stackTraceLimit;
  for (const frame of frames) {
    const name = frame.getFileName();
    const line = frame.getLineNumber();
    const column = frame.getColumnNumber();
    const loc = name && line !== null && column !== null ? userLocation(name, line, column) : undefined;
    if (loc) return loc;
  }
  return undefined;
};

/** The directory of the file that called into imgc (the definition's, or a module's of it), for paths written relative to it. */
export const callerDir = (): string => {
  const loc = callerLocation();
  const base = definitionDir ?? process.cwd();
  return loc ? path.dirname(path.resolve(base, loc.file)) : base;
};

/** A path as the IR writes it: relative to the definition's directory, with "/". */
export const definitionRelative = (file: string): string => path.relative(definitionDir ?? process.cwd(), file).split(path.sep).join('/');

// Files a definition read besides its modules (a contract named by path): the
// loader counts them among its inputs, so its cached result follows them.
const filesRead: string[] = [];
export const noteFileRead = (file: string): void => void filesRead.push(file);
export const definitionFilesRead = (): readonly string[] => filesRead;
