// A repository's tests in one read of an organization-wide list, summarised as soon as the list is
// read into what the flaky-tests families render: counts, owners, times. The directory keeps only
// these between reads, never the parsed rows, whose size grows with the organization's tests.
import { testCostOf } from '../../flow/testCost.js';
import {
  OTHER_STATUS,
  UNHEALTHY_STATUSES,
  UNHEALTHY_WINDOWS,
  type QuarantinedTests,
  type UnhealthyTests,
} from '../../snapshot/types.js';
import type { V2Test, V2TestMetricsPeriod } from '../../trunk/v2Schemas.js';
import { countOwners, earliest, quarantineAgeCounts } from '../testCounts.js';
import { parseTimestampSeconds } from '../timestamps.js';

/** What a summary needs besides the tests: when the list was read, and how. */
export interface ListRead {
  /** Unix seconds when the list was read. */
  readonly readAt: number;
  /** The window of the tests' metrics; undefined when read without them. */
  readonly metricsPeriod: V2TestMetricsPeriod | undefined;
  /** Counts tests whose status the exporter does not know (trunk_exporter_api_anomalies_total). */
  readonly unknownStatuses: (count: number) => void;
}

/** The quarantined tests of one repository, counted as v1's walk counts them. */
export function quarantineSummary(
  tests: readonly V2Test[],
  { readAt }: ListRead,
): QuarantinedTests {
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
 * The flaky and broken tests of one repository by status: counts (each known status present, 0
 * when none), owners, the earliest statusSince and how many began within each window, and what
 * they cost over the metrics window. A status Trunk adds is `other` and counted as an anomaly.
 */
export function unhealthySummary(
  tests: readonly V2Test[],
  { readAt, metricsPeriod, unknownStatuses }: ListRead,
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
  if (unknown > 0) unknownStatuses(unknown);
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
