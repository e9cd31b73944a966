// A flaky-tests target through API v2: its snapshot from the organization's lists (V2TestDirectory),
// the quarantined tests computed as v1's walk computes them, and the flaky and broken tests, which
// only v2 lists.
import type { ApiAnomalyKind } from '../trunk/observer.js';
import { V2_ENDPOINTS, type V2Endpoint, type V2Test } from '../trunk/v2Schemas.js';
import {
  NO_CODEOWNER,
  OTHER_STATUS,
  UNHEALTHY_STATUSES,
  UNHEALTHY_WINDOWS,
  type FlakyTestsSnapshot,
  type UnhealthyTests,
} from '../snapshot/types.js';
import { quarantineAgeCounts } from './flakyTestsPoll.js';
import { parseTimestampSeconds } from './timestamps.js';
import type { ReadOptions } from './trunkReader.js';
import type { V2TestDirectory } from './v2TestDirectory.js';

interface V2FlakyTestsPollRequest {
  readonly directory: V2TestDirectory;
  /** `host/owner/name`. */
  readonly repoName: string;
  readonly options: ReadOptions;
  readonly now: () => number;
  /** Where a status outside UNHEALTHY_STATUSES is counted (trunk_exporter_api_anomalies_total). */
  readonly reportAnomaly: (endpoint: V2Endpoint, kind: ApiAnomalyKind, count: number) => void;
}

/** One flaky-tests target's snapshot from the organization's lists (V2TestDirectory). */
export async function pollFlakyTestsV2(
  request: V2FlakyTestsPollRequest,
): Promise<FlakyTestsSnapshot> {
  const [quarantined, unhealthy] = await Promise.all([
    request.directory.quarantinedTestsOf(request.repoName, request.options),
    request.directory.unhealthyTestsOf(request.repoName, request.options),
  ]);
  const byCodeowner = new Map<string, number>();
  const quarantineTimes: number[] = [];
  for (const test of quarantined) {
    countOwners(byCodeowner, test);
    // Older answers lack quarantinedSince: statusSince says since when the test is as it is.
    const since = parseTimestampSeconds(test.quarantinedSince ?? test.statusSince ?? undefined);
    if (since !== undefined) quarantineTimes.push(since);
  }
  const takenAt = request.now();
  return {
    kind: 'flaky_tests',
    repo: request.repoName,
    takenAt,
    quarantined: quarantined.length,
    byCodeowner,
    oldestQuarantinedAt: earliest(quarantineTimes),
    ...quarantineAgeCounts(quarantineTimes, takenAt),
    unhealthy: unhealthySummary(unhealthy, takenAt, request.reportAnomaly),
  };
}

/**
 * The flaky and broken tests by status: counts (each known status present, 0 when none), owners,
 * the earliest statusSince and how many began within each window. A status Trunk adds is `other`
 * and counted as an anomaly.
 */
function unhealthySummary(
  tests: readonly V2Test[],
  takenAt: number,
  reportAnomaly: V2FlakyTestsPollRequest['reportAnomaly'],
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
    countOwners(owners, test);
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
          times.filter((at) => takenAt - at <= seconds).length,
        ]),
      ),
    );
  }
  return { byStatus, byCodeowner, oldestSince, recently };
}

/** Adds `test` under each of its owners (once each), or under NO_CODEOWNER when it has none. */
function countOwners(counts: Map<string, number>, test: V2Test): void {
  const named = test.codeowners.filter((owner) => owner !== '');
  const owners = named.length > 0 ? new Set(named) : [NO_CODEOWNER];
  for (const owner of owners) counts.set(owner, (counts.get(owner) ?? 0) + 1);
}

/** The smallest value; undefined for none. */
function earliest(values: readonly number[]): number | undefined {
  let result: number | undefined;
  for (const value of values) if (result === undefined || value < result) result = value;
  return result;
}
