// Where the reads of a queue's concluded entries have got to (ConcludedReads), kept from one read
// to the next: where they start counting, and each PR's latest conclusion they saw, bounded by an
// age and a cap.
import { latestSince } from '../../flow/recentTimes.js';
import { NO_ENTRIES } from '../../snapshot/noEntries.js';
import type { ConcludedReads } from '../../snapshot/queueFlowTypes.js';
import {
  COUNTED_EXIT_RETENTION_SECONDS,
  MAX_REMEMBERED_EXITS,
} from '../../snapshot/prStayTypes.js';
import type { V2PullRequest } from '../../trunk/v2Schemas.js';
import { TIMESTAMP_RESOLUTION_SECONDS } from '../timestamps.js';

/**
 * The reads of a queue whose ledger starts with a poll at `firstPollAt`: the exits to count are
 * those after it (one at its instant it saw done). Set when the ledger starts, so that what the
 * events count from then on is kept until the reads have moved past it (prStay.ts).
 */
export function startConcludedReads(firstPollAt: number): ConcludedReads {
  return {
    countFrom: firstPollAt + TIMESTAMP_RESOLUTION_SECONDS,
    seen: NO_ENTRIES,
    lastConclusions: NO_ENTRIES,
    pollsSinceRead: 0,
  };
}

/** Keeps the later of `at` and what `times` holds for `number`. */
export function laterOf(times: Map<number, number>, number: number, at: number): void {
  times.set(number, Math.max(at, times.get(number) ?? at));
}

/**
 * The conclusions a read may still list again: those within COUNTED_EXIT_RETENTION_SECONDS before
 * where the reads have got to (the ledger keeps the exits as long), at most MAX_REMEMBERED_EXITS.
 */
export function recentConclusions(
  conclusions: Map<number, number>,
  countFrom: number,
): ReadonlyMap<number, number> {
  return latestSince(conclusions, countFrom - COUNTED_EXIT_RETENTION_SECONDS, MAX_REMEMBERED_EXITS);
}

/**
 * One conclusion of one queue entry, concluded at `concludedAt` (its `stateChangedAt` parsed): an
 * entry is reused when its PR is submitted again. By instant, not by text: `…:02Z` and `…:02.000Z`
 * are one `date-time`.
 */
export function entryKey(row: V2PullRequest, concludedAt: number): string {
  return `${row.queueEntry.id ?? `#${String(row.number)}`}@${String(concludedAt)}`;
}
