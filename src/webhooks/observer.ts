/** How the webhook endpoint answered a request, as the `result` label. */
export const WEBHOOK_RESULTS = [
  'accepted',
  'duplicate',
  'ignored',
  'invalid_signature',
  'malformed',
  'too_large',
] as const;
export type WebhookResult = (typeof WEBHOOK_RESULTS)[number];

/**
 * What the webhook receiver reports about the requests it answers. Implemented by the metrics
 * layer, so the receiver never imports prom-client and tests can count without a registry.
 */
export interface WebhookObserver {
  requestHandled(result: WebhookResult): void;
}
