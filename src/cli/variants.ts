// `imgc variants FILE`: a matrix's combinations (docs/variants.md), as text or
// as the JSON a CI matrix takes (`imgc schema --variants` describes it).
import { z } from '../util/zod.js';
import type { LoadedDefinition } from '../load/index.js';

const VariantsList = z
  .array(
    z
      .object({
        name: z.string().describe("the combination's name, which is its image's name: --variant NAME, out/NAME/…"),
        values: z.record(z.string(), z.string()).describe('each axis and its value, in the order the axes are declared ({} for a definition of one image)'),
        default: z.literal(true).optional().describe('the combination commands take without --variant or --all (variants(..., { default }))'),
      })
      .strict(),
  )
  .describe('The images of a definition: a matrix, one per combination in declaration order; else the one image');

export type VariantsList = z.infer<typeof VariantsList>;

export const variantsJsonSchema = (): Record<string, unknown> => ({
  ...z.toJSONSchema(VariantsList, { target: 'draft-2020-12' }),
  $id: 'https://imgc.dev/schema/variants-v1.json',
  title: 'imgc variants --format json',
});

/** The combinations of a loaded definition (one image: itself, with no values). */
export const variantsOf = (loaded: LoadedDefinition): VariantsList =>
  loaded.variants ? loaded.variants.map(({ name, values, default: isDefault }) => ({ name, values, ...(isDefault ? { default: true as const } : {}) })) : loaded.ir ? [{ name: loaded.ir.name, values: {} }] : [];

export const variantsText = (list: VariantsList): string =>
  list.map(({ name, values, default: isDefault }) => `${name}${Object.keys(values).length ? `  ${Object.entries(values).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}${isDefault ? '  (default)' : ''}\n`).join('');
