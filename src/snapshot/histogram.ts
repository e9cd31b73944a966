// Histogram data as plain immutable values, so a ledger can carry it from poll to poll and the
// metrics layer can render it without prom-client ever seeing an observation.

/**
 * Upper bounds, in seconds, for time spent in a merge queue or in one of its states: polls are
 * about 30s apart and a PR leaves most states within minutes, so five minutes is the first bound
 * worth a series, and a PR waiting longer than a day is stuck whatever the exact figure. From five
 * minutes to four hours each bound is at most twice the one before, enough for a p90; each bound
 * is a series per outcome or state of every queue (docs/metrics.md#what-a-queue-costs).
 */
export const FLOW_BUCKETS_SECONDS: readonly number[] = [
  300, 600, 1200, 1800, 3600, 7200, 14_400, 86_400,
];

/**
 * The observation an OpenMetrics exemplar names: which pull request it was (`{pr="123"}`), its
 * value, and when it happened, so a dashboard can go from an outlier to the pull request.
 */
export interface Exemplar {
  readonly pullRequest: number;
  /** The observed value, as its bucket counted it. */
  readonly value: number;
  /** Unix seconds of the event observed (an exit, the end of an attempt), not of the poll. */
  readonly timestampSeconds: number;
}

/** Numbers per bucket in `HistogramCounts.exemplars`: the pull request, the value, the time. */
const EXEMPLAR_STRIDE = 3;

/** Observations per bucket (not cumulative; the last entry is above every bound), their sum and count. */
export interface HistogramCounts {
  readonly buckets: readonly number[];
  readonly sum: number;
  readonly count: number;
  /** The buckets' upper bounds, when they are not FLOW_BUCKETS_SECONDS. */
  readonly bounds?: readonly number[];
  /**
   * Per bucket, the exemplar of its latest observation that named one, as EXEMPLAR_STRIDE numbers
   * (pull request, value, timestamp; NaN before any): one flat array of doubles rather than an
   * object, a label map and a string per exemplar, the smallest a histogram can hold them in
   * (docs/metrics.md#exemplars). Absent until an observation names one; read it with exemplarAt.
   */
  readonly exemplars?: readonly number[];
}

/** A histogram without observations, with FLOW_BUCKETS_SECONDS unless other `bounds` are given. */
export function emptyHistogram(bounds: readonly number[] = FLOW_BUCKETS_SECONDS): HistogramCounts {
  return {
    buckets: new Array<number>(bounds.length + 1).fill(0),
    sum: 0,
    count: 0,
    ...(bounds === FLOW_BUCKETS_SECONDS ? {} : { bounds }),
  };
}

/**
 * The largest value observed: a year of seconds (a batch is far smaller). A row that says more is
 * a bad one, and summing 10^308 would leave `_sum` at +Inf for good.
 */
export const MAX_OBSERVATION = 366 * 86_400;

/**
 * A new histogram with one more observation; a negative or non-finite value counts as 0, one past
 * MAX_OBSERVATION as that. With the
 * pull request it was `by` (and when it happened), the observation becomes its bucket's exemplar
 * unless the bucket's exemplar happened later: observations arrive out of order, and Prometheus
 * drops an exemplar older than the one it holds.
 */
export function observe(
  histogram: HistogramCounts,
  value: number,
  by?: Omit<Exemplar, 'value'>,
): HistogramCounts {
  const bounds = histogram.bounds ?? FLOW_BUCKETS_SECONDS;
  const seconds = Number.isFinite(value) && value > 0 ? Math.min(value, MAX_OBSERVATION) : 0;
  const index = bounds.findIndex((bound) => seconds <= bound);
  const slot = index < 0 ? bounds.length : index;
  const observed = {
    ...histogram,
    buckets: histogram.buckets.map((count, at) => (at === slot ? count + 1 : count)),
    sum: histogram.sum + seconds,
    count: histogram.count + 1,
  };
  const at = slot * EXEMPLAR_STRIDE;
  // NaN (none held) is never later.
  if (by === undefined || (histogram.exemplars?.[at + 2] ?? Number.NaN) > by.timestampSeconds) {
    return observed;
  }
  const exemplars =
    histogram.exemplars?.slice() ??
    new Array<number>(histogram.buckets.length * EXEMPLAR_STRIDE).fill(Number.NaN);
  exemplars[at] = by.pullRequest;
  exemplars[at + 1] = seconds;
  exemplars[at + 2] = by.timestampSeconds;
  return { ...observed, exemplars };
}

/** The exemplar of bucket `slot` (as in `buckets`), if it has one. */
export function exemplarAt(histogram: HistogramCounts, slot: number): Exemplar | undefined {
  const at = slot * EXEMPLAR_STRIDE;
  const pullRequest = histogram.exemplars?.[at] ?? Number.NaN;
  if (Number.isNaN(pullRequest)) return undefined;
  return {
    pullRequest,
    value: histogram.exemplars?.[at + 1] ?? Number.NaN,
    timestampSeconds: histogram.exemplars?.[at + 2] ?? Number.NaN,
  };
}

/** Cumulative counts per bound, as Prometheus `_bucket{le}` series, `+Inf` last. */
export function cumulativeBuckets(
  histogram: HistogramCounts,
): { le: number | '+Inf'; count: number }[] {
  const bounds = histogram.bounds ?? FLOW_BUCKETS_SECONDS;
  let running = 0;
  return histogram.buckets.map((count, at) => {
    running += count;
    return { le: bounds[at] ?? '+Inf', count: running };
  });
}
