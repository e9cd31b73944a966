import type { Endpoint } from './schemas.js';

/**
 * Odd data in 2xx responses that matched their schemas: `duplicate_pr`, a PR number listed twice in
 * one queue (the copies are dropped); `timestamp_out_of_range`, a timestamp outside 2000-2100
 * (not exported); `invalid_field`, a timestamp that is not an RFC 3339 date-time with a
 * zone (not exported), a queue setting that is a fraction or below its floor, or one of another
 * type than Trunk defines (read as absent);
 * `invalid_item`, a list item that cannot be used (a PR without a whole-number `prNumber` above 0,
 * a quarantine row that is not an object), left out while the rest of the list is used;
 * `unknown_entry_state`, a PR gone from a queue's live entries (API v2) that no read of concluded
 * entries lists, so in a state Trunk added (not counted as an exit); `unnamed_repository`, a test
 * whose `repoId` names no repository the exporter can name (counted for no repository);
 * `unknown_value`, an enum value outside a closed label set (a testing result's outcome, a flaky or
 * broken test's status), counted under `other`; `future_timestamp`, a row dated more than a minute
 * after the exporter's clock (skew, a bad row), counted once without moving the read on past that
 * minute; `paging_stopped`, a walk of a list stopped before its last page (v1: a page token
 * repeated, an empty page with a token, too many pages; v2: a cursor repeated, too long or missing
 * beside `hasMore`, too many pages or empty pages in a row, a later page answered
 * `400 INVALID_CURSOR`), its read failed.
 */
export type ApiAnomalyKind =
  | 'duplicate_pr'
  | 'timestamp_out_of_range'
  | 'invalid_field'
  | 'invalid_item'
  | 'unknown_entry_state'
  | 'unnamed_repository'
  | 'unknown_value'
  | 'future_timestamp'
  | 'paging_stopped';

/**
 * What the client reports about each HTTP exchange. Implemented by the metrics layer, so the client
 * never imports prom-client and tests can count calls without a registry.
 */
export interface ApiCallObserver {
  /**
   * One finished attempt: `code` is the HTTP status, or `timeout` / `network_error` /
   * `response_too_large`, or `aborted` (sent, then given up by the exporter before its answer).
   */
  requestFinished(endpoint: Endpoint, code: string, durationSeconds: number): void;
  /** A 2xx response whose body did not match the endpoint's schema (or was not JSON). */
  schemaMismatch(endpoint: Endpoint): void;
  /** `count` anomalies of `kind` in one response of `endpoint`. */
  anomaly(endpoint: Endpoint, kind: ApiAnomalyKind, count: number): void;
}

/** An observer that records nothing, for callers that do not export API metrics. */
export const noopApiCallObserver: ApiCallObserver = {
  requestFinished: () => undefined,
  schemaMismatch: () => undefined,
  anomaly: () => undefined,
};
