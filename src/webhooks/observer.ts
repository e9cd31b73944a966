import type { WebhookAnomalyKind } from '../trunk/webhookFields.js';

/** How the webhook endpoint answered a request, as the `result` label. */
export const WEBHOOK_RESULTS = [
  'accepted',
  'duplicate',
  'ignored',
  'unrecognized',
  'unsigned',
  'invalid_signature',
  'malformed',
  'too_large',
  'busy',
  'timeout',
  'method_not_allowed',
] as const;
export type WebhookResult = (typeof WEBHOOK_RESULTS)[number];

/**
 * What the webhook receiver reports about the requests it answers. Implemented by the metrics
 * layer, so the receiver never imports prom-client and tests can count without a registry.
 */
export interface WebhookObserver {
  requestHandled(result: WebhookResult): void;
  /** A signed event of a type the exporter does not interpret (undefined: none well-formed). */
  unrecognizedEvent(type: string | undefined): void;
  /** `count` odd fields of `kind` in one signed event of a known type. */
  anomaly(kind: WebhookAnomalyKind, count: number): void;
}
