// Query values of the v2 lists read as the published definition types them (uuid, date-time,
// boolean, enum, non-empty string, comma lists): each refusal a 400 VALIDATION_FAILED that names
// the parameter and what it takes.
import { validationFailed, type V2Answer } from './v2Errors.js';
import type { Query } from './v2Paging.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `text` is a uuid (the definition's `format: uuid`). */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** Unix seconds of an ISO 8601 date-time with a zone, or undefined. */
export function parseInstant(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text)) {
    return undefined;
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

const ok = <T>(body: T) => ({ ok: true, body }) as const;

/** A string parameter, at least one character long when given. */
export function readText(query: Query, name: string): V2Answer<string | undefined> {
  const text = query.get(name);
  if (text === '') return validationFailed(`${name} must not be empty`);
  return ok(text);
}

/** A uuid parameter. */
export function readUuid(query: Query, name: string): V2Answer<string | undefined> {
  const text = query.get(name);
  if (text !== undefined && !isUuid(text)) {
    return validationFailed(`${name} must be a uuid, got ${JSON.stringify(text)}`);
  }
  return ok(text);
}

/** A date-time parameter, as unix seconds. */
export function readInstant(query: Query, name: string): V2Answer<number | undefined> {
  const text = query.get(name);
  if (text === undefined) return ok(undefined);
  const at = parseInstant(text);
  if (at === undefined) {
    return validationFailed(`${name} must be an ISO 8601 date-time, got ${JSON.stringify(text)}`);
  }
  return ok(at);
}

/** A boolean parameter: `true` or `false`. */
export function readBoolean(query: Query, name: string): V2Answer<boolean | undefined> {
  const text = query.get(name);
  if (text === undefined) return ok(undefined);
  if (text !== 'true' && text !== 'false') {
    return validationFailed(`${name} must be true or false, got ${JSON.stringify(text)}`);
  }
  return ok(text === 'true');
}

/** One of `values`. */
export function readEnum<T extends string>(
  query: Query,
  name: string,
  values: readonly T[],
): V2Answer<T | undefined> {
  const text = query.get(name);
  if (text === undefined) return ok(undefined);
  const value = values.find((candidate) => candidate === text);
  if (value === undefined) {
    return validationFailed(
      `${name} must be one of ${values.join(', ')}, got ${JSON.stringify(text)}`,
    );
  }
  return ok(value);
}

/** A comma list whose every item is one of `known` (`what` names an item in the message). */
export function readList(
  query: Query,
  name: string,
  known: readonly string[],
  what: string,
): V2Answer<ReadonlySet<string> | undefined> {
  const text = query.get(name);
  if (text === undefined) return ok(undefined);
  const items = text.split(',').map((item) => item.trim());
  const unknown = items.find((item) => !known.includes(item));
  if (unknown !== undefined) {
    return validationFailed(
      `${name}: unknown ${what} ${JSON.stringify(unknown)}; expected a comma list of ${known.join(', ')}`,
    );
  }
  return ok(new Set(items));
}
