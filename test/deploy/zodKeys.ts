// Dotted key paths of a zod object schema, so a test can compare the exporter's config keys with
// another description of them (the Helm chart's values.schema.json).
import { z } from 'zod';
import { unwrapSchema } from '../../src/config/settingPaths.js';

/** Every key path of the schema: `a`, `a.b`, and `list.*.key` for arrays of objects. */
export function schemaKeys(schema: z.ZodType, prefix = ''): string[] {
  const inner = unwrapSchema(schema);
  if (inner instanceof z.ZodArray) return schemaKeys(inner.element as z.ZodType, `${prefix}*.`);
  if (!(inner instanceof z.ZodObject)) return [];
  return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) => [
    `${prefix}${key}`,
    ...schemaKeys(child, `${prefix}${key}.`),
  ]);
}
