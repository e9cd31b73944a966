// How the pull requests that left a merge queue left, from API v2: one paged read of the queue's
// concluded entries, instead of a lookup per departed PR. Each read continues from the previous
// one, so an entry that came and went between two polls is counted too, and once.
import type { UnlistedConclusion } from '../../flow/entryHistoryWindows.js';
import { lastExit } from '../../flow/prStay.js';
import { departedPullRequests, isLastLookup } from '../../flow/queueDiff.js';
import { forgetFarAhead } from '../../flow/recentTimes.js';
import { unpackStay } from '../../flow/storedStays.js';
import type { Logger } from '../../log/logger.js';
import { SAME_FAILURE_SECONDS } from '../../snapshot/entryHistoryTypes.js';
import { orShared } from '../../snapshot/noEntries.js';
import {
  EXIT_OUTCOMES,
  type ConcludedExit,
  type ConcludedReads,
  type ExitLookup,
  type ExitOutcome,
  type QueueFlow,
  type Resubmission,
} from '../../snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import type { TrunkV2Client } from '../../trunk/v2Client.js';
import type { V2QueueRef } from '../../trunk/v2Requests.js';
import { CLOCK_SLACK_SECONDS, READ_OVERLAP_SECONDS } from '../../trunk/timestamps.js';
import { V2PagingError } from '../../trunk/v2Paging.js';
import { V2_ENDPOINTS, type V2PullRequest } from '../../trunk/v2Schemas.js';
import { v1Value } from '../../trunk/v2Vocabulary.js';
import { isoTime, parseTimestampSeconds } from '../timestamps.js';
import type { ReadOptions } from '../readOptions.js';
import { entryKey, laterOf, recentConclusions, startConcludedReads } from './v2ConcludedReads.js';
import type { V2PullRequestLister } from './v2MergeQueuePoll.js';
import { entryTime, resubmittedExits } from './v2Resubmissions.js';

/**
 * How far before `since` the window of concluded entries starts: where `since` comes from the
 * exporter's clock, that clock and Trunk's may disagree by this much without an exit being missed.
 */
export const CONCLUDED_WINDOW_SLACK_SECONDS = 120;

/**
 * A queue whose polls see no PR leave is read every this many polls, so that a PR that entered
 * and left between two polls is counted within a few minutes (docs/operations.md, API cost).
 */
export const PERIODIC_EXIT_READ_POLLS = 30;

interface V2ExitReadRequest {
  /** The testing results tell how a resubmitted entry ended (v2Resubmissions.ts). */
  readonly reader: V2PullRequestLister & Pick<TrunkV2Client, 'listTestingResults'>;
  readonly queue: V2QueueRef;
  /** The queue's poll interval: an entry no poll saw was in the queue for about one at most. */
  readonly intervalSeconds: number;
  /** The ledger as of the previous successful poll. */
  readonly previous: QueueFlow;
  readonly current: MergeQueueSnapshot;
  /** The departed PRs whose final state is wanted. */
  readonly prNumbers: readonly number[];
  /** Unix seconds every departed PR concluded after (its last state change seen by a poll). */
  readonly since: number;
  readonly options: ReadOptions;
  readonly logger: Logger;
  /**
   * `reads.queueEntryHistory`: the rows' pull request ids are read, and the exits of pull requests
   * no poll listed are told (`unlisted`), for their histories.
   */
  readonly pullRequestIds?: boolean;
}

/** What one poll learned of the queue's exits through API v2. */
export interface V2ExitRead {
  /** The final state of each departed PR, `not_concluded` when the read did not list it, or `retry`. */
  readonly lookups: Map<number, ExitLookup>;
  /** Exits no poll saw leave, each for the first time. */
  readonly concluded: readonly ConcludedExit[];
  /** Listed PRs whose entry concluded and was submitted again since the previous poll. */
  readonly resubmissions: ReadonlyMap<number, Resubmission>;
  /** Where the reads have got to after this poll. */
  readonly reads: ConcludedReads;
  /**
   * With `pullRequestIds`: the exits of `concluded` (not the resubmissions) of pull requests
   * neither this poll nor the previous one listed, whose histories no window of theirs asks for.
   */
  readonly unlisted?: readonly UnlistedConclusion[];
}

const OUTCOMES: ReadonlySet<string> = new Set(EXIT_OUTCOMES);

