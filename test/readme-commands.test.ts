// The README's command table against the CLI's own (src/cli/commands.ts):
// every command it shows exists, every flag it shows is one that command takes
// (with the values it lists), no command of the CLI is missing from it, and
// the commands it shows that run without root or a VM run on the shipped
// example with the exit code the table gives.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandNamed, commands, flagsOf, type Flag } from '../src/cli/commands.js';
import { imgc, repoRoot } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('\n## Commands\n'), readme.indexOf('\n## ', readme.indexOf('\n## Commands\n') + 1));
/** The first cell of each row of the table, its `\|` read as `|`. */
const rows = section
  .split('\n')
  .filter((l) => /^\| `/.test(l))
  .map((l) => l.replace(/\\\|/g, '\u0000').split('|')[1]!.replace(/\u0000/g, '|'));
/** The code spans of a cell: `imgc …` usages and bare flags. */
const spans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const usages = rows.flatMap(spans).filter((s) => s.startsWith('imgc '));

/** `--name VALUES` pairs of a usage, VALUES when they are a list (a|b|c) of lower-case words. */
const flagsShown = (usage: string): { name: string; values?: string[] }[] =>
  [...usage.matchAll(/--([a-z][a-z-]*)(?: ([a-z0-9.-]+(?:\|[a-z0-9.-]+)+))?/g)].map((m) => ({ name: m[1]!, ...(m[2] ? { values: m[2].split('|') } : {}) }));

describe("README's command table", () => {
  it('shows a usage for every command the CLI has, and no command it lacks', () => {
    expect(rows.length).toBeGreaterThan(10);
    const shown = new Set(usages.map((u) => u.split(' ')[1]!));
    for (const s of shown) expect(commandNamed(s), `README shows 'imgc ${s}'`).toBeDefined();
    expect(commands.map((c) => c.name).filter((n) => !shown.has(n))).toEqual([]);
  });

  it.each(usages)('%s: every flag shown is one the command takes, with the values shown', (usage) => {
    const command = commandNamed(usage.split(' ')[1]!)!;
    const flags = new Map<string, Flag>(flagsOf(command).map((f) => [f.name, f]));
    for (const f of flagsShown(usage)) {
      const flag = flags.get(f.name);
      expect(flag, `imgc ${command.name} --${f.name}`).toBeDefined();
      if (f.values && flag!.choices) for (const v of f.values) expect(flag!.choices, `imgc ${command.name} --${f.name} ${v}`).toContain(v);
    }
  });

  it('flags shown on their own (for many commands) are taken by some command', () => {
    const bare = rows.flatMap(spans).filter((s) => s.startsWith('--'));
    expect(bare.length).toBeGreaterThan(0);
    for (const b of bare) expect(commands.some((c) => flagsOf(c).some((f) => `--${f.name}` === b.split(' ')[0])), b).toBe(true);
  });

  // What runs without root, a VM or a network, on the shipped example, with the exit the table states.
  const example = 'examples/node-image.ts';
  const runs: [string[], number][] = [
    [['check', example, '--format', 'json'], 0],
    [['check', 'examples/broken/provided-later.ts'], 1],
    [['check', 'examples/no-such-file.ts'], 2],
    [['explain', example, '--graph', 'mermaid'], 0],
    [['ir', example], 0],
    [['schema', '--contract'], 0],
    [['variants', 'examples/node-image.ts', '--format', 'json'], 0],
    [['contract', example, '--phase', 'provision'], 0],
    [['docs'], 0],
    [['help', 'build'], 0],
    [['completion', 'bash'], 0],
  ];
  for (const [args, code] of runs) {
    it(`imgc ${args.join(' ')} exits ${code}`, async () => {
      const r = await imgc(args);
      expect(r.exitCode, r.all).toBe(code);
      expect(r.all).not.toMatch(/internal error|    at /);
    }, 120_000);
  }

  it('compile writes the target, and contract diff of a contract with itself exits 0', async () => {
    const dir = tempDir('readme-commands');
    const out = path.join(dir, 'shell');
    const c = await imgc(['compile', example, '--no-typecheck', '--target', 'shell', '--out', out, '--format', 'json']);
    expect(c.exitCode, c.all).toBe(0);
    const file = path.join(dir, 'contract.json');
    const k = await imgc(['contract', example, '--no-typecheck', '--out', file]);
    expect(k.exitCode, k.all).toBe(0);
    const d = await imgc(['contract', 'diff', file, file]);
    expect(d.exitCode, d.all).toBe(0);
  }, 120_000);
});
