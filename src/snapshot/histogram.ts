// Histogram data as plain immutable values, so a ledger can carry it from poll to poll and the
// metrics layer can render it without prom-client ever seeing an observation.

/**
 * Upper bounds, in seconds, for time spent in a merge queue or in one of its states: polls are
 * about 30s apart, so nothing finer than a minute is measurable, and a PR waiting longer than a
 * day is stuck whatever the exact figure.
 */
export const FLOW_BUCKETS_SECONDS: readonly number[] = [
  60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 14_400, 28_800, 86_400,
];

/** Observations per bucket (not cumulative; the last entry is above every bound), their sum and count. */
export interface HistogramCounts {
  readonly buckets: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/** A histogram without observations. */
export function emptyHistogram(): HistogramCounts {
  return { buckets: new Array<number>(FLOW_BUCKETS_SECONDS.length + 1).fill(0), sum: 0, count: 0 };
}

/** A new histogram with one more observation; a negative or non-finite value counts as 0. */
export function observe(histogram: HistogramCounts, value: number): HistogramCounts {
  const seconds = Number.isFinite(value) && value > 0 ? value : 0;
  const index = FLOW_BUCKETS_SECONDS.findIndex((bound) => seconds <= bound);
  const slot = index < 0 ? FLOW_BUCKETS_SECONDS.length : index;
  return {
    buckets: histogram.buckets.map((count, at) => (at === slot ? count + 1 : count)),
    sum: histogram.sum + seconds,
    count: histogram.count + 1,
  };
}

/** Cumulative counts per bound, as Prometheus `_bucket{le}` series, `+Inf` last. */
export function cumulativeBuckets(
  histogram: HistogramCounts,
): { le: number | '+Inf'; count: number }[] {
  let running = 0;
  return histogram.buckets.map((count, at) => {
    running += count;
    return { le: FLOW_BUCKETS_SECONDS[at] ?? '+Inf', count: running };
  });
}
