import type { Endpoint } from './schemas.js';

/**
 * What the client reports about each HTTP exchange. Implemented by the metrics layer, so the client
 * never imports prom-client and tests can count calls without a registry.
 */
export interface ApiCallObserver {
  /** One finished attempt: `code` is the HTTP status, or `timeout` / `network_error` / `response_too_large`. */
  requestFinished(endpoint: Endpoint, code: string, durationSeconds: number): void;
  /** A 2xx response whose body did not match the endpoint's schema (or was not JSON). */
  schemaMismatch(endpoint: Endpoint): void;
}

/** An observer that records nothing, for callers that do not export API metrics. */
export const noopApiCallObserver: ApiCallObserver = {
  requestFinished: () => undefined,
  schemaMismatch: () => undefined,
};
