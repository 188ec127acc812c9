// Generated sections of the docs must equal what the code produces: the
// README's stdlib reference and diagnostic codes table, and the example's
// fact graph in docs/architecture.md. Regenerate with UPDATE_DOCS=1.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnosticCodes } from '../src/check/codes.js';
import { imgc, repoRoot } from './helpers/cli.js';

const readmePath = path.join(repoRoot, 'README.md');
const architecturePath = path.join(repoRoot, 'docs/architecture.md');

const codesTable = (): string => {
  const broken = (code: string) => {
    const files = readdirSync(path.join(repoRoot, 'examples/broken')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
    const hit = files.find((f) => readFileSync(path.join(repoRoot, 'examples/broken', `${f}.ts`), 'utf8').includes(`// expect: ${code}`));
    return hit ? `[${hit}.ts](examples/broken/${hit}.ts)` : '—';
  };
  const rows = Object.entries(diagnosticCodes).map(([code, d]) => `| ${code} | ${d.severity} | ${d.title} | ${d.fix.replace(/\|/g, '\\|')} | ${broken(code)} |`);
  return ['| code | severity | meaning | fix | example |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
};

/** Each generated file with its sections. */
const generated = async (): Promise<[string, Record<string, string>][]> => [
  [readmePath, { stdlib: (await imgc(['docs'])).stdout + '\n', codes: codesTable() }],
  [architecturePath, { graph: '```mermaid\n' + (await imgc(['explain', '--graph', 'mermaid', 'examples/node-image-debian.ts'])).stdout + '\n```\n' }],
];

const replaceSection = (text: string, name: string, body: string) =>
  text.replace(new RegExp(`(<!-- ${name}:begin -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`), (_, a: string, b: string) => `${a}${body}${b}`);

describe('README', () => {
  it('generated sections are up to date', async () => {
    for (const [file, sections] of await generated()) {
      const text = readFileSync(file, 'utf8');
      let expected = text;
      for (const [name, body] of Object.entries(sections)) {
        expect(text, `${file} has a ${name} section`).toContain(`<!-- ${name}:begin -->`);
        expected = replaceSection(expected, name, body);
      }
      if (process.env['UPDATE_DOCS'] === '1') writeFileSync(file, expected);
      else expect(text, `${file}: run UPDATE_DOCS=1 npx vitest run test/docs.test.ts`).toBe(expected);
    }
  });

  it('is a user\'s document of at most 300 lines; development notes live in docs/', () => {
    const readme = readFileSync(readmePath, 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    for (const doc of ['architecture', 'development', 'performance']) expect(readme).toContain(`(docs/${doc}.md)`);
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
