// Serves real files over HTTP on 127.0.0.1 for download steps: no upstream
// host is reachable from the test machines, and a mock of curl or of the
// download code would prove nothing. Each file is served at /<name>; every
// request is recorded, so a test can tell a cache hit from a second fetch.
import { createServer, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface FileServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** The URL of a served file. */
  urlOf(name: string): string;
  /** sha256 (hex) of a served file's bytes. */
  sha256Of(name: string): string;
  /** Paths requested so far, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Starts a server on a random port of 127.0.0.1 serving `files` (name → bytes); anything else is a 404. */
export const serveFiles = async (files: Record<string, Buffer | string>): Promise<FileServer> => {
  const bodies = new Map(Object.entries(files).map(([k, v]) => [k, Buffer.isBuffer(v) ? v : Buffer.from(v)]));
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').split('?')[0]!.slice(1));
    requests.push(`/${name}`);
    const body = bodies.get(name);
    if (!body || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    requests,
    urlOf: (name) => `${url}/${encodeURIComponent(name)}`,
    sha256Of: (name) => {
      const body = bodies.get(name);
      if (!body) throw new Error(`not served: ${name}`);
      return createHash('sha256').update(body).digest('hex');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
