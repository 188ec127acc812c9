// src/ir/types.ts is generated from the zod schemas in src/ir/schema.ts: the
// same types, written out. Definitions type-check against it (TypeScript then
// never instantiates zod's inference machinery for them), so it must stay
// equal to the schemas: this test regenerates it (UPDATE_GOLDEN=1 writes it),
// and the type-level assertions below fail `npm test`'s tsc when they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// TypeScript 5.9's compiler API (TypeScript 7 has no in-process one); the CLI checks with TypeScript 7.
import ts from 'typescript-5';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type * as schema from '../../src/ir/schema.js';
import type * as types from '../../src/ir/types.js';
import { repoRoot } from '../helpers/cli.js';

/** True only when A and B are the same type (not merely assignable). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Same<A, B>) => ok;
same<types.FactKind, z.infer<typeof schema.FactKind>>(true);
same<types.Fact, z.infer<typeof schema.Fact>>(true);
same<types.SourceLocation, z.infer<typeof schema.SourceLocation>>(true);
same<types.HookAction, z.infer<typeof schema.HookAction>>(true);
same<types.PhaseStep, z.infer<typeof schema.PhaseStep>>(true);
same<types.Step, z.infer<typeof schema.Step>>(true);
same<types.Phase, z.infer<typeof schema.Phase>>(true);
same<types.Base, z.infer<typeof schema.Base>>(true);
same<types.Variable, z.infer<typeof schema.Variable>>(true);
same<types.Image, z.infer<typeof schema.Image>>(true);

const schemaFile = path.join(repoRoot, 'src', 'ir', 'schema.ts');
const typesFile = path.join(repoRoot, 'src', 'ir', 'types.ts');

/**
 * Every zod schema schema.ts exports, as the type it parses to: in the
 * file's order, each written with the names of those before it, then
 * formatted by TypeScript's printer; schema.ts's own aliases of other aliases
 * (StepKind, StepOf) as they are written there.
 */
const generate = (): string => {
  const program = ts.createProgram([schemaFile], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(schemaFile)!;
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias;
  const written: { name: string; body: string }[] = [];
  const lines: string[] = [];
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
  return `// Generated from src/ir/schema.ts by test/ir/types.test.ts (UPDATE_GOLDEN=1 npm test): do not edit.\n// The Image IR's types written out, so type-checking a definition does not go through zod's inference.\n${printed}`;
};

describe('src/ir/types.ts', () => {
  it('is what the zod schemas infer, written out', () => {
    const text = generate();
    if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(typesFile, text);
    expect(readFileSync(typesFile, 'utf8'), 'src/ir/types.ts is stale: UPDATE_GOLDEN=1 npm test').toBe(text);
  });
});
