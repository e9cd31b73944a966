// Entries a read of concluded entries (API v2) lists in a live state. Trunk's definition says of
// `concludedAfter`: "That is a fact about the entry's history, not its current state: an entry that
// failed in the window and was later resubmitted still matches". Such a row says the PR's entry
// concluded in the window and is in the queue again: an exit, though no poll saw it leave. The row
// does not say how it ended (its state is the new stay's) nor when (its stateChangedAt is the new
// stay's too, so the conclusion came before it); Trunk's testing results do, in `entryConclusion`:
// "How the queue entry this testing belonged to ended. A pull request that fails and is
// resubmitted has a new entry." So such an exit takes the outcome of its PR's latest result that
// has one, read once for the read that found it, and is `unknown` when no result tells.
import { lastExitTime } from '../../flow/exitStays.js';
import type { Logger } from '../../log/logger.js';
import {
  EXIT_OUTCOMES,
  type ConcludedExit,
  type ExitLookup,
  type ExitOutcome,
  type QueueFlow,
  type Resubmission,
  type TrackedPullRequest,
} from '../../snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import type { TrunkV2Client } from '../../trunk/v2Client.js';
import type { V2QueueRef } from '../../trunk/v2Requests.js';
import type { V2PullRequest, V2TestingResult } from '../../trunk/v2Schemas.js';
import { v1Value } from '../../trunk/v2Vocabulary.js';
import { POLL_JITTER_RATIO } from '../scheduler.js';
import { CLOCK_SLACK_SECONDS } from '../../trunk/timestamps.js';
import { TIMESTAMP_RESOLUTION_SECONDS, isoTime, parseTimestampSeconds } from '../timestamps.js';
import type { ReadOptions } from '../readOptions.js';
import { earliestTestingSince } from './v2TestingResults.js';

/**
 * How long before a read's window its resubmitted entries' last testing may have ended: the
 * testing that ended an entry ends shortly before it concludes, and the conclusion lies in the
 * window. Older testing is not read for them (their outcome is then `unknown`).
 */
export const RESUBMISSION_TESTING_LOOKBACK_SECONDS = 3600;

/** The state every stay of a PR in a queue begins in: "the oldest `notReady` transition of the trip". */
const TRIP_START_STATE = 'not_ready';

const OUTCOMES: ReadonlySet<string> = new Set(EXIT_OUTCOMES);

interface ResubmissionRequest {
  readonly reader: Pick<TrunkV2Client, 'listTestingResults'>;
  readonly queue: V2QueueRef;
  /** The ledger as of the previous successful poll. */
  readonly previous: QueueFlow;
  readonly current: MergeQueueSnapshot;
  readonly intervalSeconds: number;
  /** The departed PRs whose final state is wanted. */
  readonly wanted: ReadonlySet<number>;
  /** Every PR the poll saw depart: those not wanted are their events' to count. */
  readonly departed: ReadonlySet<number>;
  /** The start of the read's window (`concludedAfter`, unix seconds). */
  readonly after: number;
  /**
   * ConcludedReads.countFrom before the read: a conclusion before it was a previous read's, or came
   * before the queue's ledger began; a read's window reaches further back for a departure.
   */
  readonly countFrom: number;
  /** ConcludedReads.lastConclusions, with the read's concluded rows. */
  readonly lastConclusions: ReadonlyMap<number, number>;
  /** The read's rows whose entry is not in a final state. */
  readonly rows: readonly V2PullRequest[];
  readonly options: ReadOptions;
  readonly logger: Logger;
}

/** What a read's resubmitted entries add to the exits, by who counts each. */
export interface ResubmittedExits {
  /** Departed PRs back in the queue since the poll: their exit, as a lookup's answer. */
  readonly lookups: ReadonlyMap<number, ExitLookup>;
  /** PRs the polls track: their stay ends, a new one begins (queueDiff.ts). */
  readonly resubmissions: ReadonlyMap<number, Resubmission>;
  /** PRs no poll saw before: an exit that came and went, like a concluded entry no poll saw. */
  readonly concluded: readonly ConcludedExit[];
  /** When the testing that ended each exit above (with an outcome) ended, on Trunk's clock. */
  readonly endings: ReadonlyMap<number, number>;
}

/**
 * The exits of the read's resubmitted entries, each the first time a read lists it. Reads the
 * testing results once when there are any: they tell each exit's outcome, and whether an entry
 * whose conclusion is known since the window's start concluded again after it (isNewConclusion).
 * A failed read of the results leaves the new exits `unknown`. Rejects only when the poll is being
 * aborted.
 */
