// Transpiling a user's .ts files for import, in the main thread (./link.ts)
// or the module-hooks thread (./hooks.ts); the type-check is elsewhere
// (./typecheck.ts).
//
// TypeScript is loaded as CommonJS, by ./typecheck-child.cjs's loader:
// importing its 9 MB bundle through ESM makes Node scan the whole file for
// named exports first, half a second per thread.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type ts from 'typescript';
import { cacheDir, readCached, sha256, writeCached } from '../util/cache.js';
import { srcRoot } from './entries.js';

const require = createRequire(import.meta.url);
const { loadTypescript } = require('./typecheck-child.cjs') as typeof import('./typecheck-child.cjs');

let loaded: ReturnType<typeof loadTypescript> | undefined;
/** The typescript package, loaded on first use, with V8's code cache for transpiling (see ./typecheck-child.cjs). */
const typescript = () => (loaded ??= loadTypescript(cacheDir(), 'transpile'));

/** For a process that has TypeScript loaded already (./typecheck-server.ts): transpile with that one. */
export const useTypescript = (t: typeof ts): void => {
  loaded ??= { ts: t, saveCode: () => {} };
};

const versionOf = (pkgJson: string): string => (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
const imgcPackageJson = [path.resolve(srcRoot, '..', 'package.json'), path.resolve(srcRoot, '..', '..', 'package.json')].find(existsSync);
/** What every cache entry of the loader depends on besides the user's files. */
export const cacheSalt = `imgc@${imgcPackageJson ? versionOf(imgcPackageJson) : '?'} typescript@${versionOf(require.resolve('typescript/package.json'))}`;

// Cached by content and path (the source map names the file).
const cacheKey = (file: string, text: string): string => `${sha256(`${cacheSalt}\0${file}\0${text}`)}.json`;

/** A user's TypeScript file as an ES module whose import specifiers are still to be filled in (see {@link linkModule}). */
export interface TranspiledModule {
  /** The module's text (with an inline source map); each import specifier is a placeholder. */
  code: string;
  /** Per placeholder, the specifier the user wrote. */
  specifiers: string[];
  /** Why this module can only be loaded through the module hooks, when it can. */
  needsHooks?: string;
  /** Makes the placeholders unique to this text. */
  nonce: string;
  /** TypeScript found syntax errors: the code is not to be run (the type-check reports them). */
  syntaxErrors?: true;
}

const placeholderPrefix = (nonce: string) => `imgc-specifier:${nonce}:`;

/**
 * The module's text with each specifier replaced by `resolve`'s answer (the
 * module hooks pass the user's own specifiers back; the in-thread loader
 * passes resolved URLs).
 */
export const linkModule = (m: TranspiledModule, resolve: (specifier: string) => string): string => {
  const pattern = new RegExp(`(["'])${placeholderPrefix(m.nonce)}(\\d+)\\1`, 'g'); // the nonce is hex
  return m.code.replace(pattern, (_, _q: string, i: string) => JSON.stringify(resolve(m.specifiers[Number(i)]!)));
};

/**
 * After TypeScript's own transforms (type-only imports are gone by then):
 * every literal import specifier becomes a placeholder, `import.meta.url`,
 * `.filename` and `.dirname` become the file's own values, so the module
 * means the same wherever its text is loaded from; anything else that
 * resolves relative to the module (`import.meta.resolve`, a computed
 * `import()`) marks it as needing the module hooks.
 */
const specifierTransformer =
  (t: typeof ts, file: string, out: Omit<TranspiledModule, 'code'>): ts.TransformerFactory<ts.SourceFile> =>
  (context) => {
    const f = context.factory;
    const meta: Record<string, string> = { url: pathToFileURL(file).href, filename: file, dirname: path.dirname(file) };
    const replace = (lit: ts.Expression): ts.Expression => {
      if (!t.isStringLiteral(lit)) return lit;
      out.specifiers.push(lit.text);
      return f.createStringLiteral(`${placeholderPrefix(out.nonce)}${out.specifiers.length - 1}`);
    };
    const visit = (node: ts.Node): ts.Node => {
      if (t.isImportDeclaration(node)) return f.updateImportDeclaration(node, node.modifiers, node.importClause, replace(node.moduleSpecifier), node.attributes);
      if (t.isExportDeclaration(node) && node.moduleSpecifier)
        return f.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, replace(node.moduleSpecifier), node.attributes);
      if (t.isCallExpression(node) && node.expression.kind === t.SyntaxKind.ImportKeyword) {
        const [first, ...rest] = node.arguments;
        if (first && t.isStringLiteral(first)) return f.updateCallExpression(node, node.expression, node.typeArguments, [replace(first), ...rest.map((a) => t.visitNode(a, visit) as ts.Expression)]);
        out.needsHooks ??= 'an import() of a computed specifier';
      }
      if (t.isPropertyAccessExpression(node) && t.isMetaProperty(node.expression) && node.expression.keywordToken === t.SyntaxKind.ImportKeyword) {
        const value = meta[node.name.text];
        const parent = node.parent as ts.Node | undefined;
        const op = parent && t.isBinaryExpression(parent) && parent.left === node ? parent.operatorToken.kind : undefined;
        const assigned = op !== undefined && op >= t.SyntaxKind.FirstAssignment && op <= t.SyntaxKind.LastAssignment;
        if (value !== undefined && !assigned) return f.createStringLiteral(value);
        out.needsHooks ??= `import.meta.${node.name.text}`;
        return node;
      }
      if (t.isMetaProperty(node) && node.keywordToken === t.SyntaxKind.ImportKeyword) out.needsHooks ??= 'import.meta';
      return t.visitEachChild(node, visit, context);
    };
    return (sf) => t.visitNode(sf, visit) as ts.SourceFile;
  };

/** `file`'s text as an ES module with an inline source map; cached, so TypeScript is loaded only on a miss. */
export const transpile = (file: string, text: string): TranspiledModule => {
  const key = cacheKey(file, text);
  const hit = readCached('transpiled', key);
  if (hit !== undefined) return JSON.parse(hit) as TranspiledModule;
  const { ts: t, saveCode } = typescript();
  const found: Omit<TranspiledModule, 'code'> = { specifiers: [], nonce: key.slice(0, 16) };
  const { outputText: code, diagnostics } = t.transpileModule(text, {
    fileName: file,
    reportDiagnostics: true,
    compilerOptions: {
      module: t.ModuleKind.ESNext,
      target: t.ScriptTarget.ES2022,
      inlineSourceMap: true,
      inlineSources: true,
      // Absolute, so the map still names the user's file when the text is loaded from imgc's cache.
      sourceRoot: `${pathToFileURL(path.dirname(file)).href}/`,
      verbatimModuleSyntax: false,
    },
    transformers: { after: [specifierTransformer(t, file, found)] },
  });
  saveCode();
  const result: TranspiledModule = { code, ...found, ...(diagnostics?.some((d) => d.file && d.category === t.DiagnosticCategory.Error) ? { syntaxErrors: true as const } : {}) };
  writeCached('transpiled', key, JSON.stringify(result));
  return result;
};
