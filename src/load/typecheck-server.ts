// A resident type-check: one process per imgc installation and cache that
// keeps TypeScript loaded, its libraries parsed and bound and its checker
// optimised by V8, and answers checks on a Unix socket in imgc's cache.
// After an edit, a fresh process spends ~80 ms starting Node, ~150 ms loading
// the snapshot and ~140 ms in an unoptimised checker; this one answers in
// well under 100 ms. It also transpiles the user's files into imgc's cache
// before it checks them, so the CLI need not load TypeScript itself.
//
// A check that found no server starts one in the background (not under CI,
// nor with IMGC_NO_SERVER=1). It exits after IMGC_SERVER_IDLE_SECONDS
// (default 900) without a request, when Node, TypeScript or imgc's loader
// changes under it, when its socket is removed (the cache deleted), or on
// SIGTERM (removing its socket).
// Declarations it keeps are parsed again when their size or mtime changes.
// Its answers are the same `check` a fresh process runs
// (./typecheck-child.cjs); any failure to reach it means a fresh process.
//
// It also checks on save: it watches the directories of the files of the
// definitions it answered for, and when one of those files changes it
// transpiles and checks that definition again at once. The next `imgc
// check` then gets that answer as soon as it asks, if the files still have
// the content it was made from (their sha256, as imgc's own cache compares).
// Only requests keep it from exiting idle.
import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';
import { hashInputs, inputsUnchanged, sha256, type HashedInput } from '../util/cache.js';
import { transpile, useTypescript } from './transpile.js';
import type { Answer, Request, Stamp } from './typecheck-child.cjs';

const here = fileURLToPath(import.meta.url);
const childScript = path.join(path.dirname(here), 'typecheck-child.cjs');
const child = createRequire(import.meta.url)(childScript) as typeof import('./typecheck-child.cjs');

/** What the CLI sends: a check, and whether to transpile the user's files first; or a request to stop. */
type Message = { request: Request; transpile: boolean } | { stop: true };
/** What the server sends back, one JSON line each: `transpiled` (when asked), then `answer`; or `stale`. */
type Reply = { transpiled: true } | { answer: Answer } | { stale: true };

/** A reply as sent: one JSON line. */
const line = (reply: Reply): string => `${JSON.stringify(reply)}\n`;

/** Checks of the definition that started the server, run before it listens... */
const WARMUP_CHECKS = 8;
/** ...and no longer than this, for a definition that takes TypeScript seconds. */
const WARMUP_MS = 3000;

/** Editors save in steps (a backup, a rename, a write): the check on save waits for this much quiet. */
const SAVE_SETTLE_MS = 25;
/** Definitions whose last answer is kept (and whose files are watched), the most recently asked for. */
const KEPT_ANSWERS = 8;
/** Directories watched at most: each is an inotify watch. */
const MAX_WATCHED_DIRS = 64;

/** Unix socket paths are limited to 107 bytes. */
const MAX_SOCKET_PATH = 100;

/**
 * The socket of the server for `cacheDir` and installation `name`, when
 * it may be used: in a directory only this user can enter.
 */
export const serverSocket = (cacheDir: string, name: string): string | undefined => {
  const dir = path.join(cacheDir, 'typecheck-server');
  const socket = path.join(dir, `${name}.sock`);
  if (socket.length > MAX_SOCKET_PATH) return undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== process.getuid?.()) return undefined;
    if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
    return socket;
  } catch {
    return undefined;
  }
};

/** Whether checks may use a server (IMGC_NO_SERVER=1 says no), and may start one (not under CI either). */
export const serverWanted = (env: NodeJS.ProcessEnv = process.env): { use: boolean; start: boolean } => {
  const use = env['IMGC_NO_SERVER'] !== '1';
  return { use, start: use && !env['CI'] };
};

/** The built server script; absent when imgc runs from its TypeScript sources (its tests): no server then. */
const serverScript = here.endsWith('.js') ? here : undefined;

export interface ServerAnswer {
  /** Settles when the user's files are in the transpile cache, or when they will not be. */
  transpiled: Promise<void>;
  /** The check's answer; undefined when the server could not give one (none runs, it is stale, it died). */
  answer: Promise<Answer | undefined>;
}

