// @ts-check
// TypeScript's check of a definition, in a process of its own, so that it
// runs on another core while the definition is evaluated and checked.
//
// Most of a check is parsing and binding the same declarations every time
// (lib.es2022, zod, imgc's own): some 160 files. So this file also makes a V8
// startup snapshot (node --build-snapshot this file) that holds them parsed
// and bound, from a definition that only imports imgc; later runs start from
// it (node --snapshot-blob) and parse only the user's files. A snapshot build
// may load only Node's built-in modules, so this file is plain CommonJS and
// needs nothing of imgc. The parent (./typecheck.ts) decides which way to run
// it and when the snapshot is stale.
//
// Three ways in:
//   node typecheck-child.cjs                       Request on stdin, Answer on stdout
//   node --snapshot-blob B                         the same, from snapshot B
//   node typecheck-child.cjs --make-snapshot B R   makes B from Request R (JSON), in the background
'use strict';
const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');

// A snapshot build's own require() knows only Node's built-in modules.
const requireHere = createRequire(__filename);

/**
 * @typedef {object} Request
 * @property {string} file the definition (absolute)
 * @property {string} imgcTypes `imgc`'s declarations
 * @property {string} stdlibTypes `imgc/stdlib`'s declarations
 * @property {string[]} typeRoots
 * @property {boolean} nodeTypesAvailable whether Node's types are installed, for a definition that uses Node
 * @property {string[]} ownDirs imgc's own source directories (with a trailing separator): not the user's files
 * @property {string} cacheDir where V8's code cache for TypeScript is kept
 *
 * @typedef {object} TsDiagnostic
 * @property {number} code
 * @property {string} message
 * @property {string} [file]
 * @property {number} [line] 1-based
 * @property {number} [column] 1-based
 *
 * @typedef {object} Stamp a file as it was when the snapshot was made
 * @property {string} file
 * @property {number} size
 * @property {number} mtimeMs
 *
 * @typedef {{ ok: true, syntactic: boolean, diagnostics: TsDiagnostic[], inputs: string[], via: 'snapshot' | 'snapshot build' | 'fresh process' | 'server' | 'server on save', preloaded?: Stamp[] }
 *   | { ok: false, error: { name: string, message: string } }} Answer
 */

/** @typedef {typeof import('typescript')} TS */

/**
 * A CommonJS file compiled through vm.Script with V8's code cache (what
 * v8-compile-cache does), kept in `cacheDir`/v8. `role` names the cache, since
 * the functions one use compiles are not those another does. V8 rejects a
 * cache from another Node or V8 build by itself. `saveCode` writes the cache
 * when there was none that V8 took; call it once the process has run what it
 * needs, so that the cache holds those functions compiled too.
 * @param {string} file
 * @param {string} cacheDir
 * @param {string} role
 * @returns {{ exports: unknown, saveCode: () => void }}
 */
const loadCached = (file, cacheDir, role) => {
  const source = fs.readFileSync(file, 'utf8');
  const cacheFile = codeCacheFile(file, source, cacheDir, role);
  /** @type {Buffer | undefined} */
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, ...(cachedData ? { cachedData } : {}) });
  let saved = cachedData !== undefined && !script.cachedDataRejected;
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file));
  const saveCode = () => {
    if (saved) return;
    saved = true;
    try {
      fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
      writeAtomically(cacheFile, script.createCachedData());
    } catch {
      // a read-only cache: compile again next time
    }
  };
  return { exports: module.exports, saveCode };
};

/** Where loadCached keeps `file`'s code cache for `role`. */
const codeCacheFile = (/** @type {string} */ file, /** @type {string} */ source, /** @type {string} */ cacheDir, /** @type {string} */ role) => {
  const key = createHash('sha256').update(`${role}\0${process.version}\0${process.arch}\0${file}\0`).update(source).digest('hex');
  return path.join(cacheDir, 'v8', `${key}.bin`);
};

