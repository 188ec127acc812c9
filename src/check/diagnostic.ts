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