/**
 * Reads `concludedAfter=…` (every entry that concluded since, whatever its state now) when PRs left
 * or one is back in `not_ready` (a stay begins there: it may have concluded and been submitted
 * again since the previous poll), or when no read happened for PERIODIC_EXIT_READ_POLLS polls. An
 * entry listed in a live state concluded and was submitted again (v2Resubmissions.ts). A departed
 * PR the read does not list is `not_concluded`: the ledger asks again on the next poll, and after
 * MAX_EXIT_LOOKUP_ATTEMPTS keeps it as absent (a queue-entry state Trunk added, which the live read
 * does not ask for), not as an exit; that is reported as an `unknown_entry_state` anomaly. A read
 * that fails makes every departed PR `retry` (`unknown` once it has been gone
 * polling.staleAfterSeconds); one whose paging cannot be trusted also gives its window up
 * (abandoned()). Rejects only when the poll is being aborted.
 */
export async function readExitsV2(request: V2ExitReadRequest): Promise<V2ExitRead> {
  const { queue, prNumbers, previous } = request;
  // The exits to count are those after the queue's first poll; one at its instant it saw done.
  // A ledger started through API v1 (a reload added the key) reads from its last poll on.
  const reads = previous.concludedReads ?? startConcludedReads(previous.lastPollAt);
  const skipped = { ...reads, pollsSinceRead: reads.pollsSinceRead + 1 };
  const retry = new Map<number, ExitLookup>(prNumbers.map((number) => [number, 'retry']));
  const unread: V2ExitRead = {
    lookups: retry,
    concluded: [],
    resubmissions: new Map(),
    reads: skipped,
  };
  const againInNotReady = beganStayAgain(previous, request.current);
  if (
    prNumbers.length === 0 &&
    !againInNotReady &&
    skipped.pollsSinceRead < PERIODIC_EXIT_READ_POLLS
  ) {
    return unread;
  }
  // A PR back in `not_ready` concluded after the previous poll saw it, as Trunk's clock dates it:
  // before countFrom when that is still the exporter's clock (the first poll) and Trunk's is behind.
  // So may one the periodic read finds, until a read has seen an entry (ConcludedReads.countFrom).
  const fromExporterClock = reads.seen.size === 0;
  const reachBack = Math.min(
    prNumbers.length > 0 ? request.since : Infinity,
    againInNotReady || fromExporterClock ? reads.countFrom : Infinity,
  );
  const after = Math.max(
    Math.min(reads.countFrom, reachBack - CONCLUDED_WINDOW_SLACK_SECONDS),
    (reads.abandonedAt ?? -Infinity) - CONCLUDED_WINDOW_SLACK_SECONDS,
  );
  let rows: V2PullRequest[];
  try {
    rows = await request.reader.listQueuePullRequests(
      queue,
      {
        concludedAfter: isoTime(after),
        ...(request.pullRequestIds === true ? { pullRequestIds: true } : {}),
      },
      request.options,
    );
  } catch (error) {
    if (request.options.signal?.aborted === true) throw error;
    if (error instanceof V2PagingError) {
      return { ...unread, reads: abandoned(request, skipped, after, error) };
    }
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, prs: prNumbers.length },
      `exit read failed, retried on the next poll: ${error instanceof Error ? error.message : String(error)}`,
    );
    return unread;
  }
  // The polls' departures are theirs (or their events') to count.
  const departed = new Set(departedPullRequests(previous, request.current).map((pr) => pr.number));
  const lookups = new Map<number, ExitLookup>();
  /** When the conclusion each lookup took was dated (-Infinity without a date). */
  const lookupAt = new Map<number, number>();
  const wanted = new Set(prNumbers);
  const concluded: ConcludedExit[] = [];
  const unlisted: { row: V2PullRequest; outcome: string; concludedAt: number }[] = [];
  const seen = new Map(reads.seen);
  const lastConclusions = new Map(reads.lastConclusions);
  // The latest conclusion time a read can stand on: the exporter's clock plus the slack.
  const latestPlausible = request.current.takenAt + CLOCK_SLACK_SECONDS;
  let newest = -Infinity;
  let deferredFrom = Infinity;
  let future = 0;
  const live: V2PullRequest[] = [];
  const listedSince = new Map(
    request.current.pullRequests.map((pr) => [pr.number, pr.stateChangedAt ?? Infinity]),
  );
  for (const row of rows) {
    const outcome = v1Value(row.queueEntry.state);
    if (!OUTCOMES.has(outcome)) {
      live.push(row);
      continue;
    }
    const concludedAt = parseTimestampSeconds(row.queueEntry.stateChangedAt);
    // A conclusion dated ahead (Trunk's clock, a bad row) happened by the time it was read.
    const leftAt =
      concludedAt === undefined ? undefined : Math.min(concludedAt, request.current.takenAt);
    // A PR listed with two conclusions (resubmitted, or a list paged while it moved) left with the
    // later one, whatever order the rows come in.
    const listedAt = concludedAt ?? -Infinity;
    const taken = lookupAt.get(row.number);
    if (wanted.has(row.number) && (taken === undefined || listedAt > taken)) {
      lookups.set(row.number, { outcome: outcome as ExitOutcome, leftAt });
      lookupAt.set(row.number, listedAt);
    }
    // Without a conclusion time an entry cannot be placed in the windows: its departure counts it.
    if (concludedAt === undefined || leftAt === undefined) continue;
    const key = entryKey(row, concludedAt);
    const unseen = concludedAt >= reads.countFrom && !seen.has(key);
    // The poll's live read came first: a stay it listed that concluded after its last change there
    // ended after that read. The next poll sees it gone (its departure counts it) or back (its
    // read, from no later than this conclusion, counts it): until then this read knows nothing of it.
    if (unseen && concludedAt > (listedSince.get(row.number) ?? Infinity)) {
      deferredFrom = Math.min(deferredFrom, concludedAt);
      continue;
    }
    laterOf(lastConclusions, row.number, concludedAt);
    // No later read starts past the clock's slack, whatever one row says.
    newest = Math.max(newest, Math.min(concludedAt, latestPlausible));
    if (!unseen) continue;
    // Kept by its own time, so that every read that lists it again finds it seen.
    seen.set(key, concludedAt);
    if (concludedAt > latestPlausible) future += 1;
    if (departed.has(row.number)) continue;
    const createdAt = parseTimestampSeconds(row.queueEntry.createdAt);
    concluded.push({
      prNumber: row.number,
      outcome: outcome as ExitOutcome,
      enteredAt: entryTime(createdAt, leftAt, previous.lastPollAt, request.intervalSeconds),
      leftAt,
    });
    if (!listedSince.has(row.number) && !previous.tracked.has(row.number)) {
      unlisted.push({ row, outcome, concludedAt });
    }
  }
  if (future > 0) {
    request.reader.reportAnomaly(V2_ENDPOINTS.listQueuePullRequests, 'future_timestamp', future);
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, entries: future },
      `concluded entries dated over ${String(CLOCK_SLACK_SECONDS)} s after the exporter's clock ` +
        "(Trunk's clock ahead, or bad rows): each counted once, and the next read starts no later " +
        'than the clock plus that',
    );
  }
  const countFrom = Math.min(
    Math.max(reads.countFrom, newest - READ_OVERLAP_SECONDS),
    deferredFrom,
  );
  for (const [key, leftAt] of seen) if (leftAt < countFrom) seen.delete(key);
  forgetFarAhead(seen, latestPlausible);
  const resubmitted = await resubmittedExits({
    reader: request.reader,
    queue,
    previous,
    current: request.current,
    intervalSeconds: request.intervalSeconds,
    wanted: new Set([...wanted].filter((number) => !lookups.has(number))),
    departed,
    after,
    countFrom: reads.countFrom,
    lastConclusions,
    rows: live,
    options: request.options,
    logger: request.logger,
  });
  for (const [number, lookup] of resubmitted.lookups) lookups.set(number, lookup);
  for (const [number, endedAt] of resubmitted.endings) laterOf(lastConclusions, number, endedAt);
  let absent = 0;
  for (const number of prNumbers) {
    if (lookups.has(number)) continue;
    if (concludedInWindowGivenUp(previous, number, reads.abandonedAt)) {
      lookups.set(number, 'retry');
      continue;
    }
    lookups.set(number, 'not_concluded');
    if (isLastLookup(previous, number)) absent += 1;
  }
  if (absent > 0) {
    // No line of its own: the anomaly log names the queue, once an hour at most.
    request.reader.reportAnomaly(
      V2_ENDPOINTS.listQueuePullRequests,
      'unknown_entry_state',
      absent,
      {
        repo: queue.repo,
        branch: queue.branch,
      },
    );
  }
  return {
    lookups,
    concluded: [...concluded, ...resubmitted.concluded],
    resubmissions: resubmitted.resubmissions,
    ...(request.pullRequestIds === true
      ? { unlisted: unlistedConclusions(unlisted, rows, previous, after) }
      : {}),
    reads: {
      countFrom,
      seen: orShared(seen),
      lastConclusions: recentConclusions(lastConclusions, countFrom),
      // A conclusion left to the next poll is read again there, whatever that poll sees.
      pollsSinceRead: deferredFrom === Infinity ? 0 : PERIODIC_EXIT_READ_POLLS - 1,
      ...(reads.abandonedAt === undefined ? {} : { abandonedAt: reads.abandonedAt }),
    },
  };
}

