// What the exporter has counted of a merge queue's testing attempts (API v2's testing results) and
// where its reads of them have got to. Kept in the store beside the queue's flow ledger, so the
// counts outlive polls and reloads as the flow counts do; every value is immutable.
import { emptyHistogram, type HistogramCounts } from './histogram.js';

/**
 * Upper bounds, in seconds, of trunk_merge_queue_testing_duration_seconds: a CI run in a merge
 * queue takes minutes to hours, and one past four hours has hit a testing timeout. From five
 * minutes on each bound is twice the one before, enough for a p90; an attempt cut short within a
 * minute is a restart, whatever its exact length. Each bound is a series per outcome × bisection
 * of every queue (docs/metrics.md#what-a-queue-costs), and of its runs' status × bisection.
 */
export const TESTING_DURATION_BUCKETS_SECONDS: readonly number[] = [
  60, 300, 600, 1200, 1800, 3600, 7200, 14_400,
];

/** The `outcome` of an attempt Trunk gave no classification. */
export const UNCLASSIFIED_OUTCOME = 'unknown';

/** The `outcome` of an attempt whose outcome Trunk documents no label for. */
export const OTHER_OUTCOME = 'other';

/** One series of the testing-duration histogram. */
export interface TestingDurationSeries {
  /** A documented outcome, UNCLASSIFIED_OUTCOME or OTHER_OUTCOME. */
  readonly outcome: string;
  readonly bisection: boolean;
  readonly histogram: HistogramCounts;
}

/** A queue's testing attempts counted since the exporter started watching it. */
export interface TestingAttemptCounts {
  /** Keyed by durationSeriesKey(), in the order the series began. */
  readonly durations: ReadonlyMap<string, TestingDurationSeries>;
  /**
   * Batches split by a failed run (`startedBisection`): one per verification run, however many
   * pull requests it tested, or per end for rows without a run id (splitKey()).
   */
  readonly bisectionsStarted: number;
}

/**
 * Where a queue's reads of testing results have got to: each read continues from the last, so each
 * result counts once however the reads and their pages overlap.
 */
export interface TestingResultReads {
  /**
   * Unix seconds (Trunk's clock once a read saw a result): a result that ended at or after it and
   * that no read has seen is still to count; one that ended before it was counted or predates the
   * exporter.
   */
  readonly countFrom: number;
  /** Results that ended at or after countFrom and were counted, by identity, with their end. */
  readonly seen: ReadonlyMap<string, number>;
  /** Splits that ended at or after countFrom and were counted, by splitKey(), with their end. */
  readonly splits: ReadonlyMap<string, number>;
  /** Polls since the last read, whether it succeeded or not. */
  readonly pollsSinceRead: number;
}

/** A merge queue's testing attempts (API v2 only): what was counted, and how far reads got. */
export interface TestingAttempts {
  readonly counts: TestingAttemptCounts;
  readonly reads: TestingResultReads;
}

/** Map key of a duration series (of testing attempts, or of concluded runs): label and kind. */
export function durationSeriesKey(label: string, bisection: boolean): string {
  return `${label}\u0000${String(bisection)}`;
}

/**
 * `series` with a series at zero (an empty histogram of TESTING_DURATION_BUCKETS_SECONDS) for each
 * of `labels` it lacks, so that the first count after a start is an increase rate() sees: without
 * bisection, and with it where the queue batches, as only a batch is bisected (a bisection
 * elsewhere appears when first counted). `series` itself when it lacks none.
 */
export function withZeroSeries<S>(
  series: ReadonlyMap<string, S>,
  labels: readonly string[],
  batching: boolean,
  zero: (label: string, bisection: boolean, histogram: HistogramCounts) => S,
): ReadonlyMap<string, S> {
  const missing = [false, ...(batching ? [true] : [])].flatMap((bisection) =>
    labels
      .filter((label) => !series.has(durationSeriesKey(label, bisection)))
      .map((label) => ({ label, bisection })),
  );
  if (missing.length === 0) return series;
  const withZeros = new Map(series);
  for (const { label, bisection } of missing) {
    const histogram = emptyHistogram(TESTING_DURATION_BUCKETS_SECONDS);
    withZeros.set(durationSeriesKey(label, bisection), zero(label, bisection, histogram));
  }
  return withZeros;
}
