// Every examples/broken/*.ts states the diagnostics it must produce
// (`// expect: CODE line N`, `(also a type error)` when TypeScript reports the
// same mistake, folded into it) and the exit code (`// exit: N`); imgc check
// must produce exactly those.
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { imgc, imgcProcess, repoRoot, tempDir } from '../helpers/cli.js';

const brokenDir = path.join(repoRoot, 'examples', 'broken');
// A directory holds a definition that needs a package.json of its own (commonjs/).
const cases = readdirSync(brokenDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.includes('node_modules')).sort();

const expectations = (file: string) => {
  const text = readFileSync(path.join(brokenDir, file), 'utf8');
  const expected = [...text.matchAll(/^\/\/ expect: (IMGC\d{4})(?: line (\d+))?( \(also a type error\))?$/gm)].map((m) => ({ code: m[1]!, line: m[2] ? Number(m[2]) : undefined, typesToo: m[3] !== undefined }));
  const exit = Number(/^\/\/ exit: (\d)$/m.exec(text)?.[1]);
  return { expected, exit };
};

interface JsonDiagnostic {
  code: string;
  loc?: { file: string; line: number; column: number };
  message: string;
  hint?: string;
  seenBy?: { layer: string; code: string }[];
}

describe('broken examples', () => {
  it('there is one for every contract diagnostic', () => {
    const codes = new Set(cases.flatMap((f) => expectations(f).expected.map((e) => e.code)));
    for (const code of ['IMGC0001', 'IMGC0002', 'IMGC0003', 'IMGC0004', 'IMGC0005', 'IMGC0006', 'IMGC0007', 'IMGC0008', 'IMGC0009', 'IMGC0010', 'IMGC0011', 'IMGC0012', 'IMGC0013', 'IMGC0014', 'IMGC0015', 'IMGC0016', 'IMGC1001', 'IMGC1004', 'IMGC1002', 'IMGC1003', 'IMGC1006', 'IMGC2001', 'IMGC2003']) {
      expect(codes, code).toContain(code);
    }
  });

  it.each(cases)('%s reports exactly what it expects', async (file) => {
    const { expected, exit } = expectations(file);
    expect(expected.length, 'the file states its expectations').toBeGreaterThan(0);
    const r = await imgc(['check', '--format', 'json', `examples/broken/${file}`]);
    expect(r.exitCode, r.all).toBe(exit);
    const got = (JSON.parse(r.stdout) as { diagnostics: JsonDiagnostic[] }).diagnostics;
    for (const d of got) if (d.loc) expect(d.loc.file).toBe(`examples/broken/${file}`);
    // One mistake, one diagnostic: the ones TypeScript saw too say so (seenBy), and only those.
    const layers = (ds: { code: string; line?: number | undefined; typesToo: boolean }[]) => ds.map((d) => `${d.code}@${d.line ?? '-'}:${d.typesToo}`).sort();
    expect(layers(got.map((d) => ({ code: d.code, line: d.loc?.line, typesToo: d.seenBy?.some((s) => s.layer === 'typescript') ?? false })))).toEqual(layers(expected));
  });

  it('a definition whose type-check its package.json decides: the cached answer follows a changed or a new package.json', async () => {
    const dir = tempDir('broken-commonjs');
    const sub = path.join(dir, 'sub');
    cpSync(path.join(brokenDir, 'commonjs'), sub, { recursive: true });
    const def = path.join(sub, 'json-attribute.ts');
    const env = { IMGC_CACHE: tempDir('broken-commonjs-cache') };
    const codes = async () => {
      const r = await imgc(['check', '--format', 'json', def], { env });
      return (JSON.parse(r.stdout) as { diagnostics: JsonDiagnostic[] }).diagnostics.map((d) => `${d.code}@${d.loc?.line ?? '-'}`);
    };
    // In an ES module package: clean, and cached.
    writeFileSync(path.join(sub, 'package.json'), '{ "type": "module" }\n');
    expect(await codes()).toEqual([]);
    // Its own package.json back: CommonJS, whatever the cache holds.
    cpSync(path.join(brokenDir, 'commonjs', 'package.json'), path.join(sub, 'package.json'));
    expect(await codes()).toEqual(['IMGC1001@8']);
    // None beside it, an ES module package above: clean; then one made beside it decides again.
    rmSync(path.join(sub, 'package.json'));
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    expect(await codes()).toEqual([]);
    cpSync(path.join(brokenDir, 'commonjs', 'package.json'), path.join(sub, 'package.json'));
    expect(await codes()).toEqual(['IMGC1001@8']);
  });

  it('refuses a 5,000-character image name before a build writes anything', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'imgc-long-name-'));
    try {
      const out = path.join(tmp, 'out');
      const r = await imgcProcess(['build', 'examples/broken/long-image-name.ts', '--out', out], { env: { PATH: process.env.PATH ?? '' } });
      expect([1, 2], r.all).toContain(r.exitCode);
      expect(r.all).toContain('IMGC2003');
      expect(r.all).toContain('the image name is 5000 bytes long');
      expect(r.all).not.toMatch(/internal error|ENAMETOOLONG/);
      expect(readdirSync(tmp), 'nothing written beside or into --out').toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('shows both spellings of a path that resolves elsewhere, and the length of one too long', async () => {
    const r = await imgc(['check', 'examples/broken/path-with-dot-dot.ts']);
    expect(r.stdout).toContain("'/tmp/a/../f' is not written as it resolves: write '/tmp/f'");
    const l = await imgc(['check', 'examples/broken/long-path-component.ts']);
    expect(l.stdout).toContain('a component of the path is 300 bytes long');
  });

  it('suggests the name that was meant', async () => {
    const r = await imgc(['check', 'examples/broken/owner-missing.ts']);
    expect(r.stdout).toContain("did you mean 'kubelet'?");
    const t = await imgc(['check', 'examples/broken/type-error.ts']);
    expect(t.stdout).toContain("did you mean 'kube'?");
  });

  it('says which phase provides a requirement met too late, and where', async () => {
    const r = await imgc(['check', 'examples/broken/provided-later.ts']);
    expect(r.stdout).toContain("user 'kube' is created in phase 'provision', which runs after 'customize'");
    expect(r.stdout).toMatch(/examples\/broken\/provided-later\.ts:14:\d+\n/);
  });

  it('prints a code frame under the location, like tsc', async () => {
    const r = await imgc(['check', 'examples/broken/never-provided.ts']);
    expect(r.stdout).toMatch(/^examples\/broken\/never-provided\.ts:10:\d+ - error IMGC0001: /m);
    expect(r.stdout).toContain("10       .file('/etc/kubernetes/kubelet-env'");
    expect(r.stdout).toMatch(/\n {2,}~+\n/);
    expect(r.stdout).toContain('Found 1 error and 0 warnings.');
    expect(r.stdout).not.toContain('\u001b[');
  });
});
