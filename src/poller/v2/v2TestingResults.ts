// A merge queue's testing attempts from API v2's testing results: what each read adds to them,
// each result counted once however the reads overlap, a split batch once however many rows it has.
import { forgetFarAhead } from '../../flow/recentTimes.js';
import { emptyHistogram, observe } from '../../snapshot/histogram.js';
import { NO_ENTRIES, orShared } from '../../snapshot/noEntries.js';
import {
  OTHER_OUTCOME,
  TESTING_DURATION_BUCKETS_SECONDS,
  UNCLASSIFIED_OUTCOME,
  durationSeriesKey,
  withZeroSeries,
  type TestingAttemptCounts,
  type TestingAttempts,
  type TestingDurationSeries,
  type TestingResultReads,
} from '../../snapshot/testingAttemptTypes.js';
import { CLOCK_SLACK_SECONDS, READ_OVERLAP_SECONDS } from '../../trunk/timestamps.js';
import { V2_TESTING_OUTCOMES, type V2TestingResult } from '../../trunk/v2Schemas.js';
import { parseTimestampSeconds } from '../timestamps.js';

/**
 * A read that succeeds has seen every result that ended up to this long before it (its time on the
 * exporter's clock, which may differ from Trunk's by less): the next read starts there at the
 * latest, so that a queue without testing never reaches the range Trunk keeps.
 */
export const TESTING_READ_HORIZON_SECONDS = 3600;

/** The longest range a read may ask for: `since` "at most 45 days before `until`". */
export const TESTING_RESULTS_MAX_RANGE_SECONDS = 45 * 86_400;

/**
 * The earliest `since` a read at `readAt` (the exporter's clock) may send: Trunk refuses a range
 * over 45 days, and its clock may run ahead of the exporter's by less than the horizon.
 */
export function earliestTestingSince(readAt: number): number {
  return readAt - TESTING_RESULTS_MAX_RANGE_SECONDS + TESTING_READ_HORIZON_SECONDS;
}

/** The testing attempts of a queue's first poll at `startAt`: none counted, counting from then. */
export function startTestingAttempts(startAt: number, batching: boolean): TestingAttempts {
  return {
    counts: withKnownSeries({ durations: NO_ENTRIES, bisectionsStarted: 0 }, batching),
    reads: { countFrom: startAt, seen: NO_ENTRIES, splits: NO_ENTRIES, pollsSinceRead: 0 },
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
  let { bisectionsStarted } = attempts.counts;
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
      histogram: observe(series.histogram, row.testingDurationMs / 1000, {
        pullRequest: row.pullRequestNumber,
        // Placed no later than the clock's slack: a bucket keeps its latest exemplar, and one
        // dated 2100 would be kept for good.
        timestampSeconds: Math.min(endedAt, latestPlausible),
      }),
    });
    if (row.startedBisection) {
      const split = splitKey(row, endedAt);
      if (!splits.has(split)) bisectionsStarted += 1;
      splits.set(split, Math.max(endedAt, splits.get(split) ?? endedAt));
    }
  }
  const next = Math.max(
    countFrom,
    newest - READ_OVERLAP_SECONDS,
    readAt - TESTING_READ_HORIZON_SECONDS,
  );
  forgetBefore(seen, next);
  forgetBefore(splits, next);
  forgetFarAhead(seen, latestPlausible);
  forgetFarAhead(splits, latestPlausible);
  const reads: TestingResultReads = {
    countFrom: next,
    seen: orShared(seen),
    splits: orShared(splits),
    pollsSinceRead: 0,
  };
  return { attempts: { counts: { durations, bisectionsStarted }, reads }, futureResults };
}

/** Drops what ended before `countFrom`: a row that ended then is not counted by a later read. */
function forgetBefore(endings: Map<string, number>, countFrom: number): void {
  for (const [key, endedAt] of endings) if (endedAt < countFrom) endings.delete(key);
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

/** The counts with every documented outcome's series present (withZeroSeries). */
export function withKnownSeries(
  counts: TestingAttemptCounts,
  batching: boolean,
): TestingAttemptCounts {
  const durations = withZeroSeries(
    counts.durations,
    V2_TESTING_OUTCOMES,
    batching,
    (outcome, bisection, histogram) => ({ outcome, bisection, histogram }),
  );
  return durations === counts.durations ? counts : { ...counts, durations };
}
