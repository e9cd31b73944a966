// What one read of testing results adds, from rows written by hand from Trunk's definition of
// `TestingResult`: the bisections started (one per split batch, not per row) and rows dated ahead
// of the exporter's clock. Each expected number is counted by hand from the rows above it.
import { describe, expect, it } from 'vitest';
import {
  countTestingResults,
  startTestingAttempts,
} from '../../../src/poller/v2/v2TestingResults.js';
import { exemplarAt } from '../../../src/snapshot/histogram.js';
import type { TestingAttempts } from '../../../src/snapshot/testingAttemptTypes.js';
import type { V2TestingResult } from '../../../src/trunk/v2Schemas.js';

/** The first poll's time: 2026-11-24T09:00:00Z. */
const START = Date.parse('2026-11-24T09:00:00Z') / 1000;

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** A failed row of `pr` that ended at `endedAt` after ten minutes, as Trunk sends it. */
function failed(pr: number, endedAt: number, extra: Partial<V2TestingResult>): V2TestingResult {
  return {
    pullRequestNumber: pr,
    endedAt: iso(endedAt),
    testingDurationMs: 600_000,
    outcome: 'failed',
    isBisection: false,
    startedBisection: false,
    ...extra,
  };
}

/** Count and sum of one testing-duration series. */
function series(attempts: TestingAttempts, outcome: string, bisection: boolean) {
  const found = [...attempts.counts.durations.values()].find(
    (each) => each.outcome === outcome && each.bisection === bisection,
  );
  return { count: found?.histogram.count ?? 0, sum: found?.histogram.sum ?? 0 };
}

describe('bisections started', () => {
  // startedBisection: "This failure caused the pull request's batch to be split. Can be true
  // together with `isBisection`, when a bisection step splits again." A batched run "appears once
  // per pull request it tested", each row with the run's verificationRunId.
  it('counts one per verification run that split its batch, however many PRs it tested and however many reads list it', () => {
    const split = { startedBisection: true };
    const first = countTestingResults(
      startTestingAttempts(START, true),
      // Run A tested PRs 1, 2 and 3 in one batch and failed; PR 3's row is not recorded yet.
      [
        failed(1, START + 60, { ...split, verificationRunId: 'run-A' }),
        failed(2, START + 60, { ...split, verificationRunId: 'run-A' }),
      ],
      START + 120,
    ).attempts;
    expect(first.counts.bisectionsStarted).toBe(1);

    const second = countTestingResults(
      first,
      [
        // The overlap lists run A's rows again, and PR 3's row recorded late.
        failed(1, START + 60, { ...split, verificationRunId: 'run-A' }),
        failed(2, START + 60, { ...split, verificationRunId: 'run-A' }),
        failed(3, START + 60, { ...split, verificationRunId: 'run-A' }),
        // Bisection step B tested PRs 1 and 2 together and failed: it splits again.
        failed(1, START + 150, { ...split, isBisection: true, verificationRunId: 'run-B' }),
        failed(2, START + 150, { ...split, isBisection: true, verificationRunId: 'run-B' }),
        // Bisection step C tested PR 3 alone and passed: no split.
        {
          ...failed(3, START + 150, { isBisection: true, verificationRunId: 'run-C' }),
          outcome: 'passed',
        },
      ],
      START + 180,
    ).attempts;

    // Run A and step B: two splits. Every row is one attempt of one PR.
    expect(second.counts.bisectionsStarted).toBe(2);
    expect(series(second, 'failed', false)).toEqual({ count: 3, sum: 1800 });
    expect(series(second, 'failed', true)).toEqual({ count: 2, sum: 1200 });
    expect(series(second, 'passed', true)).toEqual({ count: 1, sum: 600 });
  });

  // verificationRunId: "Absent on results recorded before runs were tracked on them." Such a run's
  // rows still end together ("a batched run appears once per pull request it tested", endedAt:
  // "When this stretch of testing ended"): one end, one batch.
  it('without a run id, counts the rows that split their batch at one end as one batch', () => {
    const split = { startedBisection: true };
    const first = countTestingResults(
      startTestingAttempts(START, true),
      [
        failed(4, START + 200, split),
        failed(5, START + 200, split),
        failed(6, START + 200, split),
        // Another batch, split a minute later.
        failed(7, START + 260, split),
        failed(8, START + 260, split),
      ],
      START + 300,
    ).attempts;
    expect(first.counts.bisectionsStarted).toBe(2);

    const second = countTestingResults(
      first,
      [
        failed(4, START + 200, split),
        // The first batch's fourth row, recorded late, its end spelled without milliseconds.
        failed(9, START + 200, { ...split, endedAt: iso(START + 200).replace('.000Z', 'Z') }),
        // A failure that split nothing.
        failed(10, START + 320, {}),
      ],
      START + 360,
    ).attempts;
    expect(second.counts.bisectionsStarted).toBe(2);
    expect(series(second, 'failed', false)).toEqual({ count: 7, sum: 4200 });
  });
});

