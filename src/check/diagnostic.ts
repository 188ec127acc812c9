import type { SourceLocation } from '../ir/schema.js';
import { diagnosticCodes, type DiagnosticCode } from './codes.js';

export interface RelatedInformation {
  message: string;
  loc?: SourceLocation;
}

export interface Diagnostic {
  code: DiagnosticCode;
  severity: 'error' | 'warning';
  message: string;
  /** Relative to the definition's directory, like the IR's locations. */
  loc?: SourceLocation;
  related: RelatedInformation[];
  hint?: string;
  /** The IR step the diagnostic is about, when there is one. */
  stepId?: string;
  /** Every layer that reported this mistake, when more than one did (the others' reports are folded into this one). */
  seenBy?: SeenBy[];
  /** The combination of a matrix (docs/variants.md) whose image this is about, by its name. */
  variant?: string;
}

/** One layer's report of a mistake: the contract checker's code, or TypeScript's with where it pointed. */
export interface SeenBy {
  layer: 'contract' | 'typescript';
  code: string;
  loc?: SourceLocation;
}

export const diagnostic = (
  code: DiagnosticCode,
  message: string,
  extra: { loc?: SourceLocation | undefined; related?: RelatedInformation[]; hint?: string | undefined; stepId?: string } = {},
): Diagnostic => ({
  code,
  severity: diagnosticCodes[code].severity,
  message,
  ...(extra.loc ? { loc: extra.loc } : {}),
  related: extra.related ?? [],
  ...(extra.hint ? { hint: extra.hint } : {}),
  ...(extra.stepId ? { stepId: extra.stepId } : {}),
});

export const hasErrors = (ds: readonly Diagnostic[]): boolean => ds.some((d) => d.severity === 'error');

/** Stable order: by file, line, column, then code. */
export const sortDiagnostics = (ds: readonly Diagnostic[]): Diagnostic[] =>
  [...ds].sort(
    (a, b) =>
      (a.loc?.file ?? '').localeCompare(b.loc?.file ?? '') ||
      (a.loc?.line ?? 0) - (b.loc?.line ?? 0) ||
      (a.loc?.column ?? 0) - (b.loc?.column ?? 0) ||
      a.code.localeCompare(b.code),
  );

/** The literal a TypeScript assignability error is about: `Type '"kubelt"' is not assignable` → kubelt. */
const rejectedLiteral = (message: string): string | undefined => /^TS(?:2322|2820|2345): (?:Argument of type|Type) '"([^"]+)"' is not assignable/.exec(message)?.[1];

/** How far below a step's call a type error in its arguments may be (an options object spread over lines). */
const STEP_SPAN_LINES = 12;

/**
 * A type error and a contract error about the same fact at the same place are
 * one mistake: the contract's diagnostic (it has the hint) stays, counted once,
 * and says in `seenBy` that TypeScript saw it too. The same fact: the literal
 * TypeScript rejects is the one the contract message quotes; the same place:
 * the same file, at the step's call or in its arguments below it, and no other
 * contract error nearer.
 */
export const foldTypeErrors = (types: readonly Diagnostic[], contract: readonly Diagnostic[]): Diagnostic[] => {
  const seen = new Map<Diagnostic, SeenBy[]>();
  const kept: Diagnostic[] = [];
  for (const t of types) {
    const literal = t.code === 'IMGC1001' && t.loc ? rejectedLiteral(t.message) : undefined;
    const at = t.loc;
    const owner =
      literal && at
        ? contract
            .filter((c) => c.severity === 'error' && c.loc?.file === at.file && c.loc.line <= at.line && at.line - c.loc.line <= STEP_SPAN_LINES)
            .sort((a, b) => b.loc!.line - a.loc!.line || b.loc!.column - a.loc!.column)
            .find((c, i, nearest) => c.loc!.line === nearest[0]!.loc!.line && c.message.includes(`'${literal}'`))
        : undefined;
    if (!owner) {
      kept.push(t);
      continue;
    }
    const by = seen.get(owner) ?? [{ layer: 'contract', code: owner.code }];
    seen.set(owner, [...by, { layer: 'typescript', code: /^(TS\d+)/.exec(t.message)![1]!, loc: at! }]);
  }
  return [...kept, ...contract.map((c) => (seen.has(c) ? { ...c, seenBy: seen.get(c)! } : c))];
};
