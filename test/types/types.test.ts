// The type-level contracts are checked by the real TypeScript compiler: the
// `.test-d.ts` files hold @ts-expect-error lines that fail the build if a
// broken contract stops being a type error. A language-service test proves
// the editor completes the users that exist.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// TypeScript 5.9's compiler API (TypeScript 7 has no in-process one); the CLI checks with TypeScript 7.
import ts from 'typescript-5';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { tscBinary } from '../../src/load/typecheck.js';
import { repoRoot, tempDir as makeTempDir } from '../helpers/cli.js';
import { relativeImports } from '../helpers/imports.js';
import { contractJson, type Contract } from '../../src/contract/contract.js';
import { typedModule, typedModulePath } from '../../src/contract/typed.js';

/** A temp dir that is an ES module package, as a user's project is. */
const tempDir = (prefix: string) => {
  const dir = makeTempDir(prefix);
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  return dir;
};

const configOf = () => {
  const cfg = ts.readConfigFile(path.join(repoRoot, 'tsconfig.json'), ts.sys.readFile);
  return ts.parseJsonConfigFileContent(cfg.config, ts.sys, repoRoot);
};

const diagnosticsFor = (files: string[]) => {
  const { options } = configOf();
  const program = ts.createProgram(files, { ...options, noEmit: true, rootDir: undefined });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
};

/** A language service's view of `files`, as an editor has it. */
const languageHost = (files: string[], options: ts.CompilerOptions): ts.LanguageServiceHost => ({
  getCompilationSettings: () => options,
  getScriptFileNames: () => files,
  getScriptVersion: () => '1',
  getScriptSnapshot: (f) => (ts.sys.fileExists(f) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(f) ?? '') : undefined),
  getCurrentDirectory: () => repoRoot,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
});

