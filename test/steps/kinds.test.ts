// Every step kind × target: each registered kind has, for every target, a
// rendering, an explicit refusal with a reason (IMGC2002), or says who does it
// instead — never nothing; a kind the shell target's build applies from the
// build machine (an Ansible role) has the ansible rendering it applies. And
// every kind of the IR is registered.
import { describe, expect, it } from 'vitest';
import { allKinds, isRefusal } from '../../src/steps/index.js';
import type { StepKind } from '../../src/steps/kind.js';
import { Step } from '../../src/ir/schema.js';

const targets = ['shell', 'ansible', 'cloudInit'] as const;

/** What a kind lacks: one line per kind × target (or field) with neither a rendering nor a reasoned refusal. */
const gaps = (kinds: ReadonlyMap<string, StepKind>): string[] => {
  const out: string[] = [];
  for (const [name, k] of kinds) {
    if (k.kind !== name) out.push(`${name}: registered under another name than its kind '${k.kind}'`);
    if (typeof k.describe !== 'function') out.push(`${name}: no describe`);
    if (typeof k.comment !== 'function') out.push(`${name}: no comment`);
    if (typeof k.runtime !== 'function') out.push(`${name}: no runtime inverse (or reason it has none)`);
    for (const t of targets) {
      const r: unknown = k[t];
      if (isRefusal(r)) {
        if (r.refuse.trim() === '') out.push(`${name} × ${t}: a refusal without a reason`);
      } else if (typeof r === 'function') continue;
      else if (typeof r === 'object' && r !== null && typeof (r as { elsewhere?: unknown }).elsewhere === 'function') continue;
      else if (t === 'cloudInit' && typeof r === 'object' && r !== null && typeof (r as { run?: unknown }).run === 'function') continue;
      else out.push(`${name} × ${t}: neither a rendering nor a refusal with a reason`);
    }
    // The shell target's build applies such a step with its ansible rendering, from the build machine.
    if (k.fromBuildMachine !== undefined && typeof k.ansible !== 'function') out.push(`${name} × shell: applied from the build machine, but with no ansible rendering to apply`);
  }
  return out;
};

describe('step kinds', () => {
  it('every kind × target has a rendering or an explicit refusal with a reason', () => {
    expect(gaps(allKinds())).toEqual([]);
  });

  it('reports a kind × target that has neither (the walk can fail)', () => {
    const swapOff = allKinds().get('swapOff')!;
    const broken = new Map<string, StepKind>([
      ['noShell', { ...swapOff, kind: 'noShell', shell: undefined } as unknown as StepKind],
      ['mute', { ...swapOff, kind: 'mute', ansible: { refuse: ' ' } } as unknown as StepKind],
      ['playless', { ...swapOff, kind: 'playless', fromBuildMachine: 'ansible-playbook', ansible: { refuse: 'no' } } as unknown as StepKind],
    ]);
    expect(gaps(broken)).toEqual([
      'noShell × shell: neither a rendering nor a refusal with a reason',
      'mute × ansible: a refusal without a reason',
      'playless × shell: applied from the build machine, but with no ansible rendering to apply',
    ]);
  });

  it('registers every kind of the IR, and nothing else', () => {
    const irKinds = Step.options.map((o) => o.shape.kind.value).sort();
    expect([...allKinds().keys()].sort()).toEqual(irKinds);
  });
});

describe('a refusal', () => {
  it('becomes IMGC2002 at the step in the target that refuses, and only there', async () => {
    const { image, debian } = await import('../../src/index.js');
    const { compilers, CompileError } = await import('../../src/compilers/index.js');
    const ir = image('refused').base(debian()).phase('customize', (p) => p.swapOff()).toIR();
    const kinds = allKinds() as Map<string, StepKind>;
    const swapOff = kinds.get('swapOff')!;
    kinds.set('swapOff', { ...swapOff, shell: { refuse: 'this target has no fstab', hint: 'use ansible' } } as StepKind);
    try {
      let err: unknown;
      try {
        compilers.shell.compile(ir, {});
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CompileError);
      const [d] = (err as InstanceType<typeof CompileError>).diagnostics;
      expect(d).toMatchObject({ code: 'IMGC2002', stepId: ir.phases[0]!.steps[0]!.id, hint: 'use ansible' });
      expect(d!.message).toBe('the shell target cannot express swap off: this target has no fstab');
      expect(() => compilers.ansible.compile(ir, {})).not.toThrow();
    } finally {
      kinds.set('swapOff', swapOff);
    }
  });
});
