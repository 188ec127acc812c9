import { describeStep } from '../steps/index.js';
import { describeFact } from '../core/facts.js';
import { describeConditions } from '../core/conditions.js';
import type { Fact, Image } from '../ir/schema.js';
import { originText } from '../ir/origin.js';

const facts = (label: string, fs: readonly Fact[]) => (fs.length ? [`      ${label} ${fs.map(describeFact).join(', ')}`] : []);


/** The phases with what each step provides, requires and removes. */
export const explainText = (ir: Image): string => {
  const lines = [
    `image ${ir.name} (${ir.source})`,
    `  phase 0 base: ${ir.base.name} (${ir.base.distro} ${ir.base.release} ${ir.base.suite}, ${ir.base.variant}${ir.base.include.length ? `, +${ir.base.include.join(' ')}` : ''})`,
    ...(ir.base.origin ? [`      from ${originText(ir.base.origin, true)}`] : []),
    `      provides ${ir.base.provides.length} facts`,
  ];
  for (const v of ir.variables ?? []) {
    const value = v.sensitive ? '<sensitive>' : JSON.stringify(v.value);
    const type = v.oneOf ? `one of ${v.oneOf.map((o) => JSON.stringify(o)).join(', ')}` : v.type;
    lines.push(`  variable ${v.name} (${type}) = ${value}${v.description ? `: ${v.description.replace(/\s+/g, ' ')}` : ''}`);
  }
  ir.phases.forEach((p, i) => {
    lines.push(`  phase ${i + 1} ${p.name}${p.runtimeOnly ? ' (on existing hosts only: never in the image)' : p.runtime ? ' (may run at runtime on existing hosts)' : ''}`);
    for (const s of [...p.pre, ...p.steps, ...p.post]) {
      const at = s.loc ? `  ${s.loc.file}:${s.loc.line}` : '';
      lines.push(`    ${s.id}: ${describeStep(s)}${at}`, ...(s.conditions ? [`      when ${describeConditions(s.conditions)}`] : []));
      lines.push(...facts('provides', s.provides), ...facts('requires', s.requires), ...facts('removes', s.removes));
    }
  });
  return `${lines.join('\n')}\n`;
};
