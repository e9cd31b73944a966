// When and how long to wait before trying a Trunk API call again. Trunk asks clients to retry reads
// on 429, 500, 502, 503 and 504 with exponential backoff; the other documented errors (400, 401,
// 404) will not change on a second try.

/** HTTP statuses worth another attempt. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Retry settings with every default filled in. */
export interface RetrySettings {
  /** Attempts in total, the first one included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Defaults used when the client options leave a setting out. */
export const DEFAULT_RETRY_SETTINGS: RetrySettings = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

/**
 * Longest `Retry-After` honoured. A bogus or hostile value (a day, a date years ahead) would
 * otherwise freeze every poll of the exporter, since a 429 pauses all requests.
 */
export const MAX_RETRY_AFTER_MS = 300_000;

/** Fills in defaults and rejects settings that would never retry sensibly. */
export function resolveRetrySettings(partial?: {
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}): RetrySettings {
  const settings: RetrySettings = {
    maxAttempts: partial?.maxAttempts ?? DEFAULT_RETRY_SETTINGS.maxAttempts,
    baseDelayMs: partial?.baseDelayMs ?? DEFAULT_RETRY_SETTINGS.baseDelayMs,
    maxDelayMs: partial?.maxDelayMs ?? DEFAULT_RETRY_SETTINGS.maxDelayMs,
  };
  if (!Number.isInteger(settings.maxAttempts) || settings.maxAttempts < 1) {
    throw new RangeError(`retry.maxAttempts must be an integer >= 1, got ${settings.maxAttempts}`);
  }
  if (!(settings.baseDelayMs >= 0) || !(settings.maxDelayMs >= settings.baseDelayMs)) {
    throw new RangeError(
      `retry delays must satisfy 0 <= baseDelayMs <= maxDelayMs, got ${settings.baseDelayMs} and ${settings.maxDelayMs}`,
    );
  }
  return settings;
}

/**
 * Exponential backoff with full jitter before attempt `failedAttempt + 1`: a uniform draw from
 * [0, min(max, base * 2^(failedAttempt-1))), so clients that failed together do not retry together.
 */
export function backoffDelayMs(
  failedAttempt: number,
  settings: RetrySettings,
  random: () => number,
): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (failedAttempt - 1));
  const draw = Math.min(Math.max(random(), 0), 1);
  return Math.round(ceiling * draw);
}

/**
 * Milliseconds to wait from `nowMs` per a `Retry-After` header (delta-seconds or HTTP-date), capped
 * at MAX_RETRY_AFTER_MS; undefined when the header is absent or unreadable, so backoff applies.
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const raw = (typeof value === 'string' ? value : value?.[0])?.trim();
  if (raw === undefined || raw === '') return undefined;
  let delayMs: number;
  if (/^\d+(\.\d+)?$/.test(raw)) {
    // RFC 9110 allows whole seconds only; a fraction costs nothing to accept.
    delayMs = Number(raw) * 1000;
  } else {
    // Date.parse takes bare numbers such as "-5" as years; every HTTP-date names a month.
    if (!/[a-z]/i.test(raw)) return undefined;
    const date = Date.parse(raw);
    if (Number.isNaN(date)) return undefined;
    delayMs = date - nowMs;
  }
  return Math.min(Math.max(Math.ceil(delayMs), 0), MAX_RETRY_AFTER_MS);
}
