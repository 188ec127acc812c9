// The resident type-check server (src/load/typecheck-server.ts), started for
// real by the built CLI in a cache of this test's own. Its answers must be
// those of a fresh process; a declaration changed under it must be read
// again; it must go away when asked, when idle, and when its cache goes.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ran } from '../../src/load/typecheck.js';
import { imgc, repoRoot, tempDir } from '../helpers/cli.js';

// The built modules, as the CLI runs them: a server serves one installation (its
// Node and its imgc files), and the CLI's is dist/, not these sources.
const dist = (m: string) => path.join(repoRoot, 'dist', 'src', 'load', m);
const { askTypecheck, typecheckServerSocket } = (await import(dist('typecheck.js'))) as typeof import('../../src/load/typecheck.js');
const { serverSocket, stopServer } = (await import(dist('typecheck-server.js'))) as typeof import('../../src/load/typecheck-server.js');

const typeError = path.join(repoRoot, 'examples', 'broken', 'type-error.ts');
// The CLI may start a server here: not under CI, not with IMGC_NO_SERVER=1 (vitest.config.ts sets it for every other test).
const serverEnv = (cache: string, more: Record<string, string> = {}) => ({ IMGC_CACHE: cache, IMGC_NO_SERVER: '0', CI: '', ...more });

const answerOf = (ran: Ran) => {
  if (!ran.answer?.ok) throw new Error(`no answer: exit ${ran.exitCode}, ${ran.stderr}`);
  return ran.answer;
};

const until = async (what: string, ready: () => boolean, ms = 60_000): Promise<void> => {
  for (let waited = 0; waited < ms; waited += 100) {
    if (ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
};

const socketIn = (cache: string): string | undefined => {
  const dir = path.join(cache, 'typecheck-server');
  const name = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.sock')) : undefined;
  return name && path.join(dir, name);
};

/** Runs the CLI's check once in `cache`, which starts a server there; resolves with its socket once it listens. */
const startServer = async (cache: string, more: Record<string, string> = {}): Promise<string> => {
  await imgc(['check', typeError], { env: serverEnv(cache, more) });
  await until('the server to listen', () => {
    const socket = socketIn(cache);
    return socket !== undefined && !existsSync(`${socket}.making`);
  });
  return socketIn(cache)!;
};

const serverPids = (socket: string): number[] =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(socket);
      } catch {
        return false;
      }
    })
    .map(Number);

