// What the shell target cannot carry faithfully, beyond assertRepresentable's
// control characters: each becomes an IMGC2001 diagnostic at its step instead
// of a script that would mangle the value or never converge.
import { diagnostic, type Diagnostic } from '../../check/diagnostic.js';
import type { Image, Step } from '../../ir/schema.js';
import { CompileError } from '../types.js';

/** Step ids appear in the progress protocol (`imgc-step <id> <state>`): one token. */
export const stepIdPattern = /^[A-Za-z0-9._-]+$/;
/** apt reads only .sources files whose names use these characters (sources.list(5)). */
const aptFileName = /^[A-Za-z0-9_.-]+$/;

const lineBreak = /[\r\n]/;

/** A string without a UTF-16 encoding error (a lone surrogate has no UTF-8 bytes). */
const wellFormed = (s: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

const strings = (value: unknown, at: string, out: [string, string][]): void => {
  if (typeof value === 'string') out.push([at, value]);
  else if (Array.isArray(value)) value.forEach((v, i) => strings(v, `${at}[${i}]`, out));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) if (k !== 'loc') strings(v, at ? `${at}.${k}` : k, out);
};

const stepProblems = (s: Step): string[] => {
  const out: string[] = [];
  if (!stepIdPattern.test(s.id)) out.push(`step id '${s.id}' is not one word of letters, digits, ".", "_" or "-", which the progress lines need`);
  const oneLine = (what: string, v: string | undefined) => {
    if (v !== undefined && lineBreak.test(v)) out.push(`${what} holds a line break, but it is written as one line of a file`);
  };
  switch (s.kind) {
    case 'sysctl':
      if (/[\s=]/.test(s.key)) out.push(`sysctl key '${s.key}' holds a blank or "=", so its line in ${s.file} could not be found again`);
      oneLine('the sysctl value', s.value);
      break;
    case 'kernelModule':
      if (/\s/.test(s.name)) out.push(`kernel module name '${s.name}' holds a blank, so its line in ${s.file} could not be found again`);
      break;
    case 'aptRepository':
      if (!aptFileName.test(s.name)) out.push(`apt source name '${s.name}' must use only letters, digits, "_", "-" and "." (apt ignores other .sources file names)`);
      oneLine('the apt source URI', s.uri);
      s.suites.forEach((v) => oneLine(`suite '${v}'`, v));
      s.components.forEach((v) => oneLine(`component '${v}'`, v));
      oneLine('the key path', s.keyPath);
      break;
    case 'user':
      for (const g of s.groups) if (g.includes(',')) out.push(`group name '${g}' holds ",", which separates useradd's --groups`);
      break;
    case 'hook':
      out.push('a hook belongs in its phase\'s pre or post hooks, not among its steps');
      break;
    default:
      break;
  }
  return out;
};

/** Throws CompileError listing what the shell target cannot carry. */
export const assertShellRepresentable = (ir: Image): void => {
  const ds: Diagnostic[] = [];
  const all: [string, string][] = [];
  strings({ name: ir.name, base: ir.base }, '', all);
  for (const [at, v] of all) if (!wellFormed(v)) ds.push(diagnostic('IMGC2001', `${at} holds a lone UTF-16 surrogate, which has no UTF-8 bytes`, { loc: ir.base.loc, hint: 'remove it from the value' }));
  ir.phases.forEach((p, pi) => {
    for (const s of [...p.pre, ...p.steps, ...p.post]) {
      const found: [string, string][] = [];
      strings(s, `phases[${pi}] step ${s.id}`, found);
      const problems = [
        ...found.filter(([, v]) => !wellFormed(v)).map(([at]) => `${at} holds a lone UTF-16 surrogate, which has no UTF-8 bytes`),
        ...(p.steps.includes(s) ? stepProblems(s) : []),
      ];
      for (const m of problems) ds.push(diagnostic('IMGC2001', `${s.id}: ${m}`, { loc: s.loc ?? p.loc, stepId: s.id, hint: 'change the value, or use another target' }));
    }
  });
  if (ds.length) throw new CompileError(ds);
};