/** Asks the server at `socket` to check (and first transpile) `request`'s definition. `signal` hangs up. */
export const askServer = (socket: string, request: Request, transpileFirst: boolean, signal?: AbortSignal): ServerAnswer => {
  let transpiled!: () => void;
  let answered!: (a: Answer | undefined) => void;
  const result: ServerAnswer = {
    transpiled: new Promise<void>((resolve) => (transpiled = resolve)),
    answer: new Promise<Answer | undefined>((resolve) => (answered = resolve)),
  };
  const conn = net.createConnection(socket);
  const done = (answer?: Answer) => {
    transpiled();
    answered(answer);
    conn.destroy();
  };
  conn.on('error', () => done());
  conn.on('close', () => done());
  signal?.addEventListener('abort', () => done(), { once: true });
  conn.on('connect', () => conn.write(`${JSON.stringify({ request, transpile: transpileFirst } satisfies Message)}\n`));
  eachLine(conn, (reply: Reply) => {
    if ('transpiled' in reply) transpiled();
    else done('answer' in reply ? reply.answer : undefined);
  });
  return result;
};

/** Asks the server at `socket` to exit (tests, benchmarks); resolves once it has hung up. */
export const stopServer = (socket: string): Promise<void> =>
  new Promise((resolve) => {
    const conn = net.createConnection(socket);
    conn.on('connect', () => conn.end(`${JSON.stringify({ stop: true } satisfies Message)}\n`));
    conn.on('error', () => resolve());
    conn.on('close', () => resolve());
  });

/** Starts the server for `socket` in a process of its own that outlives this one, unless one is starting or failed to lately. */
export const startServerLater = (socket: string, request: Request, env: NodeJS.ProcessEnv): void => {
  if (!serverScript || child.attempted(child.markerOf(socket))) return;
  try {
    const server = spawn(process.execPath, ['--no-warnings', serverScript, socket, JSON.stringify(request)], { detached: true, stdio: 'ignore', env });
    server.on('error', () => {});
    server.unref();
  } catch {
    // no server: checks run as before
  }
};

/** Calls `onLine` with each JSON line `conn` receives. */
const eachLine = <T>(conn: net.Socket, onLine: (value: T) => void): void => {
  let buffered = '';
  conn.setEncoding('utf8').on('data', (d: string) => {
    buffered += d;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        onLine(JSON.parse(line) as T);
      } catch {
        conn.destroy(); // not our protocol
      }
    }
  });
};

/** Whether a server listens at `socket`. */
const answers = (socket: string): Promise<boolean> =>
  new Promise((resolve) => {
    const conn = net.createConnection(socket);
    conn.on('connect', () => {
      conn.destroy();
      resolve(true);
    });
    conn.on('error', () => resolve(false));
  });

const isTypeScriptSource = (file: string) => /\.m?ts$/.test(file) && !/\.d\.m?ts$/.test(file);

