// A merge queue's testing attempts from API v2's testing results: read on the polls that see a pull
// request leave testing or the queue, each read continuing from the last, so every result counts
// once and none from before the exporter started.
import type { Logger } from '../log/logger.js';
import { emptyHistogram, observe } from '../snapshot/histogram.js';
import {
  MAX_REMEMBERED_FAILURES,
  OTHER_OUTCOME,
  REPEATED_FAILURE_WINDOW_SECONDS,
  TESTING_DURATION_BUCKETS_SECONDS,
  UNCLASSIFIED_OUTCOME,
  durationSeriesKey,
  type TestingAttemptCounts,
  type TestingAttempts,
  type TestingDurationSeries,
  type TestingResultReads,
} from '../snapshot/testingAttemptTypes.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import type { ApiAnomalyKind } from '../trunk/observer.js';
import type { V2QueueRef } from '../trunk/v2Client.js';
import {
  V2_ENDPOINTS,
  V2_TESTING_OUTCOMES,
  type V2Endpoint,
  type V2TestingResult,
} from '../trunk/v2Schemas.js';
import { CLOCK_SLACK_SECONDS, parseTimestampSeconds } from './timestamps.js';
import type { ReadOptions } from './trunkReader.js';
import { PERIODIC_EXIT_READ_POLLS } from './v2ExitLookup.js';

/** The v2 read of testing results, and what it reports of them (implemented by TrunkV2Client). */
export interface V2TestingResultLister {
  listTestingResults(
    queue: V2QueueRef,
    since: string,
    options?: ReadOptions,
  ): Promise<V2TestingResult[]>;
  /** `count` anomalies of `kind` found across reads of `endpoint` (trunk_exporter_api_anomalies_total). */
  reportAnomaly(endpoint: V2Endpoint, kind: ApiAnomalyKind, count: number): void;
}

/**
 * How far back (Trunk's clock) a read reaches before the newest result the previous read saw: a
 * result Trunk records late with an earlier endedAt is still read; one seen before counts nothing.
 */
export const TESTING_READ_OVERLAP_SECONDS = 120;

/**
 * A read that succeeds has seen every result that ended up to this long before it (its time on the
 * exporter's clock, which may differ from Trunk's by less): the next read starts there at the
 * latest, so that a queue without testing never reaches the range Trunk keeps.
 */
export const TESTING_READ_HORIZON_SECONDS = 3600;

/** The longest range a read may ask for (`since` at most 45 days before `until`). */
export const TESTING_RESULTS_MAX_RANGE_SECONDS = 45 * 86_400;

interface TestingResultsReadRequest {
  readonly reader: V2TestingResultLister;
  readonly queue: V2QueueRef;
  /** The queue's testing attempts as of the previous successful poll; undefined at its first. */
  readonly previous: TestingAttempts | undefined;
  /** The snapshot of the previous successful poll. */
  readonly previousSnapshot: MergeQueueSnapshot | undefined;
  readonly current: MergeQueueSnapshot;
  readonly options: ReadOptions;
  readonly logger: Logger;
}

/**
 * The queue's testing attempts after this poll. Results are read when the poll saw a PR leave
 * testing (testingMayHaveEnded) or PERIODIC_EXIT_READ_POLLS polls after the last read; the queue's
 * first poll only starts counting. A failed read is logged and tried again at the next read's turn,
 * from where the last good one got to; it never fails the poll. Rejects only when the poll is being
 * aborted.
 */
export async function readTestingResults(
  request: TestingResultsReadRequest,
): Promise<TestingAttempts> {
  const { current, queue } = request;
  const batching = current.settings.batch;
  if (request.previous === undefined) return startTestingAttempts(current.takenAt, batching);
  const { reads } = request.previous;
  const counts = withKnownSeries(request.previous.counts, batching);
  const pollsSinceRead = reads.pollsSinceRead + 1;
  if (
    pollsSinceRead < PERIODIC_EXIT_READ_POLLS &&
    !testingMayHaveEnded(request.previousSnapshot, current)
  ) {
    return { ...request.previous, counts, reads: { ...reads, pollsSinceRead } };
  }
  const readAt = current.takenAt;
  const since = Math.max(
    reads.countFrom,
    readAt - TESTING_RESULTS_MAX_RANGE_SECONDS + TESTING_READ_HORIZON_SECONDS,
  );
  if (since > reads.countFrom) {
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, uncountedSeconds: since - reads.countFrom },
      `testing results from ${isoTime(reads.countFrom)} to ${isoTime(since)} are not counted: ` +
        'no read succeeded for longer than Trunk keeps them (45 days)',
    );
  }
  let rows: V2TestingResult[];
  try {
    rows = await request.reader.listTestingResults(queue, isoTime(since), request.options);
  } catch (error) {
    if (request.options.signal?.aborted === true) throw error;
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch },
      `testing results read failed, tried again at the next read: ${error instanceof Error ? error.message : String(error)}`,
    );
    return {
      ...request.previous,
      counts,
      reads: { ...reads, countFrom: since, pollsSinceRead: 0 },
    };
  }
  const { attempts, futureResults } = countTestingResults(
    { ...request.previous, counts, reads: { ...reads, countFrom: since } },
    rows,
    readAt,
  );
  if (futureResults > 0) {
    request.reader.reportAnomaly(V2_ENDPOINTS.listTestingResults, 'future_timestamp', futureResults);
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, results: futureResults },
      `testing results ended over ${String(CLOCK_SLACK_SECONDS)} s after the exporter's clock ` +
        `(${isoTime(readAt)}): counted once, and the next read starts before that (check both clocks)`,
    );
  }
  return attempts;
}

