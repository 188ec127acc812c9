// Downloads are fetched on the build machine from a real HTTP server on
// 127.0.0.1 (test/helpers/file-server.ts) and cached by their sha256.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadError, downloadPath, fetchToCache } from '../../src/build/downloads.js';
import { serveFiles, type FileServer } from '../helpers/file-server.js';
import { tempDir } from '../helpers/temp.js';

describe('fetchToCache', () => {
  let server: FileServer;
  const env = { IMGC_CACHE: tempDir('downloads-cache') };
  beforeAll(async () => {
    server = await serveFiles({ 'tool.tar.gz': Buffer.from('not really a tarball, but bytes\n'), 'other': 'other\n' });
  });
  afterAll(() => server.close());

  it('fetches once, then serves the same sum from the cache', async () => {
    const sum = server.sha256Of('tool.tar.gz');
    const file = await fetchToCache(server.urlOf('tool.tar.gz'), sum, env);
    expect(file).toBe(downloadPath(sum, env));
    expect(readFileSync(file, 'utf8')).toBe('not really a tarball, but bytes\n');
    await fetchToCache(server.urlOf('tool.tar.gz'), sum.toUpperCase(), env);
    expect(server.requests.filter((r) => r === '/tool.tar.gz')).toHaveLength(1);
  });

  it('fetches again when the cached file was corrupted', async () => {
    const sum = server.sha256Of('other');
    await fetchToCache(server.urlOf('other'), sum, env);
    writeFileSync(downloadPath(sum, env), 'corrupt');
    expect(readFileSync(await fetchToCache(server.urlOf('other'), sum, env), 'utf8')).toBe('other\n');
    expect(server.requests.filter((r) => r === '/other')).toHaveLength(2);
  });

  it('a wrong sum fails with both sums and leaves nothing in the cache', async () => {
    const wrong = 'a'.repeat(64);
    const err = await fetchToCache(server.urlOf('other'), wrong, env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadError);
    expect((err as Error).message).toBe(`${server.urlOf('other')}: sha256 mismatch: expected ${wrong}, got ${server.sha256Of('other')}`);
    expect(() => readFileSync(downloadPath(wrong, env))).toThrow();
  });

  it('a missing file is an HTTP error, not a hang', async () => {
    await expect(fetchToCache(server.urlOf('missing'), 'b'.repeat(64), env)).rejects.toThrow(/HTTP 404/);
  });
});
