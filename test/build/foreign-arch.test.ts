// A root of another architecture than the host's (an arm64 base on amd64):
// the build's tool check asks for qemu-user-static's emulator and names the
// package, and a plan only reports it (nothing is mounted or registered).
import { describe, expect, it } from 'vitest';
import { image } from '../../src/index.js';
import { debian12 } from '../../stdlib/bases.js';
import { missingToolsMessage, requiredTools } from '../../src/build/tools.js';
import { hostArch, isForeign } from '../../src/host/binfmt.js';

describe('a foreign-architecture root', () => {
  it('is arm64 on this amd64 host, and amd64 is not', () => {
    expect(hostArch()).toBe(process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : undefined);
    if (hostArch() !== 'amd64') return;
    expect(isForeign('arm64')).toBe(true);
    expect(isForeign('amd64')).toBe(false);
  });

  it("needs qemu-user-static's emulator, which the tool check names by its package", () => {
    if (hostArch() !== 'amd64') return;
    const arm = image('a').base(debian12({ arch: 'arm64' })).provision((p) => p.user('x')).toIR('a.ts');
    const amd = image('b').base(debian12()).provision((p) => p.user('x')).toIR('b.ts');
    expect(requiredTools(arm, 'shell')).toContain('qemu-aarch64-static');
    expect(requiredTools(amd, 'shell')).not.toContain('qemu-aarch64-static');
    expect(missingToolsMessage(['qemu-aarch64-static'])).toBe('missing tools on this machine: qemu-aarch64-static (apt-get install qemu-user-static)');
  });
});