describe('type-level contracts', () => {
  it('the type tests compile (every @ts-expect-error is still an error)', () => {
    expect(diagnosticsFor([path.join(repoRoot, 'test/types/contracts.test-d.ts')])).toEqual([]);
  });

  it('the type tests compile with TypeScript 7 too, which the CLI checks with', async () => {
    const dir = tempDir('types7');
    const config = path.join(dir, 'tsconfig.json');
    writeFileSync(config, JSON.stringify({ extends: path.join(repoRoot, 'tsconfig.json'), compilerOptions: { typeRoots: [path.join(repoRoot, 'node_modules', '@types')] }, include: [path.join(repoRoot, 'test/types/contracts.test-d.ts')] }));
    const tsc = tscBinary();
    const r = await execa(tsc.command, [...tsc.args, '-p', config, '--pretty', 'false'], { reject: false, all: true });
    expect(r.all).toBe('');
    expect(r.exitCode).toBe(0);
  });

  it('a broken contract without @ts-expect-error fails the type-check', () => {
    const dir = tempDir('types');
    const file = path.join(dir, 'broken.ts');
    writeFileSync(file, "import { image, debian12 } from 'imgc';\nimage('x').base(debian12()).customize((p) => p.user('kube').file('/etc/x', { owner: 'kbue', content: '' }));\n");
    const errors = diagnosticsFor([file]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/'"kbue"' is not assignable to type .*"kube"/);
  });

  it('an error inside a module written inline names the caller\'s users (its parameter is typed by the caller\'s builder)', () => {
    const dir = tempDir('inline');
    const file = path.join(dir, 'inline.ts');
    writeFileSync(file, "import { image, debian12 } from 'imgc';\nimage('x').base(debian12()).customize((p) => p.user('ops').use((q) => q.file('/etc/x', { owner: 'nope', content: '' })));\n");
    const errors = diagnosticsFor([file]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^Type '"nope"' is not assignable to type '[^']*"ops"[^']*'\.$/);
  });

  it('a contract\'s typed module: a later step that needs a user the contract lacks is a type error, one it has is not, and the editor completes its users', () => {
    const dir = tempDir('contract-types');
    const contract: Contract = {
      contract: 1,
      image: 'golden',
      phase: 'customize',
      base: { name: 'debian-12', distro: 'debian', release: '12', suite: 'bookworm' },
      facts: [
        { kind: 'user', key: 'ops' },
        { kind: 'user', key: 'root' },
        { kind: 'group', key: 'admins' },
        { kind: 'path', key: '/etc' },
        { kind: 'package', key: 'containerd' },
        { kind: 'service', key: 'containerd' },
      ],
    };
    const json = path.join(dir, 'golden.contract.json');
    writeFileSync(json, contractJson(contract));
    writeFileSync(typedModulePath(json), typedModule(contract, json));
    const file = path.join(dir, 'def.ts');
    const text = [
      "import { image } from 'imgc';",
      "import golden from './golden.contract.js';",
      'image(\'x\').base(golden).provision((p) => p',
      "  .file('/etc/a', { owner: 'ops', group: 'admins', content: '' })",
      "  .enableService('containerd')",
      "  .file('/etc/b', { owner: 'kube', content: '' }));",
    ].join('\n');
    writeFileSync(file, text);
    const { options } = configOf();
    const program = ts.createProgram([file], { ...options, noEmit: true, rootDir: undefined, resolveJsonModule: true });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => [d.file?.fileName, d.file ? ts.getLineAndCharacterOfPosition(d.file, d.start ?? 0).line + 1 : 0, ts.flattenDiagnosticMessageText(d.messageText, '\n')]);
    expect(errors).toEqual([[file, 6, expect.stringMatching(/^Type '"kube"' is not assignable to type '(?=[^']*"ops")(?=[^']*"root")("ops" \| "root" \| |"root" \| "ops" \| )undefined'\.$/)]]);
    const editing = path.join(dir, 'editing.ts');
    const typing = text.replace("owner: 'ops'", "owner: ''");
    writeFileSync(editing, typing);
    const service = ts.createLanguageService(languageHost([editing], { ...options, resolveJsonModule: true }));
    const users = (service.getCompletionsAtPosition(editing, typing.indexOf("owner: '") + 8, {})?.entries ?? []).map((e) => e.name);
    expect(users.sort()).toEqual(['ops', 'root']);
  });

  it('a long chain of steps stays within TypeScript\'s instantiation limits', () => {
    const dir = tempDir('long');
    const file = path.join(dir, 'long.ts');
    const steps = Array.from({ length: 120 }, (_, i) => (i % 2 ? `  .directory('/srv/d${i}', { owner: 'u${i - 1}' })` : `  .user('u${i}')`));
    writeFileSync(file, ["import { image, debian12 } from 'imgc';", "image('x').base(debian12()).customize((p) => p", ...steps, "  .file('/srv/last', { owner: 'u0', content: '' }));", ''].join('\n'));
    expect(diagnosticsFor([file])).toEqual([]);
  });

  it('the editor completes users, groups and services the earlier steps provide', () => {
    const dir = tempDir('complete');
    const file = path.join(dir, 'def.ts');
    const text = [
      "import { image, debian12 } from 'imgc';",
      "image('x').base(debian12({ include: ['systemd'] }))",
      "  .customize((p) => p.group('admins').user('kube', { groups: ['admins'] }))",
      "  .provision((p) => p.packages(['containerd']).file('/etc/x', { owner: '', group: '', content: '' }).enableService(''));",
    ].join('\n');
    writeFileSync(file, text);
    const { options } = configOf();
    const service = ts.createLanguageService(languageHost([file], options));
    const completeAt = (needle: string) => {
      const pos = text.indexOf(needle) + needle.length;
      return (service.getCompletionsAtPosition(file, pos, {})?.entries ?? []).map((e) => e.name);
    };
    const users = completeAt("owner: '");
    expect(users).toContain('kube');
    expect(users).toContain('root');
    expect(users).not.toContain('admins');
    const groups = completeAt("group: '");
    expect(groups).toContain('admins');
    expect(groups).toContain('kube');
    const services = completeAt("enableService('");
    expect(services).toContain('containerd');
    expect(services).toContain('systemd-journald');
  });
});

describe('what a definition is type-checked against', () => {
  // The built declarations `imgc` and `imgc/stdlib` resolve to, and every one they import.
  const reachable = (entries: string[]): Set<string> => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file) || !existsSync(file)) return;
      seen.add(file);
      for (const target of relativeImports(file, readFileSync(file, 'utf8'))) visit(target.replace(/\.js$/, '.d.ts'));
    };
    entries.forEach(visit);
    return seen;
  };

  it("leaves out the IR's zod schemas: their declarations are half a megabyte, parsed by every check (the IR's types are written out in ir/types)", () => {
    const files = reachable(['src/index.d.ts', 'stdlib/index.d.ts'].map((f) => path.join(repoRoot, 'dist', f)));
    expect(files.size, 'dist/ is built (npm run build)').toBeGreaterThan(50);
    expect(files).toContain(path.join(repoRoot, 'dist', 'src', 'ir', 'types.d.ts'));
    expect(files).not.toContain(path.join(repoRoot, 'dist', 'src', 'ir', 'schema.d.ts'));
  });
});
