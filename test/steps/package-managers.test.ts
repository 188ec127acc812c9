// One package-manager registry per base family (src/steps/package-managers.ts):
// every target and the build's runner take their package-manager renderings
// from it, so no other module spells out a package manager's modules or commands.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageManagerFamilies } from '../../src/core/packages.js';
import { packageManagers } from '../../src/steps/package-managers.js';
import { repoRoot } from '../helpers/cli.js';

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });

// What only the registry says: module names and commands of a package manager as a target runs them.
// The bodies of the shell helpers that drive a package manager are the registry's too; the frames' and kinds'
// helpers (src/compilers/*/helpers.ts, StepKind.shellHelpers) name none of these.
const knowledge = [/ansible\.builtin\.(apt|dnf)'/, /dpkg_selections/, /'dpkg-query'/, /'rpm'/, /policy_rc_d/, /install_weak_deps/, /'python3-apt'/, /`imgc_apt_(install|remove|purge) /, /'imgc_apt_(install|purge|changed|installed)'/, /apt-get install -y -qq/];

describe('package managers', () => {
  it('every family has an Ansible and a runner rendering', () => {
    for (const f of packageManagerFamilies) {
      expect(packageManagers[f].ansible.module, f).toMatch(/^ansible\.builtin\./);
      expect(packageManagers[f].runner.python, f).toContain('python3');
    }
  });

  it('no module but the registry renders a package manager', () => {
    const own = path.join(repoRoot, 'src/steps/package-managers.ts');
    const found = files(path.join(repoRoot, 'src'))
      .filter((f) => f !== own)
      .flatMap((f) => {
        const text = readFileSync(f, 'utf8');
        return knowledge.filter((re) => re.test(text)).map((re) => `${path.relative(repoRoot, f)}: ${re}`);
      });
    expect(found).toEqual([]);
  });
});
