// Reads the fields of a webhook body one by one, so that one unfit field costs that field only:
// Trunk's catalog leaves most fields optional and adds new shapes over time, and a signed event is
// never refused for its content. What was odd is listed as anomalies for the caller to count.
import type { z } from 'zod';
import { isExportableMs, parseRfc3339 } from './timestamps.js';

/**
 * Odd content in a signed event of a known type: `missing_field`, a field a count needs is absent;
 * `invalid_field`, a field is present but unusable (wrong type, too long, a time without zone);
 * `timestamp_out_of_range`, a valid time outside 2000-2100. The field is then treated as absent.
 */
export type WebhookAnomalyKind = 'missing_field' | 'invalid_field' | 'timestamp_out_of_range';

export const WEBHOOK_ANOMALY_KINDS: readonly WebhookAnomalyKind[] = [
  'missing_field',
  'invalid_field',
  'timestamp_out_of_range',
];

/** One odd field: its kind and its dotted path in the body. */
export interface WebhookAnomaly {
  readonly kind: WebhookAnomalyKind;
  readonly field: string;
}

/** Reads fields of one JSON object, noting each anomaly; never throws on any input. */
export class WebhookFields {
  readonly #body: Readonly<Record<string, unknown>>;
  readonly #anomalies: WebhookAnomaly[] = [];

  constructor(body: Readonly<Record<string, unknown>>) {
    this.#body = body;
  }

  /** The anomalies noted so far. */
  get anomalies(): readonly WebhookAnomaly[] {
    return this.#anomalies;
  }

  /**
   * The value at `path` when `schema` accepts it. Absent, `null` or `""` is undefined without an
   * anomaly (a missing_field one when `required`); anything else unfit is undefined and noted.
   */
  read<T>(path: readonly string[], schema: z.ZodType<T>, required = false): T | undefined {
    const value = this.#at(path);
    if (value === undefined || value === null || value === '') {
      if (required) this.#note('missing_field', path);
      return undefined;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    this.#note('invalid_field', path);
    return undefined;
  }

  /** The first of `paths` that is present, read as `read` does (required: one of them must be). */
  readFirst<T>(
    paths: readonly (readonly string[])[],
    schema: z.ZodType<T>,
    required = false,
  ): T | undefined {
    const present = paths.find((path) => {
      const value = this.#at(path);
      return value !== undefined && value !== null && value !== '';
    });
    return this.read(present ?? paths[0] ?? [], schema, required);
  }

  /**
   * Unix seconds of the RFC 3339 time at the first present of `paths`, when it has a zone and lies
   * in 2000-2100; absent or null is undefined without an anomaly.
   */
  time(paths: readonly (readonly string[])[]): number | undefined {
    for (const path of paths) {
      const value = this.#at(path);
      if (value === undefined || value === null || value === '') continue;
      const epochMs = typeof value === 'string' ? parseRfc3339(value) : undefined;
      if (epochMs === undefined) this.#note('invalid_field', path);
      else if (!isExportableMs(epochMs)) this.#note('timestamp_out_of_range', path);
      else return epochMs / 1000;
      return undefined;
    }
    return undefined;
  }

  #note(kind: WebhookAnomalyKind, path: readonly string[]): void {
    this.#anomalies.push({ kind, field: path.join('.') });
  }

  #at(path: readonly string[]): unknown {
    let value: unknown = this.#body;
    for (const key of path) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
    }
    return value;
  }
}
