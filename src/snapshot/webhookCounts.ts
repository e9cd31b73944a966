// What the exporter has counted from Trunk's webhooks for one target since it started: the
// cumulative counts the metrics layer renders and the last event the landing page shows. Each
// accepted event produces new, frozen counts; the store replaces the target's counts with them.

/**
 * Distinct values of one free-text field (test status, quarantine setting, monitor type or status)
 * that one target's counts keep as label values; later new ones count as OTHER_WEBHOOK_VALUE, so an
 * upstream inventing values can never add series for ever. Failure reasons share the queue's cap
 * with its queue-entry history (MAX_REASONS_PER_FAMILY).
 */
export const MAX_WEBHOOK_LABEL_VALUES = 20;

/** The label value of everything past MAX_WEBHOOK_LABEL_VALUES (and of unknown event types). */
export const OTHER_WEBHOOK_VALUE = 'other';

/** A count under two label values (`from`/`to`, `monitor_type`/`status`). */
export interface PairCount {
  readonly first: string;
  readonly second: string;
  readonly count: number;
}

/** The last accepted event of a target. */
export interface LastWebhookEvent {
  /** The event type, e.g. `pull_request.merged`. */
  readonly type: string;
  /** Unix seconds when the exporter received it. */
  readonly receivedAt: number;
}

/** Cumulative webhook counts of one target (a merge queue's or a repository's flaky tests). */
export interface WebhookCounts {
  /** Merge queue: accepted events by `event` label (known type or `other`). */
  readonly events: ReadonlyMap<string, number>;
  /** Merge queue: failed PRs by `failure_reason` (capped with the queue-entry history's reasons). */
  readonly failureReasons: ReadonlyMap<string, number>;
  /** Flaky tests: status changes, keyed by pairKey(from, to) (each value capped). */
  readonly statusChanges: ReadonlyMap<string, PairCount>;
  /** Flaky tests: quarantine setting changes by the new setting (capped). */
  readonly settingChanges: ReadonlyMap<string, number>;
  /** Flaky tests: monitor events, keyed by pairKey(monitor type, status) (each value capped). */
  readonly monitorEvents: ReadonlyMap<string, PairCount>;
  /** Flaky tests: AI investigations completed. */
  readonly investigations: number;
  /** Distinct values seen per capped field, at most MAX_WEBHOOK_LABEL_VALUES each. */
  readonly labelValues: ReadonlyMap<string, ReadonlySet<string>>;
  readonly lastEvent: LastWebhookEvent | undefined;
}

/** No webhook counted yet. */
export const EMPTY_WEBHOOK_COUNTS: WebhookCounts = Object.freeze({
  events: new Map(),
  failureReasons: new Map(),
  statusChanges: new Map(),
  settingChanges: new Map(),
  monitorEvents: new Map(),
  investigations: 0,
  labelValues: new Map(),
  lastEvent: undefined,
});

/** Map key of a pair of label values. */
export function pairKey(first: string, second: string): string {
  return `${first}\u0000${second}`;
}