/**
 * The conclusions `unlisted` with a pull request id, each with where its stay can have begun: not
 * before the read's window (`after`), nor before the latest conclusion of its pull request before
 * it that this read lists or an earlier read knew, nor before the exit of it the ledger counted
 * last (an event's, or one the polls saw leave, whose exit read may come polls later): what led
 * there is another window's. None when that exit is this conclusion (within SAME_FAILURE_SECONDS):
 * its event counted it, and the polls may have listed its stay and read its history already, whose
 * counted transitions are forgotten once it concluded; so the history of a stay no poll listed is
 * read only when its exit is the read's to count.
 */
function unlistedConclusions(
  unlisted: readonly { row: V2PullRequest; outcome: string; concludedAt: number }[],
  rows: readonly V2PullRequest[],
  previous: QueueFlow,
  after: number,
): UnlistedConclusion[] {
  const conclusions: UnlistedConclusion[] = [];
  if (unlisted.length === 0) return conclusions;
  const numbers = new Set(unlisted.map(({ row }) => row.number));
  const listedConclusions = new Map<number, number[]>();
  for (const other of rows) {
    if (!numbers.has(other.number) || !OUTCOMES.has(v1Value(other.queueEntry.state))) continue;
    const at = parseTimestampSeconds(other.queueEntry.stateChangedAt);
    if (at === undefined) continue;
    listedConclusions.set(other.number, [...(listedConclusions.get(other.number) ?? []), at]);
  }
  for (const { row, outcome, concludedAt } of unlisted) {
    if (row.id === undefined || row.id === '') continue;
    let start = after;
    for (const at of [
      previous.concludedReads?.lastConclusions.get(row.number) ?? -Infinity,
      ...(listedConclusions.get(row.number) ?? []),
    ]) {
      if (at < concludedAt) start = Math.max(start, at);
    }
    const counted = lastExit(unpackStay(previous.exitStays?.stays.get(row.number)))?.leftAt;
    if (counted !== undefined) {
      // This conclusion, as its event (or a poll) placed it: its history may have been read.
      if (Math.abs(counted - concludedAt) <= SAME_FAILURE_SECONDS) continue;
      if (counted < concludedAt) start = Math.max(start, counted);
    }
    conclusions.push({
      pullRequestId: row.id.toLowerCase(),
      prNumber: row.number,
      outcome,
      after: start,
      concludedAt,
    });
  }
  return conclusions;
}

