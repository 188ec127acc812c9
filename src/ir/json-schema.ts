import { z } from '../util/zod.js';
import { Image } from './schema.js';

/** The IR's JSON Schema (draft 2020-12), for users validating IR with ajv. */
export const imageJsonSchema = (): Record<string, unknown> => ({
  ...z.toJSONSchema(Image, { target: 'draft-2020-12' }),
  $id: 'https://imgc.dev/schema/image-ir-v1.json',
  title: 'imgc Image IR',
});
