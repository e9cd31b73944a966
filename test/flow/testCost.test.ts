// The sums of a repository's flaky and broken tests' metrics, from rows written by hand. Trunk's
// definition of a test row's `metrics`: "Returned only when `include=metrics` is set. Null when the
// test had no runs in `period`." Of `prsImpacted`: "Distinct pull requests that saw this test fail
// while it was unhealthy and not quarantined" — distinct per test, so summed over tests a pull
// request two tests hit counts twice.
import { describe, expect, it } from 'vitest';
import { addTestCost, startTestCost, testCostOf } from '../../src/flow/testCost.js';
import type { V2Test } from '../../src/trunk/v2Schemas.js';

function test(status: string | undefined, metrics: V2Test['metrics']): V2Test {
  return {
    repoId: 'repo-1',
    status,
    codeowners: [],
    quarantinedSince: undefined,
    statusSince: undefined,
    metrics,
  };
}

/** The cost of `tests` as a walk adds them up, one after the other. */
function costOf(tests: readonly V2Test[], window: string) {
  const tally = startTestCost();
  for (const one of tests) addTestCost(tally, one);
  return testCostOf(tally, window);
}

const counts = (failureCount: number, runCount: number, prsImpacted: number) => ({
  failureCount,
  runCount,
  prsImpacted,
});

describe('the cost of flaky and broken tests', () => {
  it('sums each status, a pull request two tests hit counting twice, and a test without runs adding nothing', () => {
    const cost = costOf(
      [
        // Both failed on PR #7 (and the first on #8 too): 2 + 1 = 3 pull requests impacted.
        test('flaky', counts(3, 40, 2)),
        test('flaky', counts(1, 10, 1)),
        // "Null when the test had no runs in `period`."
        test('flaky', null),
        test('broken', counts(12, 12, 5)),
      ],
      '7d',
    );
    expect(cost.window).toBe('7d');
    expect(Object.fromEntries(cost.byStatus)).toEqual({
      flaky: { failedRuns: 4, runs: 50, pullRequestsImpacted: 3 },
      broken: { failedRuns: 12, runs: 12, pullRequestsImpacted: 5 },
    });
  });

  it('gives 0 for a status no test has, and counts a status Trunk adds as other', () => {
    const cost = costOf([test('quarantinedByPolicy', counts(2, 9, 1))], '30d');
    expect(Object.fromEntries(cost.byStatus)).toEqual({
      flaky: { failedRuns: 0, runs: 0, pullRequestsImpacted: 0 },
      broken: { failedRuns: 0, runs: 0, pullRequestsImpacted: 0 },
      other: { failedRuns: 2, runs: 9, pullRequestsImpacted: 1 },
    });
  });

  it('leaves out a status one of whose tests came without metrics, and adds nothing for a missing count', () => {
    const cost = costOf(
      [
        test('flaky', counts(1, 4, 1)),
        test('flaky', undefined),
        test('broken', { failureCount: 6, runCount: 6, prsImpacted: undefined }),
      ],
      '1d',
    );
    expect(Object.fromEntries(cost.byStatus)).toEqual({
      broken: { failedRuns: 6, runs: 6, pullRequestsImpacted: 0 },
    });
  });
});
