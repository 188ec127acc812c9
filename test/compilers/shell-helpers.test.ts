// The shell helpers come from three owners (the shell frame, the package
// managers' records, each kind's `shellHelpers`) and are defined in a script
// by name: one name, one body, and every helper a body calls is defined too.
import { describe, expect, it } from 'vitest';
import { helperCode, helpersCalled, helperTable, shellHelpers } from '../../src/compilers/shell/helpers.js';
import { allKinds } from '../../src/steps/index.js';

describe('shell helpers', () => {
  it('every helper has one owner, and what it calls is defined', () => {
    const table = shellHelpers();
    expect(() => helpersCalled(table, table.keys())).not.toThrow();
    for (const k of allKinds().values()) for (const name of Object.keys(k.shellHelpers ?? {})) expect(table.get(name), `${k.kind}: ${name}`).toBe(k.shellHelpers![name]);
  });

  it('a name given twice is refused when the table is made', () => {
    const h = { deps: [], code: ['imgc_x() {', '  :', '}'] };
    expect(() => helperTable([{ x: h }, { x: h }])).toThrow(/two shell helpers named x/);
  });

  it('a script gets the helpers it calls and what they call, nothing else', () => {
    const code = helperCode(['swapoff']).join('\n');
    expect(code).toMatch(/^imgc_swapoff\(\) \{$/m);
    // imgc_swapoff writes with imgc_file, which sets attributes with imgc_attrs.
    expect(code).toMatch(/^imgc_file\(\) \{$/m);
    expect(code).toMatch(/^imgc_attrs\(\) \{$/m);
    expect(code.match(/^imgc_\w+\(\) \{$/gm)).toHaveLength(3);
    expect(() => helperCode(['noSuchHelper'])).toThrow(/no shell helper named noSuchHelper/);
  });
});