describe('results dated ahead of the exporter', () => {
  it('counts a row dated more than 60 s after the read once, reports it, and starts the next read no later than the read', () => {
    const readAt = START + 600;
    // A minute ahead is within the two clocks' slack; a day ahead is not.
    const rows = [
      failed(1, readAt + 60, { verificationRunId: 'run-1' }),
      failed(2, readAt + 86_400, { verificationRunId: 'run-2' }),
    ];
    const first = countTestingResults(startTestingAttempts(START, true), rows, readAt);
    expect(first.futureResults).toBe(1);
    expect(series(first.attempts, 'failed', false).count).toBe(2);
    // 120 s of overlap before the newest end it may believe: readAt + 60.
    expect(first.attempts.reads.countFrom).toBe(readAt - 60);

    // The next read lists both again (Trunk's clock is ahead) and one new row before them.
    const next = countTestingResults(
      first.attempts,
      [...rows, failed(3, readAt + 10, { verificationRunId: 'run-3' })],
      readAt + 30,
    );
    expect(next.futureResults).toBe(0);
    expect(series(next.attempts, 'failed', false).count).toBe(3);
    expect(next.attempts.reads.countFrom).toBe(readAt - 30);
  });
});

describe('exemplars of results dated ahead', () => {
  it('places a result dated 2100 at the clock plus the slack, so a later attempt in its bucket still becomes the exemplar', () => {
    // PR 4242's result "ended" in 2100 (a bad row); PR 7's, in the same bucket (ten minutes),
    // ended a minute after that read. Each bucket keeps the exemplar of its latest observation.
    const ahead = countTestingResults(
      startTestingAttempts(START, false),
      [failed(4242, Date.parse('2100-06-01T00:00:00Z') / 1000, {})],
      START + 120,
    );
    expect(ahead.futureResults).toBe(1);
    const later = countTestingResults(ahead.attempts, [failed(7, START + 240, {})], START + 300);
    const histogram = [...later.attempts.counts.durations.values()].find(
      (each) => each.outcome === 'failed',
    )?.histogram;
    const slot = histogram?.buckets.findIndex((count) => count === 2) ?? -1;
    expect(slot).toBeGreaterThanOrEqual(0);
    expect(histogram === undefined ? undefined : exemplarAt(histogram, slot)).toMatchObject({
      pullRequest: 7,
    });
  });
});

describe('rows dated far ahead', () => {
  // Each is kept as seen until its date, so that a read listing it again counts nothing; a stream
  // of new ones dated 2099 must not grow what a queue remembers without end.
  it('remembers at most 1,000 of them, the nearest, however many reads list new ones', () => {
    const far = Date.parse('2099-01-01T00:00:00Z') / 1000;
    let attempts = startTestingAttempts(START, true);
    for (let read = 0; read < 5; read += 1) {
      const rows = Array.from({ length: 800 }, (_, index) =>
        failed(read * 800 + index + 1, far + read * 800 + index, {
          verificationRunId: `run-${String(read)}-${String(index)}`,
        }),
      );
      attempts = countTestingResults(attempts, rows, START + 60 * (read + 1)).attempts;
    }
    expect(attempts.reads.seen.size).toBe(1000);
    // The nearest stay seen: listed again, the first 1,000 count nothing.
    const again = Array.from({ length: 1000 }, (_, index) =>
      failed(index + 1, far + index, {
        verificationRunId: `run-${String(Math.floor(index / 800))}-${String(index % 800)}`,
      }),
    );
    const after = countTestingResults(attempts, again, START + 400);
    expect(after.futureResults).toBe(0);
  });
});
