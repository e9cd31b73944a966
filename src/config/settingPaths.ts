import { z } from 'zod';
import { configFileSchema } from './schema.js';

/**
 * Every key path of the configuration file (`trunk`, `trunk.apiUrl`, `server.tls.certFile`, …),
 * read from its schema so that a new key is known everywhere the moment the schema has it. The
 * `targets` list is left out: a reload compares it as targets, not as settings.
 */
export const SETTING_PATHS: ReadonlySet<string> = new Set(
  keyPaths(configFileSchema, '').filter((path) => path !== 'targets'),
);

/** The object keys of `schema` and of the objects nested in it, as dotted paths. */
function keyPaths(schema: z.ZodType, prefix: string): string[] {
  const inner = unwrapSchema(schema);
  if (!(inner instanceof z.ZodObject)) return [];
  return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) => [
    `${prefix}${key}`,
    ...keyPaths(child, `${prefix}${key}.`),
  ]);
}

/** The schema inside the default, prefault and optional wrappers around it. */
export function unwrapSchema(schema: z.ZodType): z.ZodType {
  if (
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodPrefault ||
    schema instanceof z.ZodOptional
  ) {
    return unwrapSchema(schema.unwrap() as z.ZodType);
  }
  return schema;
}
