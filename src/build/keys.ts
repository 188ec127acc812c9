// The phase cache keys of one build: a chain from the base's identity through
// the root-changing phases (./cache.ts says what a key covers). The base's
// identity is its cache key plus the checksum of its tarball: a base made
// again (another day's packages from the mirror) starts a new chain. The chain
// ends at the first phase that uses a sensitive variable: that phase's root,
// and every root after it, may hold the value, so none of them is cached.
import type { Image, Phase } from '../ir/schema.js';
import { variablesIn } from '../core/variables.js';
import { keyInputs, phaseKey, type KeyInputs } from './cache.js';
import { phaseKind } from '../ir/phases.js';

/** The identity of the root a build starts from, or undefined when it has none (yet): then nothing is keyed. */
export const baseIdentity = (key: string | undefined, checksum: string | undefined, kind: 'debootstrap' | 'tar' | 'dir'): string | undefined =>
  key === undefined ? undefined : kind === 'debootstrap' ? (checksum ? `${key}:${checksum}` : undefined) : key;

/** Each keyed root phase's key and what it is made of (./cache.ts's keyInputs, recorded beside the cached root). */
export const phaseKeyChain = (ir: Image, base: string | undefined, target: string, epoch?: number): Map<Phase, { key: string; inputs: KeyInputs }> => {
  const keys = new Map<Phase, { key: string; inputs: KeyInputs }>();
  let prev = base;
  for (const p of ir.phases) {
    if (phaseKind(p) !== 'root' || prev === undefined) continue;
    const vars = variablesIn(ir, p);
    if (vars.some((v) => v.sensitive)) break;
    const inputs = keyInputs(prev, p, target, vars, epoch);
    prev = phaseKey(prev, p, target, vars, epoch);
    keys.set(p, { key: prev, inputs });
  }
  return keys;
};

/** Each keyed root phase's key. */
export const phaseKeys = (ir: Image, base: string | undefined, target: string, epoch?: number): Map<Phase, string> =>
  new Map([...phaseKeyChain(ir, base, target, epoch)].map(([p, k]) => [p, k.key]));