/**
 * The typescript package, through loadCached: compiling its 9 MB, and then
 * each function it runs, is a large part of a cold check.
 * @param {string} cacheDir
 * @param {'check' | 'transpile'} role
 * @returns {{ ts: TS, saveCode: () => void }}
 */
const loadTypescript = (cacheDir, role) => {
  const { exports, saveCode } = loadCached(requireHere.resolve('typescript'), cacheDir, role);
  return { ts: /** @type {TS} */ (exports), saveCode };
};

/** Writes `file` whole or not at all (a reader never sees half of it); throws as writeFileSync does. */
const writeAtomically = (/** @type {string} */ file, /** @type {string | Uint8Array} */ data) => {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
};

/** The sidecar of snapshot `blob`: the stamps of the files it holds. */
const sidecarOf = (/** @type {string} */ blob) => blob.replace(/\.blob$/, '.json');

/** TS codes that mean "this file uses Node's APIs": retry with Node's types. */
const needsNodeTypes = new Set([2580, 2591, 2592, 2867, 2868]);

/**
 * @param {TS} t
 * @param {Request} req
 * @param {boolean} withNode
 * @returns {import('typescript').CompilerOptions}
 */
const compilerOptions = (t, req, withNode) => ({
  strict: true,
  noEmit: true,
  target: t.ScriptTarget.ES2022,
  module: t.ModuleKind.NodeNext,
  moduleResolution: t.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2022.d.ts'],
  // Node's own types are large (a third of a check): only for a definition that uses Node.
  types: withNode && req.nodeTypesAvailable ? ['node'] : [],
  typeRoots: req.typeRoots,
  skipLibCheck: true,
  allowImportingTsExtensions: true,
  paths: { imgc: [req.imgcTypes], 'imgc/stdlib': [req.stdlibTypes] },
});

/**
 * Whether `file` is the user's: neither a package's nor imgc's own.
 * @param {Request} req
 * @param {string} file
 */
const isUsersFile = (req, file) => !file.includes('/node_modules/') && !req.ownDirs.some((d) => path.resolve(file).startsWith(d));

/**
 * The check itself. `parsed` holds declaration files parsed (and, once a
 * checker has run, bound) before; TypeScript reuses a SourceFile object as is.
 * A long-lived caller (./typecheck-server.ts) passes `previous`, the last
 * program per option set, so that TypeScript reuses its module resolutions
 * too, and `onSources`, called with the user's files before they are checked.
 * @param {TS} t
 * @param {Request} req
 * @param {Map<string, import('typescript').SourceFile>} parsed
 * @param {Map<boolean, import('typescript').Program>} [previous]
 * @param {(sources: readonly import('typescript').SourceFile[]) => void} [onSources]
 */
