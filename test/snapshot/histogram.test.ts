// A histogram keeps, per bucket, the exemplar of the observation that happened last, as
// client_golang does (OpenMetrics 1.0: "A bucket MUST NOT have more than one exemplar").
import { describe, expect, it } from 'vitest';
import { emptyHistogram, exemplarsSince, observe } from '../../src/snapshot/histogram.js';

/** Bounds 60, 300, 900 and +Inf: 754 s lands in the third bucket (index 2). */
const BOUNDS = [60, 300, 900];

function by(pr: number, timestampSeconds: number) {
  return { labels: { pr: String(pr) }, timestampSeconds };
}

describe('observe with an exemplar', () => {
  it('keeps it on the bucket the value lands in, with the value observed', () => {
    const histogram = observe(emptyHistogram(BOUNDS), 754, by(123, 1_732_790_000));
    expect(histogram.buckets).toEqual([0, 0, 1, 0]);
    expect(histogram.exemplars).toEqual([
      undefined,
      undefined,
      { labels: { pr: '123' }, value: 754, timestampSeconds: 1_732_790_000 },
      undefined,
    ]);
  });

  it('keeps the one that happened last, whatever the order they are observed in', () => {
    const later = observe(emptyHistogram(BOUNDS), 754, by(101, 1_000_010));
    // 104 left 5 s before 101 but is observed after it (a late read): 101 stays.
    const lateRead = observe(later, 787, by(104, 1_000_005));
    expect(lateRead.exemplars?.[2]).toEqual({
      labels: { pr: '101' },
      value: 754,
      timestampSeconds: 1_000_010,
    });
    expect(lateRead.buckets).toEqual([0, 0, 2, 0]);
    const newer = observe(lateRead, 800, by(106, 1_000_020));
    expect(newer.exemplars?.[2]).toEqual({
      labels: { pr: '106' },
      value: 800,
      timestampSeconds: 1_000_020,
    });
  });

  it('holds at most one per bucket however many observations come', () => {
    let histogram = emptyHistogram(BOUNDS);
    for (let pr = 1; pr <= 100; pr++) histogram = observe(histogram, pr * 20, by(pr, pr));
    expect(histogram.exemplars).toHaveLength(4);
    // 60 s is pr 3's, 300 s pr 15's, 900 s pr 45's, and above every bound pr 100's (2000 s).
    expect(histogram.exemplars?.map((exemplar) => exemplar?.labels.pr)).toEqual([
      '3',
      '15',
      '45',
      '100',
    ]);
  });

  it('puts a negative value, counted as 0, in the first bucket with value 0', () => {
    const histogram = observe(emptyHistogram(BOUNDS), -5, by(9, 1));
    expect(histogram.exemplars?.[0]).toEqual({
      labels: { pr: '9' },
      value: 0,
      timestampSeconds: 1,
    });
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
    expect(histogram.exemplars).toEqual(withOne.exemplars);
    expect(histogram.buckets).toEqual([0, 0, 2, 0]);
  });
});

describe('exemplarsSince', () => {
  const histogram = observe(observe(emptyHistogram(BOUNDS), 30, by(1, 1_000)), 754, by(2, 2_000));

  it('drops the exemplars that happened before the time, and keeps every count', () => {
    const recent = exemplarsSince(histogram, 1_001);
    expect(recent.buckets).toEqual([1, 0, 1, 0]);
    expect(recent.exemplars?.map((exemplar) => exemplar?.labels.pr)).toEqual([
      undefined,
      undefined,
      '2',
      undefined,
    ]);
  });

  it('keeps one that happened at the time, and returns the histogram itself when none is older', () => {
    expect(exemplarsSince(histogram, 1_000)).toBe(histogram);
  });
});
