// Two versions of a contract, compared: a fact the new one no longer has, or
// has with other details, breaks whatever was built on the old one; a fact
// only the new one has breaks nothing. Breaking findings are diagnostics that
// point at the fact's line in the old contract, so the usual formatters (text
// with a code frame, JSON, SARIF) report them.
import { diagnostic, type Diagnostic } from '../check/diagnostic.js';
import { describeFact, detailKeys, detailText, factId } from '../core/facts.js';
import type { ContractFact, Contract } from './contract.js';

export interface ContractChange {
  fact: ContractFact;
  was: ContractFact;
}

export interface ContractDiff {
  removed: ContractFact[];
  changed: ContractChange[];
  added: ContractFact[];
  /** The bases differ in distro, release or suite. */
  base?: { was: Contract['base']; now: Contract['base'] };
}

const details = (f: ContractFact): string => detailText(f) || 'no details';

export const diffContracts = (was: Contract, now: Contract): ContractDiff => {
  const before = new Map(was.facts.map((f) => [factId(f), f]));
  const after = new Map(now.facts.map((f) => [factId(f), f]));
  const diff: ContractDiff = {
    removed: was.facts.filter((f) => !after.has(factId(f))),
    // A detail the old contract promised that the new one drops or changes; one only the new one knows breaks nothing.
    changed: now.facts.flatMap((f) => {
      const old = before.get(factId(f));
      return old && detailKeys.some((k) => old[k] !== undefined && old[k] !== f[k]) ? [{ fact: f, was: old }] : [];
    }),
    added: now.facts.filter((f) => !before.has(factId(f))),
  };
  const { distro, release, suite } = was.base;
  if (distro !== now.base.distro || release !== now.base.release || suite !== now.base.suite) diff.base = { was: was.base, now: now.base };
  return diff;
};

export const breaks = (d: ContractDiff): boolean => d.removed.length > 0 || d.changed.length > 0 || d.base !== undefined;

/** Where a fact is written in a contract file's text (one fact a line, as contractJson writes it). */
const lineOf = (text: string, f: ContractFact): number | undefined => {
  const needle = `"kind":"${f.kind}","key":${JSON.stringify(f.key)}`;
  const i = text.split('\n').findIndex((l) => l.includes(needle));
  return i < 0 ? undefined : i + 1;
};

/** The breaking findings as diagnostics located in the old contract file (`file`, relative to where it is read from). */
export const diffDiagnostics = (d: ContractDiff, old: { file: string; shown: string; text: string }, now: { file: string; phase: string }): Diagnostic[] => {
  const at = (f: ContractFact) => {
    const line = lineOf(old.text, f);
    return line ? { loc: { file: old.file, line, column: 5 } } : {};
  };
  return [
    ...(d.base
      ? [
          diagnostic('IMGC3002', `the base changed from ${d.base.was.distro} ${d.base.was.release} (${d.base.was.suite}) to ${d.base.now.distro} ${d.base.now.release} (${d.base.now.suite})`, {
            hint: 'every fact of the base may differ: check the phases built on it against the new contract',
          }),
        ]
      : []),
    ...d.removed.map((f) =>
      diagnostic('IMGC3001', `${describeFact(f)} holds in ${old.shown} but not in ${now.file} (after phase '${now.phase}')`, {
        ...at(f),
        hint: 'a phase built on the old contract may need it: provide it again, or check that nothing after this phase requires it',
      }),
    ),
    ...d.changed.map((c) =>
      diagnostic('IMGC3002', `${describeFact(c.fact)} changed: ${details(c.was)} → ${details(c.fact)}`, {
        ...at(c.was),
        hint: 'a phase built on the old contract may rely on the old details',
      }),
    ),
  ];
};
