// --decommission: provision a real root with the runtime script, decommission
// it, and compare the tree and dpkg's state with the root before provisioning.
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ansibleCompiler } from '../src/compilers/ansible/index.js';
import { shellCompiler } from '../src/compilers/shell/index.js';
import type { Image } from '../src/ir/schema.js';
import { irOf } from './helpers/cli.js';
import { cannotChroot, diffListings, freshRoot, inRoot, phaseInRoot, listing, playInRoot, withAptReadyRoot, withPython } from './runtime-support.js';

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

/** The listing's differences that are not documented leftovers. */
const unexpectedChanges = (before: Map<string, string>, after: Map<string, string>): string[] =>
  diffListings(before, after).filter((d) => !leftovers.some((re) => re.test(d.replace(/^[-+~] /, '').replace(/ \(.*$/, ''))));

/** The `changed=N` of the play recap. */
const recapChanged = (out: string): number => Number(/changed=(\d+)/.exec(out.slice(out.lastIndexOf('PLAY RECAP')))?.[1] ?? NaN);

const dpkgState = async (root: string): Promise<string> => (await inRoot(root, "dpkg-query -W -f='${Package} ${Version} ${Architecture} ${Status}\\n'")).stdout;

/**
 * Runs `body` on a fresh root that phase 1 was applied to as a build applies
 * it (the host the runtime phase expects), with the host's resolv.conf and the
 * kernel filesystems mounted for apt; `prepare` runs before the "before"
 * picture (listing and dpkg state) is taken. Always unmounts.
 */
const onCustomizedHost = async (
  prefix: string,
  body: (host: { ir: Image; root: string; before: Map<string, string>; dpkgBefore: string }) => Promise<void>,
  prepare: (root: string) => Promise<void> = async () => {},
): Promise<void> => {
  const ir = await irOf(fixture);
  const root = await freshRoot(ir, prefix);
  await withAptReadyRoot(root, async () => {
    const customize = await phaseInRoot(root, shellCompiler.compile(ir, {}), 'phases/01-customize.sh');
    expect(customize.exitCode, customize.stderr).toBe(0);
    await prepare(root);
    await body({ ir, root, before: listing(root), dpkgBefore: await dpkgState(root) });
  });
};

describe('decommission round trip', () => {
  it.skipIf(cannotChroot !== undefined)(`shell: provision then decommission leaves the root as it was${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`, async () => {
    await onCustomizedHost('decommission', async ({ ir, root, before, dpkgBefore }) => {
      const host = shellCompiler.compile(ir, { runtime: true, decommission: true });
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
      expect(unexpectedChanges(before, listing(root))).toEqual([]);

      // A second decommission finds no record and changes nothing.
      const again = await inRoot(root, host['decommission.sh']!);
      expect(again.exitCode).toBe(0);
      expect(again.stderr).toContain('nothing of rt-demo to undo');
    });
  }, 600_000);

  it.skipIf(cannotChroot !== undefined)(`ansible: runtime.yml then decommission.yml leave the root as it was${cannotChroot ? ` (skipped: ${cannotChroot})` : ''}`, async () => {
    // Ansible's own requirement on a host, python3, is installed before the "before" picture.
    await onCustomizedHost('decommission-ansible', async ({ ir, root, before, dpkgBefore }) => {
      const host = ansibleCompiler.compile(ir, { runtime: true, decommission: true });
      const first = await playInRoot(root, host, 'runtime.yml');
      expect(first.exitCode, first.all).toBe(0);
      expect(existsSync(path.join(root, 'var/lib/imgc/rt-demo/created'))).toBe(true);
      const second = await playInRoot(root, host, 'runtime.yml');
      expect(second.exitCode, second.all).toBe(0);
      expect(recapChanged(second.all), second.all).toBe(0);

      const undo = await playInRoot(root, host, 'decommission.yml');
      expect(undo.exitCode, undo.all).toBe(0);
      expect(existsSync(path.join(root, 'var/lib/imgc'))).toBe(false);
      expect(await dpkgState(root)).toBe(dpkgBefore);
      expect(unexpectedChanges(before, listing(root))).toEqual([]);

      const again = await playInRoot(root, host, 'decommission.yml');
      expect(again.exitCode, again.all).toBe(0);
      expect(again.all).toContain('nothing to undo');
      expect(recapChanged(again.all), again.all).toBe(0);
    }, withPython);
  }, 900_000);
});
