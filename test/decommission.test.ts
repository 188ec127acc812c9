// --decommission: provision a real root with the runtime script, decommission
// it, and compare the tree and dpkg's state with the root before provisioning.
import { describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { RootMounts } from '../src/build/mounts.js';
import { shellCompiler } from '../src/compilers/shell/index.js';
import { irOf } from './helpers/cli.js';
import { cannotChroot, diffListings, freshRoot, inRoot, listing, removeRoot } from './runtime-support.js';

const fixture = 'test/fixtures/runtime/round-trip.ts';

/**
 * What may differ after provision + decommission (documented in decommission.sh's
 * header): apt's package lists, caches and auto-install marks, dpkg's backup
 * files, logs, the linker cache, and the backups shadow's tools keep of the
 * account files.
 */
const leftovers = [
  /^var\/lib\/apt\/lists(\/|$)/,
  /^var\/lib\/apt\/extended_states$/,
  /^var\/cache\//,
  /^var\/log\//,
  /^var\/lib\/dpkg\/(status|diversions|statoverride)-old$/,
  // dpkg's status file: its package states are compared exactly (dpkgState);
  // apt may refresh metadata of installed packages there (e.g. a Priority field).
  /^var\/lib\/dpkg\/status$/,
  /^var\/lib\/dpkg\/(lock|lock-frontend|triggers\/Lock)$/,
  /^etc\/ld\.so\.cache$/,
  /^etc\/(passwd|group|shadow|gshadow|subuid|subgid)-$/,
];

const dpkgState = async (root: string): Promise<string> => (await inRoot(root, "dpkg-query -W -f='${Package} ${Version} ${Architecture} ${Status}\\n'")).stdout;

describe('decommission round trip', () => {
  it.skipIf(cannotChroot !== undefined)(`shell: provision then decommission leaves the root as it was${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`, async () => {
    const ir = await irOf(fixture);
    const build = shellCompiler.compile(ir, {});
    const host = shellCompiler.compile(ir, { runtime: true, decommission: true });
    const root = await freshRoot(ir, 'decommission');
    const mounts = new RootMounts(root);
    try {
      // Phase 1 as a build makes it: the host the runtime phase expects.
      const customize = await inRoot(root, build['phases/01-customize.sh']!);
      expect(customize.exitCode, customize.stderr).toBe(0);
      copyFileSync('/etc/resolv.conf', path.join(root, 'etc/resolv.conf'));
      mounts.mount();
      const before = listing(root);
      const dpkgBefore = await dpkgState(root);

      const first = await inRoot(root, host['provision.sh']!);
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^imgc-step provision\.1\.packages changed$/m);
      const record = path.join(root, 'var/lib/imgc/rt-demo/created');
      expect(existsSync(record)).toBe(true);
      const second = await inRoot(root, host['provision.sh']!);
      expect(second.exitCode, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/done changed=1$/m); // only the raw command, which always runs

      const undo = await inRoot(root, host['decommission.sh']!);
      expect(undo.exitCode, undo.stderr).toBe(0);
      expect(existsSync(path.join(root, 'var/lib/imgc'))).toBe(false);

      expect(await dpkgState(root)).toBe(dpkgBefore);
      const changed = diffListings(before, listing(root)).filter((d) => !leftovers.some((re) => re.test(d.replace(/^[-+~] /, '').replace(/ \(.*$/, ''))));
      expect(changed).toEqual([]);

      // A second decommission finds no record and changes nothing.
      const again = await inRoot(root, host['decommission.sh']!);
      expect(again.exitCode).toBe(0);
      expect(again.stderr).toContain('nothing of rt-demo to undo');
    } finally {
      const failed = mounts.unmountAll();
      rmSync(path.join(root, 'etc/resolv.conf'), { force: true });
      if (!failed.length) removeRoot(root);
    }
  }, 600_000);
});