/**
 * The reads after the read of `request`'s poll from `after` failed with `error`, its paging past
 * its bound (or its cursors repeating): asked again from there it would fail the same way at the
 * same cost on every poll, so the next read starts at the poll, less the window's slack. The exits
 * concluded before are not counted but as the polls see PRs leave: the departed PRs stay `retry`,
 * and count `unknown` once gone polling.staleAfterSeconds.
 */
function abandoned(
  request: V2ExitReadRequest,
  reads: ConcludedReads,
  after: number,
  error: V2PagingError,
): ConcludedReads {
  const { queue, current } = request;
  const countFrom = Math.max(reads.countFrom, current.takenAt - CONCLUDED_WINDOW_SLACK_SECONDS);
  request.logger.warn(
    {
      repo: queue.repo,
      branch: queue.branch,
      prs: request.prNumbers.length,
      uncountedSeconds: countFrom - after,
    },
    `concluded entries from ${isoTime(after)} to ${isoTime(countFrom)} are not counted (a PR ` +
      'the polls saw leave is looked up until gone polling.staleAfterSeconds, then counts ' +
      `\`unknown\`): their exit read failed (${error.message}), and the next read starts at ` +
      isoTime(countFrom),
  );
  return { ...reads, countFrom, abandonedAt: current.takenAt };
}

/**
 * Whether PR `number`, which a read did not list, may have concluded in a window a read gave up
 * (abandonedAt): the polls last saw it before that read, and no read reaches back that far.
 */
function concludedInWindowGivenUp(
  previous: QueueFlow,
  number: number,
  abandonedAt: number | undefined,
): boolean {
  if (abandonedAt === undefined) return false;
  const seen = previous.tracked.get(number) ?? previous.departed.get(number);
  return seen !== undefined && seen.lastSeenAt < abandonedAt;
}

/** Whether a PR the previous poll saw in another state is in `not_ready`, where a stay begins. */
function beganStayAgain(previous: QueueFlow, current: MergeQueueSnapshot): boolean {
  return current.pullRequests.some((pr) => {
    const seen = previous.tracked.get(pr.number);
    return pr.state === 'not_ready' && seen !== undefined && seen.state !== 'not_ready';
  });
}
