// Shared by the shell backend's tests: hand-built IR, hostile strings, writing
// and running emitted scripts, and the progress protocol's grammar.
import { execa } from 'execa';
import fc from 'fast-check';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { isPlainText } from '../../src/check/representable.js';
import { Image, type Phase, type Step } from '../../src/ir/schema.js';

type StepInput = { id: string } & Record<string, unknown>;

/** A step as the IR holds it (no facts needed for the backend). */
export const step = (s: StepInput): Step => ({ provides: [], requires: [], removes: [], ...s }) as unknown as Step;

export const phase = (name: string, steps: Step[], hooks: { pre?: Step[]; post?: Step[] } = {}): Phase =>
  ({ name, runtime: false, pre: hooks.pre ?? [], steps, post: hooks.post ?? [] }) as Phase;

/** An Image with the given phases, not checked against the schema (for what compilers must refuse). */
export const uncheckedImageOf = (phases: Phase[], name = 'test-image'): Image => ({
  irVersion: 1,
  name,
  source: 'test.ts',
  base: { name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm', variant: 'minbase', packageManager: 'apt', include: [], provides: [] },
  phases,
});

/** A valid Image (checked against the schema) with the given phases. */
export const imageOf = (phases: Phase[], name = 'test-image'): Image => Image.parse(uncheckedImageOf(phases, name));

/** Writes compiled files under dir (scripts executable). */
export const writeFiles = (dir: string, files: Record<string, string>): void => {
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, content);
    if (rel.endsWith('.sh')) chmodSync(p, 0o755);
  }
};

const fragments = [
  "'", '"', '$', '`', '${x}', '${x:-y}', '$(id)', '`id`', '$((1+1))', '%{', '%}', '%s', '%b', '%%', '{{ }}', '{{ x }}', '{% if %}', '{% endif %}',
  '\\', '\\\\', "\\'", "'\\''", '\n', '\r\n', '\r', '\t', ' ', '  ', '*', '?', '[a]', '[!a]', '~', '~root', '!', '#', '# c', ';', '&', '&&', '|', '||', '<', '>',
  '>>', '(', ')', '{', '}', '=', 'a=b', '-n', '-e', '--', '-', '\\n', '\\0', '\\c', '\\x41', 'é', 'ß', 'ﬁ', '𝔘', '😀', '👩‍👩‍👧', '\u202e', '\u200f', 'שלום', 'مرحبا',
  '\u2028', '\u2029', '\u00a0', '\ufeff', '\u0085', 'EOF', "<<'EOF'", 'IFS', 'echo', 'if', 'then', 'fi', 'done',
];

/** Hostile strings: shell, printf, template and YAML metacharacters, line breaks, unicode (astral, RTL), empty. */
export const hostile = (opts: { maxFragments?: number } = {}): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...fragments) },
        { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
        { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 6 }) },
        { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 6 }) },
      ),
      { maxLength: opts.maxFragments ?? 8 },
    )
    // Drop what the IR refuses (C0 controls, DEL, marker characters) character by character.
    .map((parts) => [...parts.join('')].filter(isPlainText).join(''));

export interface Progress {
  /** [id, state] per step line, in order. */
  steps: [string, string][];
  /** The phase line, when the phase finished. */
  done?: { phase: string; changed: number };
}

export const stepLine = /^imgc-step ([A-Za-z0-9._-]+) (start|changed|unchanged|failed|skipped)$/;
export const phaseLine = /^imgc-phase ([a-z][a-z0-9-]*) done changed=(\d+)$/;

/** Parses a phase script's stdout, asserting every line follows the grammar. */
export const parseProgress = (stdout: string): Progress => {
  const out: Progress = { steps: [] };
  const lines = stdout.split('\n');
  expect(lines.pop(), 'stdout ends with a newline').toBe('');
  for (const l of lines) {
    expect(out.done, `no line after the phase line: ${l}`).toBeUndefined();
    const s = stepLine.exec(l);
    const p = phaseLine.exec(l);
    if (s) out.steps.push([s[1]!, s[2]!]);
    else if (p) out.done = { phase: p[1]!, changed: Number(p[2]) };
    else expect.fail(`not a progress line: ${JSON.stringify(l)}`);
  }
  return out;
};

/** The outcome per step id (start followed by exactly one outcome), checking the pairing. */
export const outcomes = (p: Progress): Map<string, string> => {
  const m = new Map<string, string>();
  for (let i = 0; i < p.steps.length; i += 2) {
    const [id, start] = p.steps[i]!;
    expect(start, `line ${i} starts step ${id}`).toBe('start');
    const next = p.steps[i + 1];
    if (!next) {
      m.set(id, 'running');
      break;
    }
    expect(next[0]).toBe(id);
    expect(['changed', 'unchanged', 'failed', 'skipped']).toContain(next[1]);
    m.set(id, next[1]);
  }
  return m;
};

export const runSh = (script: string, opts: { env?: Record<string, string>; cwd?: string } = {}) =>
  execa('sh', [script], { reject: false, env: opts.env ?? {}, cwd: opts.cwd, stdin: 'ignore', stripFinalNewline: false });
