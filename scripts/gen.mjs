#!/usr/bin/env node
// npm run gen: writes the files made from the code — src/ir/types.ts (the IR's
// types from its zod schemas), the README's stdlib reference and diagnostic
// codes table, docs/architecture.md's fact graph. The tests only compare
// (test/ir/types.test.ts, test/docs.test.ts). The stdlib's base facts come
// from a real root: `npm run gen:bases` (scripts/gen-bases.mjs).
// Needs dist/ first: npm run gen emits it without type-checking, since src/ir/types.ts
// (one of its outputs) may be stale and fail the check until this has run.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// TypeScript 5.9's compiler API (TypeScript 7 has no in-process one).
import ts from 'typescript-5';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (rel) => import(pathToFileURL(path.join(repo, 'dist', rel)).href);

/**
 * Every zod schema src/ir/schema.ts exports, as the type it parses to: in the
 * file's order, each written with the names of those before it, then
 * formatted by TypeScript's printer; schema.ts's own aliases of other aliases
 * (StepKind, StepOf) as they are written there.
 */
const irTypes = async () => {
  const schemaFile = path.join(repo, 'src', 'ir', 'schema.ts');
  const program = ts.createProgram([schemaFile], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(schemaFile);
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias;
  const written = [];
  const lines = [];
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (exported && ts.isVariableStatement(statement)) {
      for (const decl of statement.declarationList.declarations) {
        const zod = checker.getTypeAtLocation(decl.name).getProperty('_zod');
        const output = zod && checker.getTypeOfSymbol(zod).getProperty('output');
        if (!output || !ts.isIdentifier(decl.name)) continue;
        let body = checker.typeToString(checker.getTypeOfSymbol(output), undefined, flags);
        for (const w of [...written].sort((a, b) => b.body.length - a.body.length)) body = body.split(w.body).join(w.name);
        written.push({ name: decl.name.text, body: checker.typeToString(checker.getTypeOfSymbol(output), undefined, flags) });
        lines.push(`export type ${decl.name.text} = ${body};`);
      }
    } else if (ts.isTypeAliasDeclaration(statement) && !/^z\.infer<typeof \w+>$/.test(statement.type.getText(source))) {
      lines.push(statement.getText(source));
    }
  }
  const printed = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed }).printFile(ts.createSourceFile('types.ts', lines.join('\n'), ts.ScriptTarget.ES2022, true));
  return `// Generated from src/ir/schema.ts by \`npm run gen\` (scripts/gen.mjs): do not edit.\n// The Image IR's types written out, so type-checking a definition does not go through zod's inference.\n${printed}`;
};

/** What `imgc ARGS` prints on stdout, run from the repository (a final newline dropped, as a shell's $(…) does). */
const imgcOut = async (args) => {
  const { run } = await dist('src/cli/main.js');
  const cwd = process.cwd();
  let out = '';
  let err = '';
  process.chdir(repo);
  try {
    const code = await run(args, { out: (s) => (out += s), err: (s) => (err += s), isTTY: false });
    if (code !== 0) throw new Error(`imgc ${args.join(' ')} exited ${code}:\n${err}`);
  } finally {
    process.chdir(cwd);
  }
  return out.replace(/\n$/, '');
};

/** The README's table of diagnostic codes, each with the broken example that shows it. */
const codesTable = async () => {
  const { diagnosticCodes } = await dist('src/check/codes.js');
  const brokenDir = path.join(repo, 'examples/broken');
  const files = readdirSync(brokenDir).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
  const broken = (code) => {
    const hit = files.find((f) => readFileSync(path.join(brokenDir, `${f}.ts`), 'utf8').includes(`// expect: ${code}`));
    return hit ? `[${hit}.ts](examples/broken/${hit}.ts)` : '—';
  };
  const rows = Object.entries(diagnosticCodes).map(([code, d]) => `| ${code} | ${d.severity} | ${d.title} | ${d.fix.replace(/\|/g, '\\|')} | ${broken(code)} |`);
  return ['| code | severity | meaning | fix | example |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
};

/** `text` with each `<!-- name:begin -->…<!-- name:end -->` section's body replaced; a missing section is an error. */
const withSections = (file, sections) => {
  let text = readFileSync(path.join(repo, file), 'utf8');
  for (const [name, body] of Object.entries(sections)) {
    const re = new RegExp(`(<!-- ${name}:begin -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
    if (!re.test(text)) throw new Error(`${file} has no ${name} section (<!-- ${name}:begin --> … <!-- ${name}:end -->)`);
    text = text.replace(re, (_, a, b) => `${a}${body}${b}`);
  }
  return text;
};

/** Each generated file (relative to the repository) and how to make its text. */
export const generators = {
  'src/ir/types.ts': irTypes,
  'README.md': async () => withSections('README.md', { stdlib: `${await imgcOut(['docs'])}\n`, codes: await codesTable() }),
  'docs/architecture.md': async () => withSections('docs/architecture.md', { graph: '```mermaid\n' + (await imgcOut(['explain', '--graph', 'mermaid', '--no-base-edges', 'examples/node-image-debian.ts'])) + '\n```\n' }),
};

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  for (const [file, generate] of Object.entries(generators)) {
    const text = await generate();
    const abs = path.join(repo, file);
    if (readFileSync(abs, 'utf8') === text) console.log(`${file}: up to date`);
    else {
      writeFileSync(abs, text);
      console.log(`${file}: written`);
    }
  }
}
