// The configuration file as written (plain data from YAML, before the schema): what the checks that
// run beside the schema need to read it without trusting its shape.

/** Whether `value` is a mapping (not null, not a list). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `value[key]` when both are mappings; undefined otherwise. */
export function sectionOf(value: unknown, key: string): Record<string, unknown> | undefined {
  const section = isRecord(value) ? value[key] : undefined;
  return isRecord(section) ? section : undefined;
}
