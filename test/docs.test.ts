// The README's generated sections must equal what the code produces:
// the stdlib reference, the diagnostic codes table and the example's graph.
// Regenerate with UPDATE_DOCS=1.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnosticCodes } from '../src/check/codes.js';
import { imgc, repoRoot } from './helpers/cli.js';

const readmePath = path.join(repoRoot, 'README.md');

const codesTable = (): string => {
  const broken = (code: string) => {
    const files = readdirSync(path.join(repoRoot, 'examples/broken')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
    const hit = files.find((f) => readFileSync(path.join(repoRoot, 'examples/broken', `${f}.ts`), 'utf8').includes(`// expect: ${code}`));
    return hit ? `[${hit}.ts](examples/broken/${hit}.ts)` : '—';
  };
  const rows = Object.entries(diagnosticCodes).map(([code, d]) => `| ${code} | ${d.severity} | ${d.title} | ${d.fix.replace(/\|/g, '\\|')} | ${broken(code)} |`);
  return ['| code | severity | meaning | fix | example |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
};

const sections = async (): Promise<Record<string, string>> => ({
  stdlib: (await imgc(['docs'])).stdout + '\n',
  codes: codesTable(),
  graph: '```mermaid\n' + (await imgc(['explain', '--graph', 'mermaid', 'examples/node-image-debian.ts'])).stdout + '\n```\n',
});

const replaceSection = (text: string, name: string, body: string) =>
  text.replace(new RegExp(`(<!-- ${name}:begin -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`), (_, a: string, b: string) => `${a}${body}${b}`);

describe('README', () => {
  it('generated sections are up to date', async () => {
    const readme = readFileSync(readmePath, 'utf8');
    let expected = readme;
    for (const [name, body] of Object.entries(await sections())) expected = replaceSection(expected, name, body);
    if (process.env['UPDATE_DOCS'] === '1') writeFileSync(readmePath, expected);
    else expect(readme, 'run UPDATE_DOCS=1 npx vitest run test/docs.test.ts').toBe(expected);
  });

  it('documents every diagnostic code', () => {
    const readme = readFileSync(readmePath, 'utf8');
    for (const code of Object.keys(diagnosticCodes)) expect(readme).toContain(`| ${code} |`);
  });

  it('starts with the two commands a newcomer runs', () => {
    const readme = readFileSync(readmePath, 'utf8');
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(block.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^npm ci && npx imgc /), 'npm test']);
    expect(readFileSync(path.join(repoRoot, '.ci/run'), 'utf8')).toMatch(/\nnpm test\n/);
  });
});
