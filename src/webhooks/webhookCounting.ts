// How one accepted webhook event changes its target's webhook counts (snapshot/webhookCounts.ts).
import {
  EMPTY_WEBHOOK_COUNTS,
  MAX_WEBHOOK_LABEL_VALUES,
  OTHER_WEBHOOK_VALUE,
  pairKey,
  type PairCount,
  type WebhookCounts,
} from '../snapshot/webhookCounts.js';
import { failureCounted, reasonLabel, type EntryHistory } from '../snapshot/entryHistoryTypes.js';
import { CLOCK_SLACK_SECONDS } from '../trunk/timestamps.js';
import {
  mergeQueueEventLabel,
  type MergeQueueEvent,
  type WebhookEvent,
} from '../trunk/webhookEvents.js';

/**
 * The label value of a field an event lacks (or whose value was unusable): the `reason` of a
 * `pull_request.failed` without `failure_reason`, a status change without its previous status.
 */
export const UNKNOWN_WEBHOOK_VALUE = 'unknown';

/** The capped fields of a target's webhook counts, each with its own set of kept values. */
type CappedField = 'status' | 'setting' | 'monitor_type' | 'monitor_status';

/**
 * Whether a merge-queue event tells of a transition over the clocks' slack before `countFrom` (the
 * poll that started its queue's ledger, or the exporter's start before one): Svix redelivers for a
 * day what a stopped exporter did not take, and what a queue did before the exporter watched it is
 * not counted (an event without a time is taken as current).
 */
export function happenedBeforeCounting(event: MergeQueueEvent, countFrom: number): boolean {
  const at = event.transitionSeconds;
  return at !== undefined && at < countFrom - CLOCK_SLACK_SECONDS;
}

/**
 * New counts: `previous` (or empty ones) with `event`, received at `receivedAt`, counted in. A
 * `pull_request.failed` adds no reason when it happened before counting began (`beforeCounting`:
 * happenedBeforeCounting()), or when the queue's other witness, its queue-entry `history`, counted
 * the failure; else its reason's label is capped beside the reasons the history counted.
 */
export function foldWebhookEvent(
  previous: WebhookCounts | undefined,
  event: WebhookEvent,
  receivedAt: number,
  history?: EntryHistory,
  beforeCounting = false,
): WebhookCounts {
  const counts = previous ?? EMPTY_WEBHOOK_COUNTS;
  const labelValues = new Map(counts.labelValues);
  /** `value` (`unknown` when the event lacks it) when the field keeps it or has room, else `other`. */
  const capped = (field: CappedField, sent: string | undefined): string => {
    const value = sent ?? UNKNOWN_WEBHOOK_VALUE;
    const kept = labelValues.get(field) ?? new Set<string>();
    if (kept.has(value)) return value;
    if (kept.size >= MAX_WEBHOOK_LABEL_VALUES) return OTHER_WEBHOOK_VALUE;
    labelValues.set(field, new Set([...kept, value]));
    return value;
  };
  const lastEvent = { type: event.type, receivedAt };
  /** `counts` with `changed`, the label values kept and this event as the last. */
  const counted = (changed: Partial<WebhookCounts>): WebhookCounts => ({
    ...counts,
    ...changed,
    labelValues,
    lastEvent,
  });
  switch (event.kind) {
    case 'pull_request':
    case 'pull_request_batch': {
      // A failure without a failure_reason still failed: it counts as `unknown`.
      const failureReasons =
        event.kind === 'pull_request' &&
        event.type === 'pull_request.failed' &&
        !beforeCounting &&
        (event.prNumber === undefined ||
          !failureCounted(history, event.prNumber, event.transitionSeconds ?? receivedAt, 'event'))
          ? increment(
              counts.failureReasons,
              reasonLabel(
                event.failureReason ?? UNKNOWN_WEBHOOK_VALUE,
                counts.failureReasons,
                history?.failed,
              ),
            )
          : counts.failureReasons;
      return counted({
        events: increment(counts.events, mergeQueueEventLabel(event.type)),
        failureReasons,
      });
    }
    case 'flaky_tests':
      switch (event.type) {
        case 'v2.test_case.status_changed':
        case 'test_case.status_changed':
          return counted({
            statusChanges: incrementPair(
              counts.statusChanges,
              capped('status', event.previousStatus),
              capped('status', event.newStatus),
            ),
          });
        case 'test_case.quarantining_setting_changed':
          return counted({
            settingChanges: increment(counts.settingChanges, capped('setting', event.newSetting)),
          });
        case 'test_case.monitor_status_changed':
          return counted({
            monitorEvents: incrementPair(
              counts.monitorEvents,
              capped('monitor_type', event.monitorType),
              capped('monitor_status', event.monitorStatus),
            ),
          });
        case 'test_case.investigation_completed':
          return { ...counts, investigations: counts.investigations + 1, lastEvent };
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
