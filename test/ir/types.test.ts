// src/ir/types.ts is generated from the zod schemas in src/ir/schema.ts and
// the step kinds' in the registry (src/steps/index.ts): the same types, written out. Definitions type-check against it (TypeScript then
// never instantiates zod's inference machinery for them), so it must stay
// equal to the schemas: `npm run gen` (scripts/gen.mjs) writes it, this test
// compares, and the type-level assertions below fail `npm test`'s tsc when they differ.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type * as schema from '../../src/ir/schema.js';
import type * as types from '../../src/ir/types.js';
import type { kinds } from '../../src/steps/index.js';
import { generators } from '../../scripts/gen.mjs';
import { repoRoot } from '../helpers/cli.js';

/** True only when A and B are the same type (not merely assignable). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Same<A, B>) => ok;
same<types.FactKind, z.infer<typeof schema.FactKind>>(true);
same<types.Fact, z.infer<typeof schema.Fact>>(true);
same<types.SourceLocation, z.infer<typeof schema.SourceLocation>>(true);
same<types.HookAction, z.infer<typeof kinds.hook.parts.HookAction>>(true);
same<types.PhaseStep, z.infer<typeof schema.PhaseStep>>(true);
same<types.Step, z.infer<typeof schema.Step>>(true);
same<types.Phase, z.infer<typeof schema.Phase>>(true);
same<types.Base, z.infer<typeof schema.Base>>(true);
same<types.Variable, z.infer<typeof schema.Variable>>(true);
same<types.Image, z.infer<typeof schema.Image>>(true);

const typesFile = path.join(repoRoot, 'src', 'ir', 'types.ts');

describe('src/ir/types.ts', () => {
  it('is what the zod schemas infer, written out', async () => {
    expect(readFileSync(typesFile, 'utf8'), 'src/ir/types.ts is stale: npm run gen').toBe(await generators['src/ir/types.ts']());
  });
});