/** The testing attempts of a queue's first poll at `startAt`: none counted, counting from then. */
export function startTestingAttempts(startAt: number, batching: boolean): TestingAttempts {
  return {
    counts: withKnownSeries(
      { durations: new Map(), bisectionsStarted: 0, repeatedFailures: 0 },
      batching,
    ),
    reads: { countFrom: startAt, seen: new Map(), splits: new Map(), pollsSinceRead: 0 },
  };
}

/** What one read of testing results counted. */
export interface CountedTestingResults {
  readonly attempts: TestingAttempts;
  /** Results counted that ended over CLOCK_SLACK_SECONDS after the read (a future_timestamp anomaly). */
  readonly futureResults: number;
}

/**
 * The testing attempts after a read made at `readAt` (the exporter's clock) returned `rows`: each
 * result that ended at or after countFrom and that no read counted is counted once; rows without a
 * usable endedAt (counted by the client) cannot be placed and count nothing. The next read starts
 * 120 s before the newest end seen, but never after readAt + CLOCK_SLACK_SECONDS.
 */
export function countTestingResults(
  attempts: TestingAttempts,
  rows: readonly V2TestingResult[],
  readAt: number,
): CountedTestingResults {
  const { countFrom } = attempts.reads;
  const latestPlausible = readAt + CLOCK_SLACK_SECONDS;
  const seen = new Map(attempts.reads.seen);
  const splits = new Map(attempts.reads.splits);
  const durations = new Map(attempts.counts.durations);
  let { bisectionsStarted, repeatedFailures } = attempts.counts;
  const lastFailures = new Map(attempts.lastFailures);
  let newest = -Infinity;
  let futureResults = 0;
  for (const row of rows) {
    const endedAt = parseTimestampSeconds(row.endedAt);
    if (endedAt === undefined) continue;
    newest = Math.max(newest, Math.min(endedAt, latestPlausible));
    const key = resultKey(row, endedAt);
    if (endedAt < countFrom || seen.has(key)) continue;
    seen.set(key, endedAt);
    if (endedAt > latestPlausible) futureResults += 1;
    const outcome = outcomeLabel(row.outcome);
    const seriesKey = durationSeriesKey(outcome, row.isBisection);
    const series: TestingDurationSeries = durations.get(seriesKey) ?? {
      outcome,
      bisection: row.isBisection,
      histogram: emptyHistogram(TESTING_DURATION_BUCKETS_SECONDS),
    };
    durations.set(seriesKey, {
      ...series,
      histogram: observe(series.histogram, row.testingDurationMs / 1000),
    });
    if (row.startedBisection) {
      const split = splitKey(row, endedAt);
      if (!splits.has(split)) bisectionsStarted += 1;
      splits.set(split, Math.max(endedAt, splits.get(split) ?? endedAt));
    } else if (outcome === 'failed') {
      // An eviction: the run failed and split no batch. Again within the window: a loop.
      const before = lastFailures.get(row.pullRequestNumber);
      if (before !== undefined && Math.abs(endedAt - before) <= REPEATED_FAILURE_WINDOW_SECONDS) {
        repeatedFailures += 1;
      }
      lastFailures.set(row.pullRequestNumber, Math.max(endedAt, before ?? endedAt));
    }
  }
  const next = Math.max(
    countFrom,
    newest - TESTING_READ_OVERLAP_SECONDS,
    readAt - TESTING_READ_HORIZON_SECONDS,
  );
  forgetBefore(seen, next);
  forgetBefore(splits, next);
  const reads: TestingResultReads = { countFrom: next, seen, splits, pollsSinceRead: 0 };
  return {
    attempts: {
      counts: { durations, bisectionsStarted, repeatedFailures },
      reads,
      lastFailures: recentFailures(lastFailures, readAt),
    },
    futureResults,
  };
}

