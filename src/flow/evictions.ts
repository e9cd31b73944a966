// Eviction loops from a merge queue's exits: a pull request whose queue entry concluded `failed`
// again within a day of an earlier failed exit. Counted from the exits the ledger counts, once each
// whichever witness counted it (a poll, a read of concluded entries, an event), so a retest within
// one entry and the other pull requests of a split batch (they stay in the queue) count nothing,
// and a resubmission counts whether Trunk gave it a new entry or reused the old one.
import type { FlowEvent } from '../snapshot/queueFlowTypes.js';
import { latestSince } from './recentTimes.js';

/** How far apart two failed exits of one pull request make the later one an eviction loop's: a day. */
export const EVICTION_LOOP_WINDOW_SECONDS = 86_400;

/** Pull requests whose last failed exit a queue remembers at most (the oldest are forgotten first). */
export const MAX_REMEMBERED_FAILED_EXITS = 10_000;

/** The failed exits after `events`, and how many of them came within a day of an earlier one. */
export function countEvictions(
  failedExits: ReadonlyMap<number, number> | undefined,
  events: readonly FlowEvent[],
  now: number,
): { readonly failedExits: ReadonlyMap<number, number> | undefined; readonly repeated: number } {
  let repeated = 0;
  let next: Map<number, number> | undefined;
  for (const event of events) {
    if (event.kind !== 'exit' || event.outcome !== 'failed') continue;
    next ??= new Map(failedExits);
    const before = next.get(event.prNumber);
    // An exit counted late (a read finds it after a later one) is as much a repeat as one in order.
    if (before !== undefined && Math.abs(event.leftAt - before) <= EVICTION_LOOP_WINDOW_SECONDS) {
      repeated += 1;
    }
    next.set(event.prNumber, Math.max(event.leftAt, before ?? event.leftAt));
  }
  if (next === undefined) return { failedExits, repeated };
  // Those within a day of now and no more: an older one is no longer a later one's repeat.
  const recent = latestSince(next, now - EVICTION_LOOP_WINDOW_SECONDS, MAX_REMEMBERED_FAILED_EXITS);
  return { failedExits: recent, repeated };
}
