// The configuration file's keys as its zod schema defines them, for the tests that hold the docs
// and config.example.yaml to the schema.
import { z } from 'zod';
import { configFileSchema } from '../../src/config/schema.js';
import { unwrapSchema } from '../../src/config/settingPaths.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../src/trunk/client.js';

/** A key that holds a value (not a section): its dotted path (`targets.*.repo` in a list) and default. */
export interface ConfigKey {
  readonly path: string;
  /** The default the schema gives it; undefined when absent means "not set". */
  readonly defaultValue: unknown;
}

/**
 * Defaults that live outside the schema, each where the code keeps it (the schema leaves the key
 * optional and says so in a comment).
 */
const DEFAULTS_ELSEWHERE: Readonly<Record<string, unknown>> = {
  'trunk.maxResponseBytes': DEFAULT_MAX_RESPONSE_BYTES,
};

/** The default of a schema inside its optional/default/prefault wrappers, if it has one. */
function defaultOf(schema: z.ZodType): unknown {
  if (schema instanceof z.ZodDefault) return schema.def.defaultValue;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodPrefault)
    return defaultOf(schema.unwrap() as z.ZodType);
  return undefined;
}

/** Every key of the configuration file that holds a value, in schema order. */
export function configKeys(schema: z.ZodType = configFileSchema, prefix = ''): ConfigKey[] {
  const inner = unwrapSchema(schema);
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) => {
      const path = `${prefix}${key}`;
      const nested = configKeys(child, `${path}.`);
      return nested.length > 0
        ? nested
        : [{ path, defaultValue: DEFAULTS_ELSEWHERE[path] ?? defaultOf(child) }];
    });
  }
  if (
    inner instanceof z.ZodArray &&
    unwrapSchema(inner.element as z.ZodType) instanceof z.ZodObject
  )
    return configKeys(inner.element as z.ZodType, `${prefix}*.`);
  return [];
}
