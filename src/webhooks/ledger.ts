import {
  EMPTY_WEBHOOK_LEDGER,
  MAX_WEBHOOK_LABEL_VALUES,
  OTHER_WEBHOOK_VALUE,
  pairKey,
  type PairCount,
  type WebhookLedger,
} from '../snapshot/webhookLedger.js';
import { mergeQueueEventLabel, type WebhookEvent } from '../trunk/webhookEvents.js';

/**
 * The label value of a field an event lacks (or whose value was unusable): the `reason` of a
 * `pull_request.failed` without `failure_reason`, a status change without its previous status.
 */
export const UNKNOWN_WEBHOOK_VALUE = 'unknown';

/** The capped fields of a ledger, each with its own set of kept values. */
type CappedField = 'reason' | 'status' | 'setting' | 'monitor_type' | 'monitor_status';

/** A new ledger: `previous` (or an empty one) with `event`, received at `receivedAt`, counted in. */
export function foldWebhookEvent(
  previous: WebhookLedger | undefined,
  event: WebhookEvent,
  receivedAt: number,
): WebhookLedger {
  const ledger = previous ?? EMPTY_WEBHOOK_LEDGER;
  const labelValues = new Map(ledger.labelValues);
  /** `value` when the field keeps it (or has room for it), else `other`. */
  const capped = (field: CappedField, value: string): string => {
    const kept = labelValues.get(field) ?? new Set<string>();
    if (kept.has(value)) return value;
    if (kept.size >= MAX_WEBHOOK_LABEL_VALUES) return OTHER_WEBHOOK_VALUE;
    labelValues.set(field, new Set([...kept, value]));
    return value;
  };
  const lastEvent = { type: event.type, receivedAt };
  switch (event.kind) {
    case 'pull_request':
    case 'pull_request_batch': {
      // A failure without a failure_reason still failed: it counts as `unknown`.
      const failureReasons =
        event.kind === 'pull_request' && event.type === 'pull_request.failed'
          ? increment(
              ledger.failureReasons,
              capped('reason', event.failureReason ?? UNKNOWN_WEBHOOK_VALUE),
            )
          : ledger.failureReasons;
      return {
        ...ledger,
        events: increment(ledger.events, mergeQueueEventLabel(event.type)),
        failureReasons,
        labelValues,
        lastEvent,
      };
    }
    case 'flaky_tests':
      switch (event.type) {
        case 'v2.test_case.status_changed':
        case 'test_case.status_changed':
          return {
            ...ledger,
            statusChanges: incrementPair(
              ledger.statusChanges,
              capped('status', event.previousStatus ?? UNKNOWN_WEBHOOK_VALUE),
              capped('status', event.newStatus ?? UNKNOWN_WEBHOOK_VALUE),
            ),
            labelValues,
            lastEvent,
          };
        case 'test_case.quarantining_setting_changed':
          return {
            ...ledger,
            settingChanges: increment(
              ledger.settingChanges,
              capped('setting', event.newSetting ?? UNKNOWN_WEBHOOK_VALUE),
            ),
            labelValues,
            lastEvent,
          };
        case 'test_case.monitor_status_changed':
          return {
            ...ledger,
            monitorEvents: incrementPair(
              ledger.monitorEvents,
              capped('monitor_type', event.monitorType ?? UNKNOWN_WEBHOOK_VALUE),
              capped('monitor_status', event.monitorStatus ?? UNKNOWN_WEBHOOK_VALUE),
            ),
            labelValues,
            lastEvent,
          };
        case 'test_case.investigation_completed':
          return { ...ledger, investigations: ledger.investigations + 1, lastEvent };
      }
  }
}

function increment(counts: ReadonlyMap<string, number>, key: string): ReadonlyMap<string, number> {
  const next = new Map(counts);
  next.set(key, (next.get(key) ?? 0) + 1);
  return next;
}

function incrementPair(
  counts: ReadonlyMap<string, PairCount>,
  first: string,
  second: string,
): ReadonlyMap<string, PairCount> {
  const key = pairKey(first, second);
  const next = new Map(counts);
  next.set(key, { first, second, count: (next.get(key)?.count ?? 0) + 1 });
  return next;
}
