// A definition whose strings look like HCL templates (`${var.x}`, `%{ if }`):
// through `imgc compile --target packer`, they reach the template escaped,
// Packer validates it, and HCL reads the literal text back. The same template
// with the escapes undone is refused by Packer, so the test can fail.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { jsonTemplateText } from '../../src/compilers/packer/quote.js';
import { imgc, tempDir } from '../helpers/cli.js';
import { expectValid, packer, parseHcl, requiredVars } from './packer-support.js';

const vmName = 'vm-${var.x}-%{ if true }y%{ endif }.qcow2';
const shutdown = 'echo "${var.x}" %{ for a in b }; sudo shutdown -P now';

const definition = `import { debian12, image } from 'imgc';

export default image('escapes')
  .base(debian12())
  .customize((p) => p.file('/etc/motd', { content: ${JSON.stringify('hello ${var.x} %{ if true }y%{ endif }\n')} }))
  .artifact((a) =>
    a.cloudImage('qemu', 'vm', {
      vm_name: ${JSON.stringify(vmName)},
      shutdown_command: ${JSON.stringify(shutdown)},
      headless: true,
      cpus: 2,
    }),
  );
`;

describe('packer backend: strings that look like HCL templates', () => {
  let out: string;
  let hcl: string;
  let json: string;
  let vars: string[];
  beforeAll(async () => {
    const dir = tempDir('packer-escape');
    writeFileSync(path.join(dir, 'escapes.ts'), definition);
    out = path.join(dir, 'out');
    const r = await imgc(['compile', path.join(dir, 'escapes.ts'), '--target', 'packer', '--packer-version', '1.6', '--json', '--out', out]);
    expect(r.exitCode, r.all).toBe(0);
    hcl = readFileSync(path.join(out, 'escapes.pkr.hcl'), 'utf8');
    json = readFileSync(path.join(out, 'escapes.pkr.json'), 'utf8');
    vars = requiredVars(await parseHcl(hcl));
  });

  it('writes them escaped, in both syntaxes', () => {
    expect(hcl).toContain('vm_name          = "vm-$${var.x}-%%{ if true }y%%{ endif }.qcow2"');
    // packer fmt aligns a block's '=' signs: compare with the padding taken out.
    expect(hcl.replace(/ +=/g, ' =')).toContain('shutdown_command = "echo \\"$${var.x}\\" %%{ for a in b }; sudo shutdown -P now"');
    expect(json).toContain('"vm_name": "vm-$${var.x}-%%{ if true }y%%{ endif }.qcow2"');
    // No unescaped interpolation or directive of the definition's text is left.
    for (const text of [hcl, json]) {
      expect(text).not.toMatch(/(^|[^$])\$\{var\.x\}/m);
      expect(text).not.toMatch(/(^|[^%])%\{ (if|for|endif)/m);
    }
  });

  it('passes packer validate, and HCL reads the literal text back', async () => {
    await expectValid(out, 'escapes.pkr.hcl', vars);
    await expectValid(out, 'escapes.pkr.json', vars);
    const source = (await parseHcl(hcl))['source']['qemu']['vm'][0];
    expect(source['vm_name']).toBe(jsonTemplateText(vmName));
    expect(source['shutdown_command']).toBe(jsonTemplateText(shutdown));
    expect(source['cpus']).toBe(2);
    expect(source['headless']).toBe(true);
  });

  it('would be refused by packer with the escapes undone (the check can fail)', async () => {
    const dir = tempDir('packer-unescaped');
    for (const [broken, message] of [
      [hcl.replaceAll('$${var.x}', '${var.x}'), /Unsupported attribute[\s\S]*attribute named "x"/],
      [hcl.replaceAll('%%{', '%{'), /missing its corresponding\s+endfor directive/],
    ] as const) {
      writeFileSync(path.join(dir, 'escapes.pkr.hcl'), broken);
      const r = await packer(['validate', ...vars, 'escapes.pkr.hcl'], dir);
      expect(r.code, r.out).not.toBe(0);
      expect(r.out).toMatch(message);
    }
  });
});