describe('the type-check server', () => {
  const cache = tempDir('typecheck-server');
  const work = tempDir('typecheck-server-defs');
  let socket = '';
  const saved = { ...process.env };
  beforeAll(async () => {
    socket = await startServer(cache);
    process.env['IMGC_CACHE'] = cache;
    process.env['IMGC_NO_SERVER'] = '0';
  }, 120_000);
  afterAll(async () => {
    await stopServer(socket);
    process.env = saved;
  });

  it('is started by a check, listens on a socket only its user can reach, and answers as a fresh process does', async () => {
    expect(statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(typecheckServerSocket()).toBe(socket);
    const fromServer = answerOf(await askTypecheck(typeError));
    expect(fromServer.via).toBe('server');
    process.env['IMGC_NO_SERVER'] = '1';
    try {
      const fresh = answerOf(await askTypecheck(typeError));
      expect(fresh.via).not.toBe('server');
      expect(fromServer.diagnostics).toEqual(fresh.diagnostics);
      expect(fromServer.inputs).toEqual(fresh.inputs);
      expect(fromServer.diagnostics.map((d) => d.code)).toEqual([2322]);
    } finally {
      process.env['IMGC_NO_SERVER'] = '0';
    }
  });

  it('gives the CLI the same output with and without it, for an edited definition', async () => {
    const def = path.join(work, 'edited.ts');
    const text = readFileSync(typeError, 'utf8');
    const run = async (edit: string, noServer: string) => {
      writeFileSync(def, `${text}\n// ${edit}\n`);
      const r = await imgc(['check', '--format', 'json', def], { env: serverEnv(cache, { IMGC_NO_SERVER: noServer }) });
      return { exitCode: r.exitCode, out: JSON.parse(r.stdout) as unknown };
    };
    const withServer = await run('one', '0');
    const without = await run('two', '1');
    expect(withServer).toEqual(without);
    expect(withServer.exitCode).toBe(1);
  });

  it("transpiles the definition into the cache before it answers, when asked", async () => {
    const def = path.join(work, 'transpiled.ts');
    const marker = `edit-${process.pid}-${Date.now()}`;
    writeFileSync(def, `${readFileSync(typeError, 'utf8')}\nexport const marker = '${marker}';\n`);
    const order: string[] = [];
    const ran = await askTypecheck(def, { onTranspiled: () => order.push('transpiled') });
    order.push('answered');
    expect(answerOf(ran).via).toBe('server');
    expect(order).toEqual(['transpiled', 'answered']);
    const entries = readdirSync(path.join(cache, 'transpiled')).map((f) => readFileSync(path.join(cache, 'transpiled', f), 'utf8'));
    expect(entries.some((e) => e.includes(marker))).toBe(true);
  });

  it('checks a definition again when its file is saved, and answers with that check while the file stays so', async () => {
    const def = path.join(work, 'saved.ts');
    const text = readFileSync(typeError, 'utf8');
    const transpiles = () => readdirSync(path.join(cache, 'transpiled')).map((f) => readFileSync(path.join(cache, 'transpiled', f), 'utf8'));
    const transpileFirst = { onTranspiled: () => {} };
    writeFileSync(def, text);
    expect(answerOf(await askTypecheck(def, transpileFirst)).via).toBe('server');
    // Saved with a second type error; nobody asks.
    const marker = `saved-${process.pid}-${Date.now()}`;
    writeFileSync(def, `${text}\nexport const second: number = '${marker}';\n`);
    // The check on save transpiles first; once that is in the cache, the check is running, and a request waits for it.
    await until('the check on save to transpile the saved file', () => transpiles().some((e) => e.includes(marker)), 20_000);
    const onSave = answerOf(await askTypecheck(def, transpileFirst));
    expect(onSave.via).toBe('server on save');
    process.env['IMGC_NO_SERVER'] = '1';
    try {
      const fresh = answerOf(await askTypecheck(def));
      expect(onSave.diagnostics).toEqual(fresh.diagnostics);
      expect(onSave.inputs).toEqual(fresh.inputs);
      expect(onSave.diagnostics.map((d) => d.code)).toEqual([2322, 2322]);
    } finally {
      process.env['IMGC_NO_SERVER'] = '0';
    }
    // Changed again and asked at once: never the answer of the content before.
    writeFileSync(def, 'export const fixed: number = 1;\n');
    expect(answerOf(await askTypecheck(def, transpileFirst)).diagnostics).toEqual([]);
  });

  it('reads a declaration again when it changes under it', async () => {
    // A package's declarations are kept between checks (they are not the user's files).
    const pkg = path.join(work, 'node_modules', 'site-settings');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'site-settings', version: '1.0.0', types: 'index.d.ts' }));
    writeFileSync(path.join(pkg, 'index.d.ts'), 'export type Region = "eu" | "us";\n');
    const def = path.join(work, 'uses-package.ts');
    writeFileSync(def, "import type { Region } from 'site-settings';\nexport const region: Region = 'eu';\n");
    expect(answerOf(await askTypecheck(def)).diagnostics).toEqual([]);
    writeFileSync(path.join(pkg, 'index.d.ts'), 'export type Region = "us" | "ap" | "sa";\n');
    const after = answerOf(await askTypecheck(def));
    expect(after.via).toBe('server');
    expect(after.diagnostics.map((d) => d.code)).toEqual([2322]);
  });

  it('hangs up on what is not its protocol, and goes on serving', async () => {
    const net = await import('node:net');
    await new Promise<void>((resolve) => {
      const conn = net.createConnection(socket);
      conn.on('connect', () => conn.write('not json\n'));
      conn.on('close', () => resolve());
      conn.on('error', () => resolve());
    });
    expect(answerOf(await askTypecheck(typeError)).via).toBe('server');
  });
});

describe('the type-check server goes away', () => {
  it('when idle for IMGC_SERVER_IDLE_SECONDS', async () => {
    const cache = tempDir('typecheck-server-idle');
    const socket = await startServer(cache, { IMGC_SERVER_IDLE_SECONDS: '3' });
    await until('the idle server to exit', () => serverPids(socket).length === 0 && !existsSync(socket), 30_000);
  }, 120_000);

  it('when its cache is removed', async () => {
    const cache = tempDir('typecheck-server-gone');
    const socket = await startServer(cache);
    expect(serverPids(socket).length).toBe(1);
    rmSync(cache, { recursive: true, force: true });
    await until('the server of a removed cache to exit', () => serverPids(socket).length === 0, 30_000);
  }, 120_000);

  it('when sent SIGTERM, taking its socket with it', async () => {
    const cache = tempDir('typecheck-server-term');
    const socket = await startServer(cache);
    const [pid] = serverPids(socket);
    process.kill(pid!, 'SIGTERM');
    await until('the stopped server to exit', () => serverPids(socket).length === 0, 30_000);
    expect(existsSync(socket)).toBe(false);
  }, 120_000);

  it('is neither used nor started with IMGC_NO_SERVER=1, and not started under CI', async () => {
    const cache = tempDir('typecheck-server-off');
    for (const env of [{ IMGC_NO_SERVER: '1' }, { CI: 'true' }] as Record<string, string>[]) {
      const r = await imgc(['check', typeError], { env: serverEnv(cache, env) });
      expect(r.exitCode).toBe(1);
    }
    await new Promise((r) => setTimeout(r, 3000));
    expect(socketIn(cache)).toBeUndefined();
  }, 120_000);

  it('keeps its socket directory private', () => {
    const cache = tempDir('typecheck-server-mode');
    mkdirSync(path.join(cache, 'typecheck-server'), { mode: 0o755 });
    const socket = serverSocket(cache, 'x'.repeat(32));
    expect(socket).toBe(path.join(cache, 'typecheck-server', `${'x'.repeat(32)}.sock`));
    expect(statSync(path.dirname(socket!)).mode & 0o777).toBe(0o700);
    expect(serverSocket(path.join(cache, 'y'.repeat(100)), 'x'.repeat(32))).toBeUndefined(); // beyond a socket path's length
  });
});