/** The server itself: `node typecheck-server.js SOCKET REQUEST`, REQUEST being one check's request, to warm up with. */
const serve = async (socket: string, warmup: Request): Promise<void> => {
  const marker = child.markerOf(socket);
  if (!child.claimAttempt(marker)) return;
  // Node, TypeScript, the check and the transpile this process runs: when any changes, it is stale.
  const transpileScript = path.join(path.dirname(here), 'transpile.js');
  const own = [...child.ownFiles(), here, transpileScript].map(child.stamp);
  const { ts: t } = child.loadTypescript(warmup.cacheDir, 'check');
  useTypescript(t);
  const parsed = new Map<string, ts.SourceFile>();
  const stamps = new Map<string, Stamp>();
  const previous = new Map<boolean, ts.Program>();
  const keep = (declarations: readonly ts.SourceFile[]) => {
    for (const sf of declarations) {
      if (parsed.has(sf.fileName)) continue;
      parsed.set(sf.fileName, sf);
      stamps.set(sf.fileName, child.stamp(sf.fileName));
    }
  };
  const checkNow = (request: Request, via: 'server' | 'server on save', onSources?: (sources: readonly ts.SourceFile[]) => void): Answer =>
    child.tryAnswer(request, (req) => {
      const { declarations, ...result } = child.check(t, req, parsed, previous, onSources);
      keep(declarations);
      return { ok: true, ...result, via };
    });
  const transpileAll = (sources: readonly ts.SourceFile[]) => {
    try {
      for (const sf of sources) if (isTypeScriptSource(sf.fileName)) transpile(sf.fileName, sf.text);
    } catch {
      // the CLI transpiles what is not in the cache itself; the check goes on
    }
  };

  keep(child.check(t, { ...warmup, file: child.writeStub(path.dirname(socket)) }, parsed, previous).declarations);
  // V8 optimises the checker over the first few checks (~200 ms down to ~60 ms for the reference image):
  // spend them on the definition whose check started this server, before anyone waits.
  const warmupUntil = Date.now() + WARMUP_MS;
  for (let i = 0; i < WARMUP_CHECKS && Date.now() < warmupUntil; i++) {
    if (!checkNow(warmup, 'server').ok) break; // what the definition does to TypeScript is the client's to hear about
  }

  // One server per socket: if another answers there, leave it be.
  if (await answers(socket)) {
    rmSync(marker, { force: true });
    return;
  }
  rmSync(socket, { force: true });
  const idleMs = Math.max(1, Number(process.env['IMGC_SERVER_IDLE_SECONDS'] ?? '') || 900) * 1000;
  let idle: NodeJS.Timeout | undefined;
  let ino = 0;
  const server = net.createServer();
  const exit = () => {
    server.close();
    if (lstatSync(socket, { throwIfNoEntry: false })?.ino === ino) rmSync(socket, { force: true });
    process.exit(0);
  };
  const stale = () => !own.every(child.unchanged) || lstatSync(socket, { throwIfNoEntry: false })?.ino !== ino;
  // The last answer per definition, while the files it was made from keep their content.
  // `transpiled`: its files went into the transpile cache when it was made.
  const kept = new Map<string, { request: string; inputs: HashedInput[]; answer: Answer; transpiled: boolean }>();
  /** What is kept for this very request (the same definition, asked the same way), whether or not it still holds. */
  const keptFor = (request: Request) => {
    const k = kept.get(request.file);
    return k?.request === JSON.stringify(request) ? k : undefined;
  };
  const keptAnswer = (request: Request, transpile: boolean): Answer | undefined => {
    const k = keptFor(request);
    return k && (k.transpiled || !transpile) && inputsUnchanged(k.inputs) ? k.answer : undefined;
  };
  /** Drops the declarations that changed on disk since they were parsed, and the answers made with them. */
  const refreshDeclarations = () => {
    for (const [file, s] of stamps) {
      if (child.unchanged(s)) continue;
      parsed.delete(file);
      stamps.delete(file);
      // TypeScript reuses an unchanged file's module resolutions from the previous program: not after a package changed.
      previous.clear();
      kept.clear();
    }
  };
  const watched = new Map<string, FSWatcher>();
  const due = new Map<string, NodeJS.Timeout>();
  const onChange = (dir: string, name: string) => {
    const changed = path.join(dir, name);
    for (const [file, k] of kept) {
      if (!k.inputs.some((i) => i.file === changed)) continue;
      clearTimeout(due.get(file));
      due.set(file, setTimeout(() => checkOnSave(file), SAVE_SETTLE_MS));
    }
  };
  const watchDir = (dir: string) => {
    if (watched.has(dir) || watched.size >= MAX_WATCHED_DIRS) return;
    try {
      const w = watch(dir, { persistent: false }, (_, name) => name && onChange(dir, name.toString()));
      w.on('error', () => {
        w.close();
        watched.delete(dir);
      });
      watched.set(dir, w);
    } catch {
      // a directory that cannot be watched: its definition is checked when asked
    }
  };
  /** Keeps `answer`, unless a file changed while it was checked (`used`: the sha256 of each user file's text the check read). */
  const remember = (request: Request, answer: Answer, transpiled: boolean, used: ReadonlyMap<string, string>) => {
    kept.delete(request.file);
    if (!answer.ok) return;
    const inputs = hashInputs(answer.inputs);
    if (inputs.some((i) => used.has(i.file) && used.get(i.file) !== i.sha256)) return; // an answer about the text before
    kept.set(request.file, { request: JSON.stringify(request), inputs, answer, transpiled });
    for (const file of kept.keys()) if (kept.size > KEPT_ANSWERS) kept.delete(file);
    for (const f of answer.inputs) if (child.isUsersFile(request, f)) watchDir(path.dirname(f));
  };
  const checkAndKeep = (request: Request, via: 'server' | 'server on save', transpiled: boolean, onSources?: (sources: readonly ts.SourceFile[]) => void): Answer => {
    const used = new Map<string, string>();
    const answer = checkNow(request, via, (sources) => {
      for (const sf of sources) used.set(sf.fileName, sha256(sf.text));
      onSources?.(sources);
    });
    remember(request, answer, transpiled, used);
    return answer;
  };

  // Checks on save under way: their files are transpiled already, and requests for their definition wait for them.
  const onSave = new Map<string, Array<() => void>>();
  const checkOnSave = (file: string) => {
    due.delete(file);
    const k = kept.get(file);
    if (!k || inputsUnchanged(k.inputs)) return;
    if (onSave.has(file)) return void due.set(file, setTimeout(() => checkOnSave(file), SAVE_SETTLE_MS));
    if (stale()) return exit();
    const request = JSON.parse(k.request) as Request;
    // The files into the transpile cache now (as the CLI reads them), the check in a later turn:
    // a request for this definition that comes meanwhile hears at once that they are transpiled.
    const transpiled = new Set<string>();
    try {
      for (const { file: f } of k.inputs) {
        if (!child.isUsersFile(request, f) || !isTypeScriptSource(f)) continue;
        transpile(f, readFileSync(f, 'utf8'));
        transpiled.add(f);
      }
    } catch {
      // a file gone or unreadable: the check says so
    }
    const waiting: Array<() => void> = [];
    onSave.set(file, waiting);
    setImmediate(() => {
      try {
        refreshDeclarations();
        // Only files the edit newly imports are left to transpile.
        checkAndKeep(request, 'server on save', true, (sources) => transpileAll(sources.filter((sf) => !transpiled.has(sf.fileName))));
      } finally {
        onSave.delete(file);
        for (const resume of waiting) resume();
      }
    });
  };

  const respond = (conn: net.Socket, { request, transpile }: { request: Request; transpile: boolean }, tellTranspiled: () => void) => {
    let answer = keptAnswer(request, transpile);
    if (answer) {
      // Checked on save (or asked before): its files were transpiled then.
      if (transpile) tellTranspiled();
    } else {
      answer = checkAndKeep(request, 'server', transpile, transpile ? (sources) => (transpileAll(sources), tellTranspiled()) : undefined);
    }
    conn.end(line({ answer }));
  };
  const answer = (conn: net.Socket, message: Message) => {
    if (typeof message !== 'object' || message === null || !('stop' in message || 'request' in message)) return conn.destroy();
    if ('stop' in message) return exit();
    if (stale()) {
      conn.end(line({ stale: true }));
      return exit();
    }
    // Before the checker runs, the CLI is told its files are transpiled: it evaluates them meanwhile.
    // (A write to an idle socket goes out at once, before the check.) Once per request.
    let told = false;
    const tellTranspiled = () => {
      if (!told) conn.write(line({ transpiled: true }));
      told = true;
    };
    const waiting = onSave.get(message.request.file);
    if (waiting && keptFor(message.request)) {
      // Its check on save is under way, its files transpiled: the answer is that check's, if the files stay so.
      if (message.transpile) tellTranspiled();
      waiting.push(() => respond(conn, message, tellTranspiled));
      return;
    }
    refreshDeclarations();
    respond(conn, message, tellTranspiled);
  };
  server.on('connection', (conn) => {
    conn.on('error', () => {});
    clearTimeout(idle);
    idle = setTimeout(exit, idleMs);
    eachLine(conn, (m: Message) => answer(conn, m));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
  chmodSync(socket, 0o600);
  ino = lstatSync(socket).ino;
  rmSync(marker, { force: true });
  child.pruneMarkers(path.dirname(socket)); // other installations' failed starts
  idle = setTimeout(exit, idleMs);
  // Stopped (pkill, a shutdown): without its socket, so that no check tries it first.
  process.once('SIGTERM', exit);
  // The cache removed, or imgc updated, while nobody asks: go.
  setInterval(() => stale() && exit(), 10_000).unref();
};

if (process.argv[1] === here && process.argv[2] && process.argv[3]) {
  serve(process.argv[2], JSON.parse(process.argv[3]) as Request).catch(() => process.exit(1));
}
