#!/usr/bin/env node
// npm run gen: writes the files made from the code — src/ir/types.ts (the IR's
// types from its zod schemas and the step registry's), the README's stdlib reference and diagnostic
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
 * The IR's types: every zod schema src/ir/schema.ts exports, as the type it
 * parses to, and, before the first of those built from the step registry
 * (src/steps/index.ts), each registered kind's step type (`UserStep`, named
 * by the registry's `stepTypeName`) after the parts it names (`parts`: a
 * hook's action). In that order, each written with the names of those before
 * it, then formatted by TypeScript's printer; schema.ts's own aliases of
 * other aliases (StepKind, StepOf) as they are written there.
 */
const irTypes = async () => {
  const { kinds, stepTypeName } = await dist('src/steps/index.js');
  const schemaFile = path.join(repo, 'src', 'ir', 'schema.ts');
  const registryFile = path.join(repo, 'src', 'steps', 'index.ts');
  const program = ts.createProgram([schemaFile], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(schemaFile);
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias;
  /** The type a zod schema's type parses to, or undefined when it is no schema. */
  const output = (type) => {
    const zod = type.getProperty('_zod');
    const out = zod && checker.getTypeOfSymbol(zod).getProperty('output');
    return out && checker.getTypeOfSymbol(out);
  };
  const property = (type, name) => {
    const p = type.getProperty(name);
    return p && checker.getTypeOfSymbol(p);
  };
  /** The registry's kinds, in its order: their parts, then their step types. */
  const registered = () => {
    const registry = program.getSourceFile(registryFile);
    const kindsSymbol = checker.getExportsOfModule(checker.getSymbolAtLocation(registry)).find((e) => e.name === 'kinds');
    const kindsType = checker.getTypeOfSymbol(kindsSymbol);
    return Object.keys(kinds).flatMap((name) => {
      const kind = property(kindsType, name);
      const parts = property(kind, 'parts');
      return [...(parts ? checker.getPropertiesOfType(parts).map((p) => ({ name: p.name, type: output(checker.getTypeOfSymbol(p)) })) : []), { name: stepTypeName(name), type: output(property(kind, 'schema')) }];
    });
  };
  /** Whether `node` names something the registry declares. */
  const fromRegistry = (node) => {
    if (ts.isIdentifier(node)) {
      let symbol = checker.getSymbolAtLocation(node);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      if (symbol?.declarations?.some((d) => d.getSourceFile().fileName === registryFile)) return true;
    }
    return ts.forEachChild(node, fromRegistry) ?? false;
  };
  const written = [];
  const lines = [];
  const write = (name, type) => {
    let body = checker.typeToString(type, undefined, flags);
    for (const w of [...written].sort((a, b) => b.body.length - a.body.length)) body = body.split(w.body).join(w.name);
    written.push({ name, body: checker.typeToString(type, undefined, flags) });
    lines.push(`export type ${name} = ${body};`);
  };
  let kindsWritten = false;
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (exported && ts.isVariableStatement(statement)) {
      for (const decl of statement.declarationList.declarations) {
        const type = output(checker.getTypeAtLocation(decl.name));
        if (!type || !ts.isIdentifier(decl.name)) continue;
        if (!kindsWritten && decl.initializer && fromRegistry(decl.initializer)) {
          for (const k of registered()) write(k.name, k.type);
          kindsWritten = true;
        }
        write(decl.name.text, type);
      }
    } else if (ts.isTypeAliasDeclaration(statement) && !/^z\.infer<typeof \w+>$/.test(statement.type.getText(source))) {
      lines.push(statement.getText(source));
    }
  }
  if (!kindsWritten) throw new Error('src/ir/schema.ts exports no schema built from the step registry: where would the step types go?');
  const printed = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed }).printFile(ts.createSourceFile('types.ts', lines.join('\n'), ts.ScriptTarget.ES2022, true));
  return `// Generated from src/ir/schema.ts and the step registry (src/steps/index.ts) by \`npm run gen\` (scripts/gen.mjs): do not edit.\n// The Image IR's types written out, so type-checking a definition does not go through zod's inference.\n${printed}`;
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
