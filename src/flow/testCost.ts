// What a repository's flaky and broken tests cost over Trunk's metrics window: the sums of their
// per-test metrics, read on the walk of those tests at no extra call (`include=metrics`), added up
// test by test as the walk meets them.
import type { TestCost, TestCostSums } from '../snapshot/testCostTypes.js';
import { OTHER_STATUS, UNHEALTHY_STATUSES } from '../snapshot/types.js';
import type { V2Test } from '../trunk/v2Schemas.js';

const KNOWN_STATUSES: ReadonlySet<string> = new Set(UNHEALTHY_STATUSES);

const NO_COST: TestCostSums = { failedRuns: 0, runs: 0, pullRequestsImpacted: 0 };

function plus(a: TestCostSums, b: TestCostSums): TestCostSums {
  return {
    failedRuns: a.failedRuns + b.failedRuns,
    runs: a.runs + b.runs,
    pullRequestsImpacted: a.pullRequestsImpacted + b.pullRequestsImpacted,
  };
}

/** The sums so far, per status, and the statuses one of whose tests came without metrics. */
export interface TestCostTally {
  readonly byStatus: Map<string, TestCostSums>;
  readonly unknown: Set<string>;
}

/** No test yet: each known status at 0. */
export function startTestCost(): TestCostTally {
  return {
    byStatus: new Map(UNHEALTHY_STATUSES.map((status) => [status, NO_COST])),
    unknown: new Set(),
  };
}

/**
 * Adds one test under its status (a status Trunk adds is `other`). A test whose metrics are null
 * "had no runs in `period`" and adds nothing; a count missing from its metrics adds nothing to its
 * sum; a test without metrics at all (Trunk did not embed them) makes its status unknown.
 */
export function addTestCost(tally: TestCostTally, test: V2Test): void {
  const status =
    test.status !== undefined && KNOWN_STATUSES.has(test.status) ? test.status : OTHER_STATUS;
  if (test.metrics === undefined) {
    tally.unknown.add(status);
    return;
  }
  const metrics = test.metrics ?? {};
  tally.byStatus.set(
    status,
    plus(tally.byStatus.get(status) ?? NO_COST, {
      failedRuns: metrics.failureCount ?? 0,
      runs: metrics.runCount ?? 0,
      pullRequestsImpacted: metrics.prsImpacted ?? 0,
    }),
  );
}

/** Adds `from`'s tests to `into` (two repository ids of one name). */
export function mergeTestCost(into: TestCostTally, from: TestCostTally): void {
  for (const [status, sums] of from.byStatus) {
    into.byStatus.set(status, plus(into.byStatus.get(status) ?? NO_COST, sums));
  }
  for (const status of from.unknown) into.unknown.add(status);
}

/**
 * Per status, the sums of `failureCount`, `runCount` and `prsImpacted` over `window`: each known
 * status there, 0 when no test has it; a status one of whose tests came without metrics left out,
 * since its sums are then unknown rather than smaller.
 */
export function testCostOf(tally: TestCostTally, window: string): TestCost {
  const byStatus = new Map(tally.byStatus);
  for (const status of tally.unknown) byStatus.delete(status);
  return { window, byStatus };
}
