// sha256 of a large, mostly sparse file (a raw disk image is gigabytes of
// holes). Reading a hole still costs the kernel a zero-fill and a copy per
// page, several seconds for a 4 GB image; so the file's extent map (filefrag,
// from e2fsprogs, which makes the images) says where its data is, only that
// is read, and the holes are hashed from a buffer of zeros. Whenever the map
// is not plainly "data here, nothing elsewhere", every byte is read instead.
// Hashing those holes is still seconds of CPU (SHA-256 has no shortcut for
// zeros), so a large file is hashed in a worker thread: the build's main
// thread stays free to start the next artifact and hash it on another core.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** Below this, reading everything is as quick as asking for the map. */
const SPARSE_MIN = 64 << 20;
const CHUNK = 4 << 20;
const zeros = Buffer.alloc(CHUNK);

const streamInto = (h: Hash, file: string): Promise<void> =>
  new Promise((resolve, reject) => {
    createReadStream(file, { highWaterMark: CHUNK })
      .on('data', (d) => h.update(d))
      .on('error', reject)
      .on('end', () => resolve());
  });

/** stdout of a command that exited 0, else undefined (node:child_process: a worker that loads execa starts ~0.1 s later). */
const stdoutOf = (file: string, args: readonly string[]): Promise<string | undefined> =>
  new Promise((resolve) => {
    const p = spawn(file, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.on('error', () => resolve(undefined));
    p.on('close', (code) => resolve(code === 0 ? out : undefined));
  });

/**
 * `[start, end)` byte ranges that may hold non-zero data, sorted; undefined
 * when filefrag is missing or reports anything but plain (or unwritten,
 * which reads as zeros) extents.
 */
export const dataRanges = async (file: string): Promise<Array<[number, number]> | undefined> => {
  // -s: flush first, so delayed allocations are in the map.
  const stdout = await stdoutOf('filefrag', ['-s', '-e', '-b1', file]);
  if (stdout === undefined) return undefined;
  const ranges: Array<[number, number]> = [];
  for (const line of stdout.split('\n')) {
    const m = /^\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+\d+\.\.\s*\d+:\s+(\d+):\s*(?:\d+:)?\s*(\S*)\s*$/.exec(line);
    if (!m) continue;
    const flags = m[4]!.split(',').filter((f) => f && f !== 'last' && f !== 'eof' && f !== 'merged');
    if (flags.includes('unwritten') && flags.length === 1) continue;
    if (flags.length) return undefined; // inline, delalloc, encoded, unknown location...
    const start = Number(m[1]);
    const end = Number(m[2]) + 1;
    if (end - start !== Number(m[3]) || (ranges.length && start < ranges[ranges.length - 1]![1])) return undefined;
    ranges.push([start, end]);
  }
  const header = /extents? found/.test(stdout);
  return header ? ranges : undefined;
};

const hashZeros = (h: Hash, n: number): void => {
  for (; n >= CHUNK; n -= CHUNK) h.update(zeros);
  if (n > 0) h.update(zeros.subarray(0, n));
};

const hashHere = async (file: string, size: number): Promise<string> => {
  const h = createHash('sha256');
  const ranges = size >= SPARSE_MIN ? await dataRanges(file) : undefined;
  if (!ranges) {
    await streamInto(h, file);
    return h.digest('hex');
  }
  const fd = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let at = 0;
    for (const [start, rawEnd] of ranges) {
      const end = Math.min(rawEnd, size);
      if (start >= end) continue;
      hashZeros(h, start - at);
      for (let pos = start; pos < end; ) {
        const { bytesRead } = await fd.read(buf, 0, Math.min(CHUNK, end - pos), pos);
        if (bytesRead === 0) throw new Error(`${file} ended while being hashed`);
        h.update(buf.subarray(0, bytesRead));
        pos += bytesRead;
      }
      at = end;
    }
    hashZeros(h, size - at);
  } finally {
    await fd.close();
  }
  return h.digest('hex');
};

/** A worker runs this module (built, as .js) and waits for the file to hash. */
interface HashJob {
  imgcSha256Of: string;
}
const WORKER_DATA = 'imgc-sha256-worker';
const isJob = (d: unknown): d is HashJob => typeof d === 'object' && d !== null && typeof (d as HashJob).imgcSha256Of === 'string';
// From the sources (the unit tests) there is no .js for a worker to load.
const workersPossible = import.meta.url.endsWith('.js');

/** A worker started ahead of time, idle until fileSha256 hands it a file (see warmHashWorker). */
let spare: { worker: Worker; exited: boolean } | undefined;

const startWorker = (): { worker: Worker; exited: boolean } => {
  const started = { worker: new Worker(new URL(import.meta.url), { workerData: WORKER_DATA }), exited: false };
  started.worker.once('exit', () => (started.exited = true));
  return started;
};

/**
 * Starts a hashing worker now, for the next large fileSha256: a worker takes
 * ~0.1 s to start, which then passes while the file is still being made
 * (call it when a command that makes one has started). An unused one does
 * not keep the process alive.
 */
export const warmHashWorker = (): void => {
  if ((spare && !spare.exited) || !workersPossible) return;
  const s = startWorker();
  s.worker.on('error', () => {}); // an idle worker that failed: reported by whoever takes it, as its exit
  s.worker.unref();
  spare = s;
};

/** sha256 (hex) of `file`'s bytes, reading only the extents that hold data when the file is large; a large file in a worker thread. */
export const fileSha256 = async (file: string): Promise<string> => {
  const size = statSync(file).size;
  if (size < SPARSE_MIN || !workersPossible) return hashHere(file, size);
  const taken = spare && !spare.exited ? spare : startWorker();
  spare = undefined;
  const { worker } = taken;
  worker.ref();
  return new Promise((resolve, reject) => {
    worker.once('message', (m: { sha256?: string; error?: string }) => (m.sha256 ? resolve(m.sha256) : reject(new Error(m.error))));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`hashing ${file} stopped (worker exit ${code})`))); // after a message, a no-op
    worker.postMessage({ imgcSha256Of: file } satisfies HashJob);
  });
};

if (!isMainThread && workerData === WORKER_DATA) {
  parentPort!.once('message', (job: unknown) => {
    if (!isJob(job)) return;
    hashHere(job.imgcSha256Of, statSync(job.imgcSha256Of).size).then(
      (sha256) => parentPort!.postMessage({ sha256 }),
      (e: unknown) => parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) }),
    );
  });
}
