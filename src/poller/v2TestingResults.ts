// A merge queue's testing attempts from API v2's testing results: read on the polls that read the
// queue's exits, each read continuing from the last, so every result counts once and none from
// before the exporter started.
import type { Logger } from '../log/logger.js';
import { emptyHistogram, observe } from '../snapshot/histogram.js';
import {
  OTHER_OUTCOME,
  TESTING_DURATION_BUCKETS_SECONDS,
  UNCLASSIFIED_OUTCOME,
  durationSeriesKey,
  type TestingAttemptCounts,
  type TestingAttempts,
  type TestingDurationSeries,
  type TestingResultReads,
} from '../snapshot/testingAttemptTypes.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import type { V2QueueRef } from '../trunk/v2Client.js';
import { V2_TESTING_OUTCOMES, type V2TestingResult } from '../trunk/v2Schemas.js';
import { parseTimestampSeconds } from './timestamps.js';
import type { ReadOptions } from './trunkReader.js';
import { PERIODIC_EXIT_READ_POLLS } from './v2ExitLookup.js';

/** The v2 read of testing results (implemented by TrunkV2Client). */
export interface V2TestingResultLister {
  listTestingResults(
    queue: V2QueueRef,
    since: string,
    options?: ReadOptions,
  ): Promise<V2TestingResult[]>;
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
 * The queue's testing attempts after this poll. Results are read when the poll saw PRs leave the
 * queue or PERIODIC_EXIT_READ_POLLS polls after the last read, as exits are; the queue's first poll
 * only starts counting. A failed read is logged and tried again at the next read's turn, from where
 * the last good one got to; it never fails the poll. Rejects only when the poll is being aborted.
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
    !pullRequestsLeft(request.previousSnapshot, current)
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
  return countTestingResults(
    { ...request.previous, counts, reads: { ...reads, countFrom: since } },
    rows,
    readAt,
  );
}

/** The testing attempts of a queue's first poll at `startAt`: none counted, counting from then. */
export function startTestingAttempts(startAt: number, batching: boolean): TestingAttempts {
  return {
    counts: withKnownSeries({ durations: new Map(), bisectionsStarted: 0 }, batching),
    reads: { countFrom: startAt, seen: new Map(), pollsSinceRead: 0 },
  };
}

/**
 * The testing attempts after a read made at `readAt` (the exporter's clock) returned `rows`: each
 * result that ended at or after countFrom and that no read counted is counted once; rows without a
 * usable endedAt (counted by the client) cannot be placed and count nothing.
 */
export function countTestingResults(
  attempts: TestingAttempts,
  rows: readonly V2TestingResult[],
  readAt: number,
): TestingAttempts {
  const { countFrom } = attempts.reads;
  const seen = new Map(attempts.reads.seen);
  const durations = new Map(attempts.counts.durations);
  let { bisectionsStarted } = attempts.counts;
  let newest = -Infinity;
  for (const row of rows) {
    const endedAt = parseTimestampSeconds(row.endedAt);
    if (endedAt === undefined) continue;
    newest = Math.max(newest, endedAt);
    const key = resultKey(row, endedAt);
    if (endedAt < countFrom || seen.has(key)) continue;
    seen.set(key, endedAt);
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
    if (row.startedBisection) bisectionsStarted += 1;
  }
  const next = Math.max(
    countFrom,
    newest - TESTING_READ_OVERLAP_SECONDS,
    readAt - TESTING_READ_HORIZON_SECONDS,
  );
  for (const [key, endedAt] of seen) if (endedAt < next) seen.delete(key);
  const reads: TestingResultReads = { countFrom: next, seen, pollsSinceRead: 0 };
  return { counts: { durations, bisectionsStarted }, reads };
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

/** Whether a PR the previous poll listed is gone: the poll that reads exits reads results too. */
function pullRequestsLeft(
  previous: MergeQueueSnapshot | undefined,
  current: MergeQueueSnapshot,
): boolean {
  if (previous === undefined) return false;
  const listed = new Set(current.pullRequests.map((pr) => pr.number));
  return previous.pullRequests.some((pr) => !listed.has(pr.number));
}

function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString();
}
