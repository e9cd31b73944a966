// The parts of a flaky-tests target through API v2, each from its organization-wide list
// (V2TestDirectory): the quarantined tests counted as v1's walk counts them, and the flaky and
// broken tests, which only v2 lists.
import { testCostOf } from '../../flow/testCost.js';
import type { TestCollections } from '../../snapshot/testCostTypes.js';
import type { ApiAnomalyKind } from '../../trunk/observer.js';
import { V2_ENDPOINTS, type V2Endpoint } from '../../trunk/v2Schemas.js';
import {
  OTHER_STATUS,
  UNHEALTHY_STATUSES,
  UNHEALTHY_WINDOWS,
  type QuarantinedTests,
  type UnhealthyTests,
} from '../../snapshot/types.js';
import type { ReadAnswer } from '../pollReads.js';
import type { PolledTarget, TestPart } from '../source.js';
import { countOwners, earliest, quarantineAgeCounts } from '../testCounts.js';
import { parseTimestampSeconds } from '../timestamps.js';
import type { V2Readers } from './v2Readers.js';
import { QUARANTINED_TESTS, TEST_COLLECTIONS, UNHEALTHY_TESTS } from './v2Reads.js';
import type { RepositoryTests } from './v2TestDirectory.js';

/** Where a value outside the documented ones is counted (trunk_exporter_api_anomalies_total). */
type ReportAnomaly = (endpoint: V2Endpoint, kind: ApiAnomalyKind, count: number) => void;

/** A repository's tests in an organization-wide list as the part of a target they make. */
function partOf<T>(read: RepositoryTests, value: T): ReadAnswer<T> {
  return { value, readAt: read.readAt, failure: read.failure };
}

/** A flaky-tests target's quarantined tests from the organization's list (QUARANTINED_TESTS). */
export function v2QuarantinePart(
  polled: PolledTarget,
  readers: V2Readers,
): TestPart<QuarantinedTests> {
  return {
    read: QUARANTINED_TESTS,
    answer: async (options) => {
      const read = await readers.tests.quarantinedTestsOf(polled.repository.name, options);
      return partOf(read, quarantinedTests(read));
    },
  };
}

/** A flaky-tests target's flaky and broken tests from the organization's list (UNHEALTHY_TESTS). */
export function v2UnhealthyPart(
  polled: PolledTarget,
  readers: V2Readers,
): TestPart<UnhealthyTests> {
  const reportAnomaly: ReportAnomaly = (endpoint, kind, count) => {
    readers.reader.reportAnomaly(endpoint, kind, count);
  };
  return {
    read: UNHEALTHY_TESTS,
    answer: async (options) => {
      const read = await readers.tests.unhealthyTestsOf(polled.repository.name, options);
      return partOf(read, unhealthySummary(read, reportAnomaly));
    },
  };
}

/** The organization's test collections (TEST_COLLECTIONS), the same for every flaky-tests target. */
export function v2CollectionsPart(readers: V2Readers): TestPart<TestCollections> {
  return {
    read: TEST_COLLECTIONS,
    answer: async (options) => {
      const read = await readers.tests.testCollections(options);
      if (read === undefined) throw new Error('reads.testCollections is off');
      return read;
    },
  };
}

/** The quarantined tests of one read of the organization's list, counted as v1's walk counts them. */
function quarantinedTests({ tests, readAt }: RepositoryTests): QuarantinedTests {
  const byCodeowner = new Map<string, number>();
  const quarantineTimes: number[] = [];
  for (const test of tests) {
    countOwners(byCodeowner, test.codeowners);
    // Older answers lack quarantinedSince: statusSince says since when the test is as it is.
    const since = parseTimestampSeconds(test.quarantinedSince ?? test.statusSince ?? undefined);
    if (since !== undefined) quarantineTimes.push(since);
  }
  return {
    count: tests.length,
    byCodeowner,
    oldestQuarantinedAt: earliest(quarantineTimes),
    ...quarantineAgeCounts(quarantineTimes, readAt),
  };
}

/**
 * The flaky and broken tests by status: counts (each known status present, 0 when none), owners,
 * the earliest statusSince and how many began within each window. A status Trunk adds is `other`
 * and counted as an anomaly.
 */
function unhealthySummary(
  { tests, readAt, metricsPeriod }: RepositoryTests,
  reportAnomaly: ReportAnomaly,
): UnhealthyTests {
  const known: ReadonlySet<string> = new Set(UNHEALTHY_STATUSES);
  const byStatus = new Map<string, number>(UNHEALTHY_STATUSES.map((status) => [status, 0]));
  const byCodeowner = new Map<string, Map<string, number>>();
  const since = new Map<string, number[]>();
  let unknown = 0;
  for (const test of tests) {
    let status = test.status ?? OTHER_STATUS;
    if (!known.has(status)) {
      unknown += 1;
      status = OTHER_STATUS;
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    let owners = byCodeowner.get(status);
    if (owners === undefined) byCodeowner.set(status, (owners = new Map<string, number>()));
    countOwners(owners, test.codeowners);
    const at = parseTimestampSeconds(test.statusSince ?? undefined);
    if (at === undefined) continue;
    const times = since.get(status);
    if (times === undefined) since.set(status, [at]);
    else times.push(at);
  }
  if (unknown > 0) reportAnomaly(V2_ENDPOINTS.listTests, 'unknown_value', unknown);
  const oldestSince = new Map<string, number>();
  const recently = new Map<string, Map<string, number>>();
  for (const status of byStatus.keys()) {
    const times = since.get(status) ?? [];
    const oldest = earliest(times);
    if (oldest !== undefined) oldestSince.set(status, oldest);
    recently.set(
      status,
      new Map(
        UNHEALTHY_WINDOWS.map(([window, seconds]) => [
          window,
          // A timestamp ahead of the exporter's clock counts as recent.
          times.filter((at) => readAt - at <= seconds).length,
        ]),
      ),
    );
  }
  const cost = metricsPeriod === undefined ? undefined : testCostOf(tests, metricsPeriod);
  return { byStatus, byCodeowner, oldestSince, recently, cost };
}
