import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import { WEBHOOK_ANOMALY_KINDS } from '../trunk/webhookFields.js';
import { WEBHOOK_RESULTS, type WebhookObserver } from '../webhooks/observer.js';
import { API_ANOMALIES } from './apiMetrics.js';
import { NAMESPACE, fqName } from './naming.js';

const WEBHOOK_REQUESTS = fqName(NAMESPACE, 'exporter', 'webhook_requests', 'total');
const UNRECOGNIZED_EVENTS = fqName(NAMESPACE, 'exporter', 'webhook_unrecognized_events', 'total');

/** Distinct `type` values of the unrecognized-events counter; later new ones count as `other`. */
export const MAX_UNRECOGNIZED_EVENT_TYPES = 50;
const OTHER_TYPE = 'other';
/** The `endpoint` label of webhook anomalies in trunk_exporter_api_anomalies_total. */
const WEBHOOK_ENDPOINT = 'webhook';

/** The webhook endpoint's own counters, and the switch that shows or hides their series. */
export interface WebhookRequestMetrics {
  readonly observer: WebhookObserver;
  /**
   * `webhooks.enabled` of the running configuration (start-up and every reload). Off, there is no
   * endpoint and the series are absent rather than zeros that cannot move; on, every `result` and
   * anomaly kind is present from the first scrape, at 0.
   */
  setEnabled(enabled: boolean): void;
}

/**
 * Registers the counters of requests to the webhook endpoint by how they were answered and of the
 * event types it does not interpret; webhook anomalies go to the API anomalies counter (registered
 * first by registerApiMetrics) under `endpoint="webhook"`. Their series exist only while webhooks
 * are enabled (setEnabled).
 */
export function registerWebhookRequestMetrics(registry: Registry): WebhookRequestMetrics {
  const requests = new Counter({
    name: WEBHOOK_REQUESTS,
    help:
      'Requests to the webhook endpoint, by result: accepted (204, counted), duplicate (204, a ' +
      'message id already accepted, or a pull request transition, same type, PR and timestamp, ' +
      'already accepted under another id), ignored (204, signed, but for no configured target), ' +
      'unrecognized (204, signed, an event type the exporter does not interpret), unsigned (401: ' +
      'signature headers missing or malformed, or their timestamp outside the tolerance), ' +
      'invalid_signature (401: well-formed headers, no signature matches), malformed (400: signed, ' +
      'but not JSON or nested too deep, or not decodable by its Content-Encoding; 415: an ' +
      'encoding other than gzip, deflate or br), too_large (413: over 1 MiB, read or decoded), ' +
      'busy (503: no body slot), ' +
      'timeout (408: the body did not arrive within webhooks.bodyTimeoutSeconds) and ' +
      'method_not_allowed (405: not a POST).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const unrecognized = new Counter({
    name: UNRECOGNIZED_EVENTS,
    help:
      'Signed webhook events of a type the exporter does not interpret (answered 204), by type; ' +
      `at most ${MAX_UNRECOGNIZED_EVENT_TYPES} distinct types, later ones (and a body without a ` +
      `well-formed type) count as ${OTHER_TYPE}.`,
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const anomalies = registry.getSingleMetric(API_ANOMALIES);
  if (!(anomalies instanceof Counter)) {
    throw new Error(`register the API metrics before the webhook metrics: ${API_ANOMALIES}`);
  }
  const types = new Set<string>();
  let enabled = false;
  return {
    observer: {
      requestHandled(result) {
        if (enabled) requests.inc({ result });
      },
      unrecognizedEvent(type) {
        if (!enabled) return;
        if (type !== undefined && !types.has(type) && types.size < MAX_UNRECOGNIZED_EVENT_TYPES) {
          types.add(type);
        }
        unrecognized.inc({ type: type !== undefined && types.has(type) ? type : OTHER_TYPE });
      },
      anomaly(kind, count) {
        if (enabled) anomalies.inc({ endpoint: WEBHOOK_ENDPOINT, kind }, count);
      },
    },
    setEnabled(next) {
      if (next === enabled) return;
      enabled = next;
      if (next) {
        // Present from the first scrape, so rate() and increase() see the first request as a change.
        for (const result of WEBHOOK_RESULTS) requests.inc({ result }, 0);
        for (const kind of WEBHOOK_ANOMALY_KINDS)
          anomalies.inc({ endpoint: WEBHOOK_ENDPOINT, kind }, 0);
        return;
      }
      requests.reset();
      unrecognized.reset();
      types.clear();
      for (const kind of WEBHOOK_ANOMALY_KINDS)
        anomalies.remove({ endpoint: WEBHOOK_ENDPOINT, kind });
    },
  };
}
