// The tests' system tools: each maps to a package .ci/run installs, and a
// missing one is reported with the package to install.
import { describe, expect, it } from 'vitest';
import { ciPackages, debianPackage, missingTools } from './helpers/tools.js';

describe('system tools of the tests', () => {
  it('every tool a test asks for comes from a package .ci/run installs', () => {
    const installed = ciPackages();
    expect(installed).toContain('zsh');
    for (const tool of ['zsh', 'fish', 'dot', 'shellcheck', 'packer', 'ansible-playbook', 'ansible-lint', 'debootstrap', 'qemu-img', 'qemu-system-x86_64', 'qemu-system-aarch64', '/usr/share/AAVMF/AAVMF_CODE.fd', 'mkfs.ext4', 'mkfs.vfat', 'mcopy', 'sfdisk', 'visudo', 'sshd', 'cloud-init', 'zstd', 'chromium']) {
      expect(installed, tool).toContain(debianPackage(tool));
    }
  });

  it('a missing tool names the package to install', () => {
    expect(missingTools('sh')).toBeUndefined();
    expect(missingTools('dot', 'imgc-no-such-tool')).toBe('imgc-no-such-tool is not installed: apt-get install imgc-no-such-tool (every package the tests use: .ci/run)');
    // A file by its absolute path (firmware), not a command: present, or missing.
    expect(missingTools('/etc/passwd')).toBeUndefined();
    expect(missingTools('/usr/share/imgc-no-such-dir/x.fd')).toMatch(/^\/usr\/share\/imgc-no-such-dir\/x\.fd is not installed/);
    expect(debianPackage('/usr/share/AAVMF/AAVMF_CODE.fd')).toBe('qemu-efi-aarch64');
  });
});
