// What a repository's flaky and broken tests cost over Trunk's metrics window: the sums of their
// per-test metrics, read on the walk of those tests at no extra call (`include=metrics`).
import type { TestCost, TestCostSums } from '../snapshot/testCostTypes.js';
import { OTHER_STATUS, UNHEALTHY_STATUSES } from '../snapshot/types.js';
import type { V2Test } from '../trunk/v2Schemas.js';

const KNOWN_STATUSES: ReadonlySet<string> = new Set(UNHEALTHY_STATUSES);

/**
 * Per status (a status Trunk adds is `other`), the sums of `failureCount`, `runCount` and
 * `prsImpacted` of the tests read with metrics over `window`. Each known status is there, 0 when no
 * test has it. A test whose metrics are null "had no runs in `period`" and adds nothing; a count
 * missing from its metrics adds nothing to its sum; a test without metrics at all (Trunk did not
 * embed them) leaves its status out, since its sums are then unknown rather than smaller.
 */
export function testCostOf(tests: readonly V2Test[], window: string): TestCost {
  const byStatus = new Map<string, TestCostSums>(
    UNHEALTHY_STATUSES.map((status) => [
      status,
      { failedRuns: 0, runs: 0, pullRequestsImpacted: 0 },
    ]),
  );
  const unknown = new Set<string>();
  for (const test of tests) {
    const status =
      test.status !== undefined && KNOWN_STATUSES.has(test.status) ? test.status : OTHER_STATUS;
    if (test.metrics === undefined) {
      unknown.add(status);
      continue;
    }
    const sums = byStatus.get(status) ?? { failedRuns: 0, runs: 0, pullRequestsImpacted: 0 };
    const metrics = test.metrics ?? {};
    byStatus.set(status, {
      failedRuns: sums.failedRuns + (metrics.failureCount ?? 0),
      runs: sums.runs + (metrics.runCount ?? 0),
      pullRequestsImpacted: sums.pullRequestsImpacted + (metrics.prsImpacted ?? 0),
    });
  }
  for (const status of unknown) byStatus.delete(status);
  return { window, byStatus };
}
