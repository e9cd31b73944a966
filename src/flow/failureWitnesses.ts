// The failures of a queue's pull requests that one witness counted (a `pull_request.failed`
// webhook event, the queue-entry history) and the other has not met yet: each failure counts once
// whichever sees it first, and two failures of one pull request count twice however close together.
import {
  EMPTY_ENTRY_HISTORY,
  ENTRY_HISTORY_KEEP_SECONDS,
  MAX_COUNTED_TRANSITIONS,
  unmetFailureIndex,
  type EntryHistory,
  type FailureWitness,
  type WitnessedFailure,
} from '../snapshot/entryHistoryTypes.js';
import { orShared } from '../snapshot/noEntries.js';

/**
 * The history after a webhook event told of a failure of `prNumber` at `at`: the history's count of
 * it met, or the event's remembered so that its history will not count it.
 */
export function recordEventFailure(
  history: EntryHistory,
  prNumber: number,
  at: number,
  now: number,
): EntryHistory {
  const failures = new Map(history.failures);
  meetFailure(failures, prNumber, at, 'event');
  return { ...history, failures: forgetOldFailures(failures, now) };
}

/**
 * Whether the failure of `prNumber` at `at` that witness `by` sees was counted by the other one,
 * which it meets (neither counts it again); else it is remembered as `by`'s.
 */
export function meetFailure(
  failures: Map<number, readonly WitnessedFailure[]>,
  prNumber: number,
  at: number,
  by: FailureWitness,
): boolean {
  const seen = failures.get(prNumber) ?? [];
  const met = unmetFailureIndex(failures, prNumber, at, by);
  if (met === -1) {
    failures.set(prNumber, [...seen, { at, by }]);
    return false;
  }
  failures.set(
    prNumber,
    seen.filter((_, index) => index !== met),
  );
  return true;
}

/** The failures younger than ENTRY_HISTORY_KEEP_SECONDS, at most MAX_COUNTED_TRANSITIONS pull requests. */
export function forgetOldFailures(
  failures: ReadonlyMap<number, readonly WitnessedFailure[]>,
  now: number,
): ReadonlyMap<number, readonly WitnessedFailure[]> {
  const kept = new Map<number, readonly WitnessedFailure[]>();
  for (const [prNumber, seen] of failures) {
    const recent = seen.filter(({ at }) => now - at <= ENTRY_HISTORY_KEEP_SECONDS);
    if (recent.length > 0) kept.set(prNumber, recent);
  }
  for (const key of kept.keys()) {
    if (kept.size <= MAX_COUNTED_TRANSITIONS) break;
    kept.delete(key);
  }
  return orShared(kept);
}

/**
 * What stays of a queue's history once its read is turned off (a reload): the failures it counted,
 * which the failed family sums with the webhooks' and which must not go down, and the failures
 * either witness saw recently, so that an event does not count one of them again. Hidden, as the
 * history's own families are; nothing is asked any more.
 */
export function withHistoryReadOff(history: EntryHistory | undefined): EntryHistory | undefined {
  if (history === undefined || (history.failed.size === 0 && history.failures.size === 0)) {
    return undefined;
  }
  return {
    ...EMPTY_ENTRY_HISTORY,
    failed: history.failed,
    failures: history.failures,
    shown: false,
  };
}