export async function resubmittedExits(request: ResubmissionRequest): Promise<ResubmittedExits> {
  const { previous, current, after, intervalSeconds } = request;
  const lookups = new Map<number, ExitLookup>();
  const resubmissions = new Map<number, Resubmission>();
  const concluded: ConcludedExit[] = [];
  const endings = new Map<number, number>();
  const listedRows = request.rows.filter(
    (row) =>
      request.wanted.has(row.number) ||
      (!request.departed.has(row.number) &&
        !concludedBefore(row, request.countFrom) &&
        !inStateSinceFirstPoll(row, previous.tracked.get(row.number))),
  );
  if (listedRows.length === 0) return { lookups, resubmissions, concluded, endings };
  const results = endingsByPullRequest(await testingResults(request, listedRows.length));
  const rows = listedRows.filter(
    (row) =>
      isNewConclusion(request, results, row.number) &&
      (request.wanted.has(row.number) || !endedBeforeCounting(request, results, row.number)),
  );
  const listed = new Map(current.pullRequests.map((pr) => [pr.number, pr]));
  for (const row of rows) {
    const { number } = row;
    // Its new stay's state began at stateChangedAt: the conclusion came before it, after `after`.
    const since = parseTimestampSeconds(row.queueEntry.stateChangedAt) ?? current.takenAt;
    const tracked = previous.tracked.get(number);
    const stay = tracked ?? previous.departed.get(number);
    // The testing of the stay that ended: after it began, before the new one's state.
    const ending = entryEnding(
      results,
      number,
      (stay?.enteredAt ?? after) - intervalSeconds,
      since + intervalSeconds,
    );
    const outcome = ending?.outcome ?? 'unknown';
    if (ending !== undefined) endings.set(number, ending.endedAt);
    const pr = listed.get(number);
    if (request.wanted.has(number)) {
      lookups.set(number, { outcome, leftAt: earliest(after, ending, since, current.takenAt) });
    } else if (tracked !== undefined && pr !== undefined) {
      // The state the previous poll saw was the ended stay's when that poll's read (which saw no
      // such conclusion) came after it began, or when this poll sees the PR begin a stay again.
      const readThen = (previous.concludedReads?.pollsSinceRead ?? 1) === 0;
      const fromPolledState =
        readThen || (pr.state === TRIP_START_STATE && tracked.state !== TRIP_START_STATE);
      const floor = fromPolledState ? Math.max(after, tracked.stateSince) : after;
      const leftAt = earliest(floor, ending, since, current.takenAt);
      resubmissions.set(number, { outcome, leftAt, fromPolledState });
    } else {
      const leftAt = earliest(after, ending, since, current.takenAt);
      const createdAt = parseTimestampSeconds(row.queueEntry.createdAt);
      const enteredAt = entryTime(createdAt, leftAt, previous.lastPollAt, intervalSeconds);
      concluded.push({ prNumber: number, outcome, enteredAt, leftAt });
    }
  }
  return { lookups, resubmissions, concluded, endings };
}

/**
 * Whether a row listed resubmitted stands for a conclusion not counted yet: its PR's latest
 * conclusion known came before the window, or its testing ended again after it. The reads know
 * that conclusion on Trunk's clock, as the results are dated, so the one counted is never taken
 * for a later one however far Trunk's clock is from the exporter's. One they did not see (an
 * event's, or one counted `unknown`) is the ledger's last exit, on the exporter's clock, give or
 * take an interval.
 */
function isNewConclusion(
  request: ResubmissionRequest,
  results: EndingsByPullRequest,
  number: number,
): boolean {
  const counted = lastExitTime(request.previous, number);
  const known =
    request.lastConclusions.get(number) ??
    (counted === undefined ? undefined : counted + request.intervalSeconds);
  if (known === undefined || known < request.after) return true;
  return entryEnding(results, number, known + TIMESTAMP_RESOLUTION_SECONDS, Infinity) !== undefined;
}

/**
 * Whether a read that reaches back past `countFrom` (for a departure) lists a PR whose latest
 * testing result that says how its entry ended ended over the clocks' slack before countFrom: the
 * conclusion the row stands for is that one, from before where the reads count (before the start,
 * say, though the entry has moved since), not a later one Trunk did not test.
 */
function endedBeforeCounting(
  request: ResubmissionRequest,
  results: EndingsByPullRequest,
  number: number,
): boolean {
  if (request.after >= request.countFrom) return false;
  const latest = entryEnding(results, number, -Infinity, Infinity);
  return latest !== undefined && latest.endedAt < request.countFrom - CLOCK_SLACK_SECONDS;
}

