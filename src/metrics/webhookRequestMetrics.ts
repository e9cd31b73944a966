import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import { WEBHOOK_RESULTS, type WebhookObserver } from '../webhooks/observer.js';
import { NAMESPACE, fqName } from './naming.js';

const WEBHOOK_REQUESTS = fqName(NAMESPACE, 'exporter', 'webhook_requests', 'total');

/**
 * Registers the counter of requests to the webhook endpoint by how they were answered, and returns
 * what feeds it.
 */
export function registerWebhookRequestMetrics(registry: Registry): WebhookObserver {
  const requests = new Counter({
    name: WEBHOOK_REQUESTS,
    help:
      'Requests to the webhook endpoint, by result: accepted (counted), duplicate (a svix-id already ' +
      'accepted), ignored (signed, but for no configured target), invalid_signature (401: missing ' +
      'or wrong signature, or svix-timestamp outside the tolerance), malformed (400: signed, but not ' +
      'a known event) and too_large (413: over 1 MiB).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // Present from the first scrape, so rate() and increase() see the first request as a change.
  for (const result of WEBHOOK_RESULTS) requests.inc({ result }, 0);
  return {
    requestHandled(result) {
      requests.inc({ result });
    },
  };
}
