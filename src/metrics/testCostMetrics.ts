// What flaky tests cost (the sums of Trunk's per-test metrics over its window) and the
// organization's test collections: API v2 only, rendered from the flaky-tests snapshots.
import type { TestCollections, TestCost, TestCostSums } from '../snapshot/testCostTypes.js';
import type { TargetStatus } from '../snapshot/types.js';
import { ofFlakyTests } from './currentSnapshots.js';
import type { AcrossTargetsFamily, FamilySettings, PerTargetFamily, Sample } from './family.js';
import { V2_MAX_TEST_COLLECTIONS } from '../trunk/v2Schemas.js';
import { REFRESHED_BY, refreshedBy } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

function costFreshness(settings: FamilySettings): string {
  return (
    "API v2 only, read with include=metrics on the walk of the flaky and broken tests; window is Trunk's metrics period (reads.testMetricsPeriod; off: no series). " +
    refreshedBy(REFRESHED_BY.unhealthyTests, settings.flakyTestsIntervalSeconds)
  );
}

/** A `{repo, status, window}` gauge of one of a repository's sums; none without a cost read. */
function costFamily(
  name: string,
  what: string,
  sum: (sums: TestCostSums) => number,
  note = '',
): PerTargetFamily {
  return {
    name: fqName(NAMESPACE, 'flaky_tests', name),
    help: (settings) =>
      `${what}, summed over the repository's tests of that status (flaky, broken; a status Trunk adds is other) in the window; a test that had no runs in it adds nothing.${note} ${costFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'status', 'window'],
    scope: 'target',
    samples: ofFlakyTests(({ repo, unhealthy }) => costSamples(repo, unhealthy?.cost, sum)),
  };
}

function costSamples(
  repo: string,
  cost: TestCost | undefined,
  sum: (sums: TestCostSums) => number,
): Sample[] {
  if (cost === undefined) return [];
  return Array.from(cost.byStatus, ([status, sums]) => ({
    labels: [repo, status, cost.window],
    value: sum(sums),
  }));
}

/** The cost families, in page order: one series per repository and status. */
export const TEST_COST_FAMILIES: readonly PerTargetFamily[] = [
  costFamily('failed_runs', "Failing runs (Trunk's failureCount)", (sums) => sums.failedRuns),
  costFamily('runs', "Runs (Trunk's runCount)", (sums) => sums.runs),
  costFamily(
    'pull_requests_impacted',
    "Pull requests that saw a test fail while it was unhealthy and not quarantined (Trunk's prsImpacted, distinct per test)",
    (sums) => sums.pullRequestsImpacted,
    ' A pull request hit by two tests counts twice.',
  ),
];

/**
 * The test collections of the latest read any flaky-tests target holds: every target holds the
 * same organization-wide read, or none once it is older than staleAfterSeconds.
 */
function latestCollections(statuses: readonly TargetStatus[]): TestCollections | undefined {
  let latest: TestCollections | undefined;
  for (const { snapshot } of statuses) {
    if (snapshot?.kind !== 'flaky_tests' || snapshot.collections === undefined) continue;
    if (latest === undefined || snapshot.collections.readAt > latest.readAt) {
      latest = snapshot.collections;
    }
  }
  return latest;
}

function collectionFreshness(settings: FamilySettings): string {
  return (
    `API v2 only (reads.testCollections), organization-wide: the newest ${V2_MAX_TEST_COLLECTIONS} collections, each name ` +
    'once; with sharding, only the shard of the first flaky-tests repository by name exports them. ' +
    refreshedBy(REFRESHED_BY.testCollections, settings.flakyTestsIntervalSeconds)
  );
}

/** The test-collection families: one series per collection, from the latest read. */
export const TEST_COLLECTION_FAMILIES: readonly AcrossTargetsFamily[] = [
  {
    name: fqName(NAMESPACE, 'test_collection', 'test_cases'),
    help: (settings) =>
      `Distinct test cases seen in the test collection (Trunk's testCaseCount; 0 until its first upload is processed). ${collectionFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['collection'],
    scope: 'targets',
    samples: (statuses) =>
      (latestCollections(statuses)?.collections ?? []).map(({ name, testCases }) => ({
        labels: [name],
        value: testCases,
      })),
  },
  {
    name: fqName(NAMESPACE, 'test_collection', 'quarantine_enabled'),
    help: (settings) =>
      `1 when quarantining is turned on for the test collection, else 0 (Trunk's quarantineEnabled). ${collectionFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['collection'],
    scope: 'targets',
    samples: (statuses) =>
      (latestCollections(statuses)?.collections ?? []).map(({ name, quarantineEnabled }) => ({
        labels: [name],
        value: quarantineEnabled ? 1 : 0,
      })),
  },
];
