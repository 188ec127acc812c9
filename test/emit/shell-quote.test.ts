// Property tests of the shell quoting module against the real shells: hostile
// strings quoted by quote.ts come back byte for byte from `sh -c` (dash, the
// /bin/sh of Debian) and `bash --posix -c`; and file steps with hostile bodies
// write exactly those bytes when the emitted phase script runs.
import { execa } from 'execa';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import { comment, word, words } from '../../src/emit/shell/quote.js';
import { tempDir } from '../helpers/cli.js';
import { hostile, imageOf, outcomes, parseProgress, phase, runSh, step, writeFiles } from '../compilers/shell-support.js';

/** A model of how the shell reads the words quote.ts emits: bare runs and '...' segments, `\'` between. */
const unquote = (w: string): string => {
  let out = '';
  let i = 0;
  while (i < w.length) {
    if (w[i] === "'") {
      const end = w.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in ${w}`);
      out += w.slice(i + 1, end);
      i = end + 1;
    } else if (w[i] === '\\') {
      out += w[i + 1];
      i += 2;
    } else {
      if (!/[A-Za-z0-9_@%+:,./-]/.test(w[i]!)) throw new Error(`unquoted ${JSON.stringify(w[i])} in ${w}`);
      out += w[i];
      i += 1;
    }
  }
  return out;
};

/** Runs `printf '%s\0' WORD` per value in one shell -c per batch; returns what the shell printed, per value. */
const roundTrip = async (shell: 'sh' | 'bash', values: string[]): Promise<Buffer[]> => {
  const out: Buffer[] = [];
  let batch: string[] = [];
  let size = 0;
  const flush = async () => {
    if (!batch.length) return;
    // One -c argument stays below Linux's 128 KiB limit per argument.
    const script = batch.map((v) => `printf '%s\\000' ${word(v)}`).join('\n');
    const args = shell === 'bash' ? ['--posix', '-c', script] : ['-c', script];
    const r = await execa(shell, args, { encoding: 'buffer', reject: false, stdin: 'ignore' });
    expect(r.exitCode, Buffer.from(r.stderr).toString()).toBe(0);
    const bytes = Buffer.from(r.stdout);
    let start = 0;
    for (let i = 0; i < bytes.length; i++)
      if (bytes[i] === 0) {
        out.push(bytes.subarray(start, i));
        start = i + 1;
      }
    expect(start, 'output ends with the delimiter').toBe(bytes.length);
    batch = [];
    size = 0;
  };
  for (const v of values) {
    batch.push(v);
    size += Buffer.byteLength(v) * 4 + 20;
    if (size > 100_000) await flush();
  }
  await flush();
  return out;
};

describe('quote.ts: word', () => {
  it('round-trips 10,000 hostile strings through sh -c and bash --posix -c, byte for byte', async () => {
    const values: string[] = [];
    fc.assert(
      fc.property(hostile(), (s) => {
        values.push(s);
        // The model agrees, so a failure here shrinks to a small counterexample.
        expect(unquote(word(s))).toBe(s);
        expect(word(s)).not.toContain('\u0000');
      }),
      { numRuns: 10_000 },
    );
    values.push('', "'", "''", '\n', 'a b', '-n', '~', '*', '$HOME', "it's", '\r\n', '\u{10FFFF}', '\u202eevil');
    expect(values.length).toBeGreaterThanOrEqual(10_000);
    for (const shell of ['sh', 'bash'] as const) {
      const got = await roundTrip(shell, values);
      expect(got.length).toBe(values.length);
      const wrong = values.filter((v, i) => !got[i]!.equals(Buffer.from(v, 'utf8')));
      expect(wrong.map((v) => JSON.stringify(v)), `${shell}: values that did not come back`).toEqual([]);
    }
  });

  it('leaves safe words bare and quotes the rest', () => {
    expect(word('/etc/sysctl.d/99-kubernetes.conf')).toBe('/etc/sysctl.d/99-kubernetes.conf');
    expect(word('')).toBe("''");
    expect(word("it's")).toBe("'it'\\''s'");
    expect(word('a=b')).toBe("'a=b'");
    expect(word('~')).toBe("'~'");
    expect(words(['a', 'b c'])).toBe("a 'b c'");
  });

  it('keeps comments on one line', () => {
    fc.assert(
      fc.property(hostile(), (s) => {
        const c = comment(s);
        expect(c.startsWith('#')).toBe(true);
        expect(c).not.toMatch(/[\r\n]/);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('file steps with hostile bodies', () => {
  it('write exactly the bytes of the content, and a second run changes nothing', async () => {
    const root = tempDir('shell-files');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(hostile({ maxFragments: 30 }), fc.constantFrom(undefined, '0600', '0644', '0755', '2750')), { minLength: 1, maxLength: 30 }), async (bodies) => {
        const dir = path.join(root, `run-${++run}`);
        const steps = [
          step({ id: 'files.1.directory', kind: 'directory', path: dir }),
          ...bodies.map(([content, mode], i) => step({ id: `files.${i + 2}.file`, kind: 'file', path: `${dir}/f${i}`, content, ...(mode ? { mode } : {}) })),
        ];
        const files = shellCompiler.compile(imageOf([phase('files', steps)]), {});
        const out = path.join(root, `out-${run}`);
        writeFiles(out, files);
        const script = path.join(out, 'phases/01-files.sh');
        const first = await runSh(script);
        expect(first.exitCode, first.stderr).toBe(0);
        bodies.forEach(([content], i) => {
          expect(readFileSync(`${dir}/f${i}`).equals(Buffer.from(content, 'utf8')), `f${i}: ${JSON.stringify(content)}`).toBe(true);
        });
        const second = await runSh(script);
        expect(second.exitCode, second.stderr).toBe(0);
        const p = parseProgress(second.stdout);
        expect([...outcomes(p).values()].every((o) => o === 'unchanged')).toBe(true);
        expect(p.done).toEqual({ phase: 'files', changed: 0 });
      }),
      { numRuns: 25 },
    );
  });
});
