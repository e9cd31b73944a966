// What the exporter has counted of a merge queue's verification runs (API v2) and where its reads
// of them have got to. Carried on the queue's snapshot from poll to poll; every value is immutable.
import type { HistogramCounts } from './histogram.js';
import type { TopLabelLimits, TopLabels } from './topLabelTypes.js';

/**
 * Upper bounds of trunk_merge_queue_batch_size: a run tests one pull request without batching ("an
 * entry cannot batch when this is `false`"), `batchingMinSize` is what the queue "prefers before
 * starting a run", a few at most, and a bisection halves a batch: doubling bounds tell those
 * apart, and a batch over 32 is an outlier whatever its size.
 */
export const BATCH_SIZE_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32];

/**
 * How a queue's check failures choose their `check` labels: the 20 names that failed runs most
 * often, of at most 100 remembered, a name forgotten after a week without a failure.
 */
export const CHECK_LABEL_LIMITS: TopLabelLimits = {
  named: 20,
  tallied: 100,
  forgetAfterSeconds: 7 * 86_400,
};

/** The `status` of a concluded run whose status Trunk documents no label for. */
export const UNKNOWN_RUN_STATUS = 'unknown';

/** Concluded runs of one status and kind: their duration histogram (its count is the runs). */
export interface ConcludedRunSeries {
  /** `succeeded`, `failed`, `cancelled` or UNKNOWN_RUN_STATUS. */
  readonly status: string;
  readonly bisection: boolean;
  readonly durations: HistogramCounts;
}

/** A run the last read saw in progress. */
export interface RunInProgress {
  /** Unix seconds, Trunk's clock. */
  readonly createdAt: number;
  readonly bisection: boolean;
  /** The pull requests it tests: one leaving testing may mean it concluded. */
  readonly pullRequests: readonly number[];
}

/** A queue's verification runs counted since the exporter started watching it. */
export interface VerificationRunCounts {
  /** Keyed by durationSeriesKey() (testingAttemptTypes.ts), in the order the series began. */
  readonly concluded: ReadonlyMap<string, ConcludedRunSeries>;
  /** Tested pull requests per concluded run, by whether it was a bisection run. */
  readonly batchSizes: ReadonlyMap<boolean, HistogramCounts>;
  /** Failed runs per required check that failed them, under the most frequent names. */
  readonly checkFailures: TopLabels;
}

/** Where a queue's reads of verification runs have got to. */
export interface VerificationRunReads {
  /** Unix seconds (the exporter's clock): runs that concluded before it predate the exporter. */
  readonly countFrom: number;
  /** The next read's `createdAfter`, unix seconds on Trunk's clock. */
  readonly createdAfter: number;
  /** Concluded runs created after createdAfter that were seen, by id, with their createdAt. */
  readonly seen: ReadonlyMap<string, number>;
  /** Runs the last good read saw in progress, by id. */
  readonly inProgress: ReadonlyMap<string, RunInProgress>;
  /** Unix seconds (the exporter's clock) of the last good read, or of the start before one. */
  readonly readAt: number;
  /** Set while the latest read failed: the next poll reads again. */
  readonly failed: boolean;
  /**
   * Whether the families are hidden: a read has failed for longer than staleAfterSeconds since
   * the last good one, so the in-progress runs are no longer known and the counts are missing runs.
   */
  readonly hidden: boolean;
}

/** A merge queue's verification runs (API v2 only): what was counted, and how far reads got. */
export interface VerificationRuns {
  readonly counts: VerificationRunCounts;
  readonly reads: VerificationRunReads;
}
