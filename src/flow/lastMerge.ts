// The time of a merge queue's latest merge, as its ledger keeps it: the latest of every merge a
// poll, an event or a read of concluded entries told of. A maximum, so a merge told twice (its
// event and its poll) or late changes nothing, and the value never goes back.
import type { ExitStays } from '../snapshot/prStayTypes.js';
import type { ExitOutcome, QueueFlow } from '../snapshot/queueFlowTypes.js';
import { lastExit } from './prStay.js';
import { unpackStay } from './storedStays.js';

/**
 * How far after the moment the exporter learned of a merge Trunk's time of it may lie: the two
 * clocks may disagree by this much. A later time is not a time the merge can have happened at.
 */
export const MERGE_TIME_SLACK_SECONDS = 60;

/** `at` (Trunk's time of a merge the exporter learned of at `learnedAt`), or undefined if it is in the future. */
export function plausibleMergeTime(at: number | undefined, learnedAt: number): number | undefined {
  return at !== undefined && at <= learnedAt + MERGE_TIME_SLACK_SECONDS ? at : undefined;
}

/** The latest of `previous` and `mergedAt` (undefined entries ignored). */
export function latestMerge(
  previous: number | undefined,
  mergedAt: Iterable<number | undefined>,
): number | undefined {
  let latest = previous;
  for (const at of mergedAt) {
    if (at !== undefined && (latest === undefined || at > latest)) latest = at;
  }
  return latest;
}

/** `flow` with merges at `mergedAt` taken into its last merge; the same object when none is later. */
export function withMerges(flow: QueueFlow, mergedAt: Iterable<number | undefined>): QueueFlow {
  const lastMergeAt = latestMerge(flow.lastMergeAt, mergedAt);
  return lastMergeAt === flow.lastMergeAt ? flow : { ...flow, lastMergeAt };
}

/**
 * When the merge an event told of happened: its PR's latest counted exit, if a merge (a redelivery,
 * or an event whose poll counted the exit first, gives a time already known). Its timestamp, else
 * (none, or one in the future) when the exit was counted.
 */
export function eventMergeTime(stays: ExitStays, prNumber: number): number | undefined {
  const exit = lastExit(unpackStay(stays.stays.get(prNumber)));
  if (exit?.outcome !== 'merged') return undefined;
  return plausibleMergeTime(exit.leftAt, exit.countedAt) ?? exit.countedAt;
}

/** When each merged exit of `exits` left, as far as it is plausible at `learnedAt`. */
export function mergeTimes(
  exits: readonly { readonly outcome: ExitOutcome; readonly leftAt: number }[],
  learnedAt: number,
): (number | undefined)[] {
  return exits
    .filter((exit) => exit.outcome === 'merged')
    .map((exit) => plausibleMergeTime(exit.leftAt, learnedAt));
}