const check = (t, req, parsed, previous, onSources) => {
  const isUsers = (/** @type {string} */ f) => isUsersFile(req, f);
  const attempt = (/** @type {boolean} */ withNode) => {
    const options = compilerOptions(t, req, withNode);
    const host = t.createCompilerHost(options);
    const parse = host.getSourceFile;
    host.getSourceFile = (name, ...rest) => parsed.get(name) ?? parse.call(host, name, ...rest);
    const program = t.createProgram([req.file], options, host, previous?.get(withNode));
    previous?.set(withNode, program);
    const sources = program.getSourceFiles().filter((sf) => !sf.isDeclarationFile && isUsers(sf.fileName));
    if (onSources) onSources(sources);
    onSources = undefined; // once: a retry with Node's types reads the same files
    const syntactic = sources.flatMap((sf) => program.getSyntacticDiagnostics(sf));
    const all = syntactic.length > 0 ? syntactic : [...program.getOptionsDiagnostics(), ...sources.flatMap((sf) => program.getSemanticDiagnostics(sf))];
    return { program, all, syntactic: syntactic.length > 0 };
  };
  let run = attempt(false);
  if (!run.syntactic && req.nodeTypesAvailable && run.all.some((d) => needsNodeTypes.has(d.code) || (d.code === 2307 && /'node:/.test(String(d.messageText))))) run = attempt(true);
  const files = run.program.getSourceFiles();
  return {
    syntactic: run.syntactic,
    diagnostics: run.all.map((d) => {
      const message = `TS${d.code}: ${t.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      if (!d.file || d.start === undefined) return { code: d.code, message };
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
      return { code: d.code, message, file: d.file.fileName, line: line + 1, column: character + 1 };
    }),
    // Everything outside node_modules that the result depends on: the user's files and, in a checkout, imgc's own declarations.
    inputs: files.map((sf) => sf.fileName).filter((f) => !f.includes('/node_modules/')),
    /** What a snapshot may keep: the files that are not the user's (libraries, imgc's own). */
    declarations: files.filter((sf) => !isUsers(sf.fileName)),
  };
};

/**
 * `answer(req)`, or what it threw as a failed Answer.
 * @param {Request} req
 * @param {(req: Request) => Answer} answer
 * @returns {Answer}
 */
const tryAnswer = (req, answer) => {
  try {
    return answer(req);
  } catch (e) {
    // TypeScript's binder recurses once per chained call: ~1000 calls in one expression overflow its stack.
    return { ok: false, error: { name: e instanceof Error ? e.name : 'Error', message: e instanceof Error ? e.message : String(e) } };
  }
};

/**
 * Prints the answer to `req` on stdout, one line.
 * @param {Request} req
 * @param {(req: Request) => Answer} answer
 */
const respond = (req, answer) => fs.writeSync(1, `${JSON.stringify(tryAnswer(req, answer))}\n`);

/** @returns {Request} */
const readRequest = () => JSON.parse(fs.readFileSync(0, 'utf8'));

/** @param {string} file */
const stamp = (file) => {
  const s = fs.statSync(file);
  return { file, size: s.size, mtimeMs: s.mtimeMs };
};

/** Whether `s` still describes its file (same size and mtime). */
const unchanged = (/** @type {Stamp} */ s) => {
  const now = fs.statSync(s.file, { throwIfNoEntry: false });
  return now !== undefined && now.size === s.size && now.mtimeMs === s.mtimeMs;
};

/** The files a snapshot made by this script depends on, besides the declarations it keeps. */
const ownFiles = () => [__filename, requireHere.resolve('typescript'), process.execPath];

/** Answers one request from a snapshot: TypeScript loaded, `parsed` bound. */
const fromSnapshot = (/** @type {TS} */ t, /** @type {Map<string, import('typescript').SourceFile>} */ parsed) => () =>
  respond(readRequest(), (req) => {
    const { declarations: _, ...result } = check(t, req, parsed);
    return { ok: true, ...result, via: 'snapshot' };
  });

/**
 * Each Node binary and each imgc installation (checkout, clone, node_modules)
 * has a snapshot of its own, some 30 MB: the newest few are kept.
 */
const KEEP_SNAPSHOTS = 4;
const pruneSnapshots = (/** @type {string} */ dir) => {
  const blobs = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.blob'))
    .map((f) => ({ f, mtimeMs: fs.statSync(path.join(dir, f), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { f } of blobs.slice(KEEP_SNAPSHOTS)) {
    fs.rmSync(sidecarOf(path.join(dir, f)), { force: true }); // the sidecar first: a blob without one is never used
    fs.rmSync(path.join(dir, f), { force: true });
  }
  pruneMarkers(dir);
};

/** How long an attempt (to make a snapshot, to start a server) holds off the next one: while it runs, and after it failed. */
const ATTEMPT_MS = 120_000;

/** Whether the attempt that `marker` (a file) stands for runs, or failed in the last two minutes. */
const attempted = (/** @type {string} */ marker) => Date.now() - (fs.statSync(marker, { throwIfNoEntry: false })?.mtimeMs ?? 0) < ATTEMPT_MS;

/**
 * Removes the markers in `dir` that hold nothing off any more: those of
 * attempts that failed (a snapshot maker whose imgc was deleted under it, a
 * server that could not listen) more than two minutes ago.
 */
const pruneMarkers = (/** @type {string} */ dir) => {
  for (const f of fs.readdirSync(dir)) {
    const marker = path.join(dir, f);
    if (f.endsWith('.making') && !attempted(marker)) fs.rmSync(marker, { force: true });
  }
};

/**
 * Makes this process the one attempt that `marker` stands for, unless
 * another holds it off; whoever succeeds removes the marker, and a failed
 * attempt leaves it, so that checks do not start another one each.
 */
const claimAttempt = (/** @type {string} */ marker) => {
  try {
    fs.writeFileSync(marker, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch {
    if (attempted(marker)) return false;
    fs.writeFileSync(marker, `${process.pid}\n`);
    return true;
  }
};

/** The marker of the attempt to make snapshot `blob`, or to start server `socket`. */
const markerOf = (/** @type {string} */ blobOrSocket) => `${blobOrSocket}.making`;

/** A definition that only imports imgc, in `dir`: checking it parses and binds every declaration a definition needs. */
const writeStub = (/** @type {string} */ dir) => {
  const stub = path.join(dir, 'imports-imgc.ts');
  fs.writeFileSync(stub, "import type {} from 'imgc';\nimport type {} from 'imgc/stdlib';\n");
  return stub;
};

/**
 * Makes snapshot `blob` (and its sidecar, `.json` beside it: the stamps of the
 * files it holds) by a snapshot build of this file, unless another attempt
 * holds it off (see `attempted`). V8 cannot keep optimised code in a
 * snapshot, so a build runs unoptimised: it checks a definition that only
 * imports imgc, not the user's.
 * @param {string} blob
 * @param {Request} req
 */
const makeSnapshot = (blob, req) => {
  const making = markerOf(blob);
  if (!claimAttempt(making)) return;
  const tmp = `${blob}.${process.pid}.tmp`;
  try {
    const stub = writeStub(path.dirname(blob));
    const built = spawnSync(process.execPath, ['--no-warnings', '--snapshot-blob', tmp, '--build-snapshot', __filename], {
      input: JSON.stringify({ ...req, file: stub }),
      encoding: 'utf8',
    });
    /** @type {Answer | undefined} */
    const answer = built.status === 0 ? JSON.parse(built.stdout.split('\n', 1)[0] || 'null') : undefined;
    if (!answer?.ok || !answer.preloaded || answer.diagnostics.length) return;
    fs.renameSync(tmp, blob);
    writeAtomically(sidecarOf(blob), JSON.stringify(answer.preloaded));
    fs.rmSync(making, { force: true });
    pruneSnapshots(path.dirname(blob));
  } finally {
    fs.rmSync(tmp, { force: true });
  }
};

if (v8.startupSnapshot?.isBuildingSnapshot()) {
  const req = readRequest();
  const { ts: t } = loadTypescript(req.cacheDir, 'check');
  /** @type {Map<string, import('typescript').SourceFile>} */
  const parsed = new Map();
  respond(req, (r) => {
    const { declarations, ...result } = check(t, r, new Map());
    for (const sf of declarations) parsed.set(sf.fileName, sf);
    const preloaded = [...ownFiles(), ...parsed.keys()].map(stamp);
    return { ok: true, ...result, via: 'snapshot build', preloaded };
  });
  v8.startupSnapshot.setDeserializeMainFunction(fromSnapshot(t, parsed));
} else if (typeof module !== 'undefined' && require.main === module) {
  if (process.argv[2] === '--make-snapshot') makeSnapshot(String(process.argv[3]), JSON.parse(String(process.argv[4])));
  else
    respond(readRequest(), (req) => {
      const { ts: t, saveCode } = loadTypescript(req.cacheDir, 'check');
      const { declarations: _, ...result } = check(t, req, new Map());
      saveCode();
      return { ok: true, ...result, via: 'fresh process' };
    });
}

// A snapshot build has no `module`: nothing to export there.
if (typeof module !== 'undefined') module.exports = { loadCached, codeCacheFile, loadTypescript, isUsersFile, attempted, claimAttempt, markerOf, pruneMarkers, writeStub, sidecarOf, check, tryAnswer, ownFiles, stamp, unchanged };