/**
 * Whether a row listed resubmitted concluded before `countFrom`: its new stay's state began over the
 * clock slack before it (countFrom is the exporter's clock until a read moves it), and the
 * conclusion before that. Such a conclusion was a previous read's, or came before the queue's
 * ledger began: a read's window reaches further back for a departure, and an exporter that starts
 * counts nothing its queues did before.
 */
function concludedBefore(row: V2PullRequest, countFrom: number): boolean {
  const since = parseTimestampSeconds(row.queueEntry.stateChangedAt);
  return since !== undefined && since < countFrom - CLOCK_SLACK_SECONDS;
}

/**
 * Whether a row listed resubmitted is in the state, since the same instant, that the ledger's first
 * poll listed its PR in: the stay it is part of began before that poll, and its conclusion before
 * the stay (the clocks' slack plays no part: both instants are Trunk's).
 */
function inStateSinceFirstPoll(
  row: V2PullRequest,
  tracked: TrackedPullRequest | undefined,
): boolean {
  if (tracked?.sinceFirstPoll !== true) return false;
  const since = parseTimestampSeconds(row.queueEntry.stateChangedAt);
  return v1Value(row.queueEntry.state) === tracked.state && since === tracked.stateSince;
}

/** The earliest a conclusion can be: after `floor` and the testing that ended it, before `until`. */
function earliest(
  floor: number,
  ending: EntryEnding | undefined,
  since: number,
  now: number,
): number {
  return Math.min(Math.max(floor, ending?.endedAt ?? floor), since, now);
}

interface EntryEnding {
  readonly outcome: ExitOutcome;
  /** When the testing that tells it ended. */
  readonly endedAt: number;
}

/**
 * The queue's testing results that ended from a little before the read's window on; none when the
 * read fails (logged: the exits are then `unknown`).
 */
async function testingResults(
  request: ResubmissionRequest,
  entries: number,
): Promise<readonly V2TestingResult[]> {
  const { queue } = request;
  // Never past the 45 days Trunk allows: a PR that waited longer may have widened the window.
  const since = Math.max(
    request.after - RESUBMISSION_TESTING_LOOKBACK_SECONDS,
    earliestTestingSince(request.current.takenAt),
  );
  try {
    return await request.reader.listTestingResults(queue, isoTime(since), request.options);
  } catch (error) {
    if (request.options.signal?.aborted === true) throw error;
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, prs: entries },
      `testing results for resubmitted entries failed, their exits count as unknown: ${error instanceof Error ? error.message : String(error)}`,
    );
    return [];
  }
}

/** Per pull request, the endings its testing results tell (each dated, with an entry conclusion). */
type EndingsByPullRequest = ReadonlyMap<number, readonly EntryEnding[]>;

/**
 * The results that tell how an entry ended, by pull request: parsed once, so that each row asks
 * only its own pull request's (a read may list thousands of rows and results).
 */
function endingsByPullRequest(results: readonly V2TestingResult[]): EndingsByPullRequest {
  const byPullRequest = new Map<number, EntryEnding[]>();
  for (const result of results) {
    const endedAt = parseTimestampSeconds(result.endedAt);
    const outcome = result.entryConclusion;
    if (endedAt === undefined || outcome === undefined || !OUTCOMES.has(outcome)) continue;
    const ending = { outcome: outcome as ExitOutcome, endedAt };
    const endings = byPullRequest.get(result.pullRequestNumber);
    if (endings === undefined) byPullRequest.set(result.pullRequestNumber, [ending]);
    else endings.push(ending);
  }
  return byPullRequest;
}

/** How the latest result of PR `number` that ended in [from, until] and says so ended its entry. */
function entryEnding(
  results: EndingsByPullRequest,
  number: number,
  from: number,
  until: number,
): EntryEnding | undefined {
  let latest: EntryEnding | undefined;
  for (const ending of results.get(number) ?? []) {
    if (ending.endedAt < from || ending.endedAt > until) continue;
    if (latest === undefined || ending.endedAt > latest.endedAt) latest = ending;
  }
  return latest;
}

/**
 * When an entry no poll saw entered the queue. Its `createdAt` is its first submission: an entry
 * is reused when its PR is submitted again, so a createdAt from before the last poll that would
 * have seen the entry (the previous poll, or for an older conclusion about one interval before it,
 * with the schedule's jitter) is a former submission's, and that poll's time is taken instead.
 */
export function entryTime(
  createdAt: number | undefined,
  leftAt: number,
  previousPollAt: number,
  intervalSeconds: number,
): number {
  const notBefore =
    leftAt > previousPollAt ? previousPollAt : leftAt - intervalSeconds * (1 + POLL_JITTER_RATIO);
  return Math.min(Math.max(createdAt ?? notBefore, notBefore), leftAt);
}