/** Drops what ended before `countFrom`: a row that ended then is not counted by a later read. */
function forgetBefore(endings: Map<string, number>, countFrom: number): void {
  for (const [key, endedAt] of endings) if (endedAt < countFrom) endings.delete(key);
}

/** The failures still within the window of `now`, at most MAX_REMEMBERED_FAILURES, the latest. */
function recentFailures(failures: Map<number, number>, now: number): Map<number, number> {
  for (const [number, at] of failures) {
    if (at < now - REPEATED_FAILURE_WINDOW_SECONDS) failures.delete(number);
  }
  if (failures.size <= MAX_REMEMBERED_FAILURES) return failures;
  const latest = [...failures].sort(([, a], [, b]) => b - a);
  return new Map(latest.slice(0, MAX_REMEMBERED_FAILURES));
}

/**
 * One attempt of one PR: a batched run has a row per PR, a restart a new endedAt, and the run id
 * (where Trunk has one) and isBisection keep apart two attempts of one PR that end together.
 * Outcome, duration and entryConclusion are left out: a row Trunk fills in later is the same
 * attempt. endedAt as parsed, so that `…:11Z` and `…:11.000Z` are one instant.
 */
function resultKey(row: V2TestingResult, endedAt: number): string {
  const endedAtMs = Math.round(endedAt * 1000);
  return `${String(row.pullRequestNumber)}@${String(endedAtMs)}/${row.verificationRunId ?? ''}/${String(row.isBisection)}`;
}

/**
 * The split a row with startedBisection belongs to. A batched run "appears once per pull request it
 * tested", each row with the run's `verificationRunId`; rows "recorded before runs were tracked on
 * them" have none, and the rows of one run end together, so their end (as an instant) is the run.
 */
function splitKey(row: V2TestingResult, endedAt: number): string {
  return row.verificationRunId === undefined
    ? `ended@${String(Math.round(endedAt * 1000))}`
    : `run:${row.verificationRunId}`;
}

const KNOWN_OUTCOMES: ReadonlySet<string> = new Set(V2_TESTING_OUTCOMES);

/** A closed label set: the documented outcomes, `unknown` without one, `other` for the rest. */
function outcomeLabel(outcome: string | undefined): string {
  if (outcome === undefined) return UNCLASSIFIED_OUTCOME;
  return KNOWN_OUTCOMES.has(outcome) ? outcome : OTHER_OUTCOME;
}

/**
 * The counts with every documented outcome present, so that the first attempt after a start is an
 * increase rate() sees: without bisections (isBisection false), and with them where the queue
 * batches, as only a batch is bisected (a bisection elsewhere appears when first counted).
 */
function withKnownSeries(counts: TestingAttemptCounts, batching: boolean): TestingAttemptCounts {
  const missing = [false, ...(batching ? [true] : [])].flatMap((bisection) =>
    V2_TESTING_OUTCOMES.filter(
      (outcome) => !counts.durations.has(durationSeriesKey(outcome, bisection)),
    ).map((outcome) => ({ outcome, bisection })),
  );
  if (missing.length === 0) return counts;
  const durations = new Map(counts.durations);
  for (const { outcome, bisection } of missing) {
    durations.set(durationSeriesKey(outcome, bisection), {
      outcome,
      bisection,
      histogram: emptyHistogram(TESTING_DURATION_BUCKETS_SECONDS),
    });
  }
  return { ...counts, durations };
}

/**
 * Whether a testing attempt may have ended since the previous poll: a PR it listed is gone (as
 * exits are read), or one it saw testing is in another state or has entered testing again since (a
 * restart between the two polls). Its result is then read at once, not PERIODIC_EXIT_READ_POLLS on.
 */
function testingMayHaveEnded(
  previous: MergeQueueSnapshot | undefined,
  current: MergeQueueSnapshot,
): boolean {
  if (previous === undefined) return false;
  const listed = new Map(current.pullRequests.map((pr) => [pr.number, pr]));
  return previous.pullRequests.some((pr) => {
    const now = listed.get(pr.number);
    return (
      now === undefined ||
      (pr.state === 'testing' &&
        (now.state !== 'testing' || now.stateChangedAt !== pr.stateChangedAt))
    );
  });
}

function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString();
}
