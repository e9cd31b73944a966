// A histogram keeps, per bucket, the exemplar of the observation that happened last, as
// client_golang does (OpenMetrics 1.0: "A bucket MUST NOT have more than one exemplar").
import { describe, expect, it } from 'vitest';
import {
  emptyHistogram,
  exemplarAt,
  observe,
  type HistogramCounts,
} from '../../src/snapshot/histogram.js';

/** Bounds 60, 300, 900 and +Inf: 754 s lands in the third bucket (index 2). */
const BOUNDS = [60, 300, 900];

function by(pullRequest: number, timestampSeconds: number) {
  return { pullRequest, timestampSeconds };
}

/** Each bucket's exemplar, undefined where it has none. */
function exemplarsOf(histogram: HistogramCounts) {
  return histogram.buckets.map((_count, slot) => exemplarAt(histogram, slot));
}

describe('observe with an exemplar', () => {
  it('keeps it on the bucket the value lands in, with the value observed', () => {
    const histogram = observe(emptyHistogram(BOUNDS), 754, by(123, 1_732_790_000));
    expect(histogram.buckets).toEqual([0, 0, 1, 0]);
    expect(exemplarsOf(histogram)).toEqual([
      undefined,
      undefined,
      { pullRequest: 123, value: 754, timestampSeconds: 1_732_790_000 },
      undefined,
    ]);
  });

  it('keeps the one that happened last, whatever the order they are observed in', () => {
    const later = observe(emptyHistogram(BOUNDS), 754, by(101, 1_000_010));
    // 104 left 5 s before 101 but is observed after it (a late read): 101 stays.
    const lateRead = observe(later, 787, by(104, 1_000_005));
    expect(exemplarAt(lateRead, 2)).toEqual({
      pullRequest: 101,
      value: 754,
      timestampSeconds: 1_000_010,
    });
    expect(lateRead.buckets).toEqual([0, 0, 2, 0]);
    const newer = observe(lateRead, 800, by(106, 1_000_020));
    expect(exemplarAt(newer, 2)).toEqual({
      pullRequest: 106,
      value: 800,
      timestampSeconds: 1_000_020,
    });
  });

  it('holds at most one per bucket however many observations come, in the same few numbers', () => {
    let histogram = emptyHistogram(BOUNDS);
    const first = observe(histogram, 20, by(1, 1));
    for (let pr = 1; pr <= 100; pr++) histogram = observe(histogram, pr * 20, by(pr, pr));
    // 60 s is pr 3's, 300 s pr 15's, 900 s pr 45's, and above every bound pr 100's (2000 s).
    expect(exemplarsOf(histogram).map((exemplar) => exemplar?.pullRequest)).toEqual([
      3, 15, 45, 100,
    ]);
    // Three numbers a bucket from the first exemplar on, however many were observed.
    expect(first.exemplars).toHaveLength(12);
    expect(histogram.exemplars).toHaveLength(12);
  });

  it('leaves the histogram it was given as it was', () => {
    const before = observe(emptyHistogram(BOUNDS), 754, by(101, 10));
    observe(before, 800, by(106, 20));
    expect(exemplarAt(before, 2)).toEqual({ pullRequest: 101, value: 754, timestampSeconds: 10 });
  });

  it('puts a negative value, counted as 0, in the first bucket with value 0', () => {
    const histogram = observe(emptyHistogram(BOUNDS), -5, by(9, 1));
    expect(exemplarAt(histogram, 0)).toEqual({ pullRequest: 9, value: 0, timestampSeconds: 1 });
  });
});

describe('observe without an exemplar', () => {
  it('leaves a histogram the shape it had: no exemplars field', () => {
    const histogram = observe(emptyHistogram(BOUNDS), 754);
    expect(histogram).toEqual({ buckets: [0, 0, 1, 0], sum: 754, count: 1, bounds: BOUNDS });
    expect('exemplars' in histogram).toBe(false);
  });

  it('keeps the exemplars the histogram has', () => {
    const withOne = observe(emptyHistogram(BOUNDS), 754, by(123, 10));
    const histogram = observe(withOne, 800);
    expect(exemplarsOf(histogram)).toEqual(exemplarsOf(withOne));
    expect(histogram.buckets).toEqual([0, 0, 2, 0]);
  });
});

describe('observe a value no row should give', () => {
  it('counts 10^308 as a year, so that the sum stays finite however many come', () => {
    let histogram = emptyHistogram(BOUNDS);
    for (let n = 0; n < 2_000; n++) histogram = observe(histogram, 1e308);
    expect(histogram.buckets).toEqual([0, 0, 0, 2_000]);
    expect(histogram.sum).toBe(2_000 * 366 * 86_400);
  });
});
