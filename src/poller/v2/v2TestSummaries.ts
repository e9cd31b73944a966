// A repository's tests in one read of an organization-wide list, tallied page by page as the walk
// meets them into what the flaky-tests families render: counts, owners, times. Neither a walk nor
// the directory between reads holds the parsed rows, whose number grows with the organization's
// tests.
import {
  addTestCost,
  mergeTestCost,
  startTestCost,
  testCostOf,
  type TestCostTally,
} from '../../flow/testCost.js';
import {
  OTHER_STATUS,
  UNHEALTHY_STATUSES,
  UNHEALTHY_WINDOWS,
  type QuarantinedTests,
  type UnhealthyTests,
} from '../../snapshot/types.js';
import type { V2Test, V2TestMetricsPeriod } from '../../trunk/v2Schemas.js';
import { countOwners, countWhere, earliest, quarantineAgeCounts } from '../testCounts.js';
import { parseTimestampSeconds } from '../timestamps.js';

/** The statuses (`TestStatus`, `QuarantineState`) of rows the walks' filters leave out. */
const HEALTHY = 'healthy';
const NOT_QUARANTINED = 'notQuarantined';

/** What a summary needs besides the tests: when the list was read, and how. */
export interface ListRead {
  /** Unix seconds when the list was read. */
  readonly readAt: number;
  /** The window of the tests' metrics; undefined when read without them. */
  readonly metricsPeriod: V2TestMetricsPeriod | undefined;
  /** Counts tests whose status the exporter does not know (trunk_exporter_api_anomalies_total). */
  readonly unknownStatuses: (count: number) => void;
}

/** How one list's rows of one repository are tallied and summarised. */
export interface ListTally<T, S> {
  /** Whether a row is one of the list's tests: a row the walk's filter excludes is none. */
  readonly lists: (test: V2Test) => boolean;
  readonly start: () => T;
  readonly add: (tally: T, test: V2Test) => void;
  /** Adds `from`'s tests to `into` (two repository ids of one name). */
  readonly merge: (into: T, from: T) => void;
  readonly summarise: (tally: T, read: ListRead) => S;
}

/** Tests of one kind so far: how many, per code owner, and each one's time (when it has one). */
interface TestsTally {
  count: number;
  readonly byCodeowner: Map<string, number>;
  readonly times: number[];
}

function startTests(): TestsTally {
  return { count: 0, byCodeowner: new Map(), times: [] };
}

function addTest(tally: TestsTally, codeowners: readonly string[], at: number | undefined): void {
  tally.count += 1;
  countOwners(tally.byCodeowner, codeowners);
  if (at !== undefined) tally.times.push(at);
}

function mergeTests(into: TestsTally, from: TestsTally): void {
  into.count += from.count;
  for (const [owner, count] of from.byCodeowner) {
    into.byCodeowner.set(owner, (into.byCodeowner.get(owner) ?? 0) + count);
  }
  for (const at of from.times) into.times.push(at);
}

/** The quarantined tests of one repository, counted as v1's walk counts them. */
export const QUARANTINE_TALLY: ListTally<TestsTally, QuarantinedTests> = {
  // A row the walk's filter (`quarantineState=quarantined`) excludes is no quarantined test.
  lists: (test) => test.quarantineState !== NOT_QUARANTINED,
  start: startTests,
  add: (tally, test) => {
    if (!QUARANTINE_TALLY.lists(test)) return;
    // Older answers lack quarantinedSince: statusSince says since when the test is as it is.
    addTest(
      tally,
      test.codeowners,
      parseTimestampSeconds(test.quarantinedSince ?? test.statusSince ?? undefined),
    );
  },
  merge: mergeTests,
  summarise: ({ count, byCodeowner, times }, { readAt }) => ({
    count,
    byCodeowner,
    oldestQuarantinedAt: earliest(times),
    ...quarantineAgeCounts(times, readAt),
  }),
};

/** The flaky and broken tests of one repository so far, by status. */
interface UnhealthyTally {
  readonly byStatus: Map<string, TestsTally>;
  /** Tests whose status the exporter does not know (counted under `other`). */
  unknown: number;
  readonly cost: TestCostTally;
}

const KNOWN_UNHEALTHY: ReadonlySet<string> = new Set(UNHEALTHY_STATUSES);

/**
 * The flaky and broken tests of one repository by status: counts (each known status present, 0
 * when none), owners, the earliest statusSince and how many began within each window, and what
 * they cost over the metrics window. A status Trunk adds is `other` and counted as an anomaly.
 */
export const UNHEALTHY_TALLY: ListTally<UnhealthyTally, UnhealthyTests> = {
  // A row the walk's filter (`status=flaky,broken`) excludes is no unhealthy test.
  lists: (test) => test.status !== HEALTHY,
  start: () => ({
    byStatus: new Map(UNHEALTHY_STATUSES.map((status) => [status, startTests()])),
    unknown: 0,
    cost: startTestCost(),
  }),
  add: (tally, test) => {
    if (!UNHEALTHY_TALLY.lists(test)) return;
    let status = test.status ?? OTHER_STATUS;
    if (!KNOWN_UNHEALTHY.has(status)) {
      tally.unknown += 1;
      status = OTHER_STATUS;
    }
    let ofStatus = tally.byStatus.get(status);
    if (ofStatus === undefined) tally.byStatus.set(status, (ofStatus = startTests()));
    addTest(ofStatus, test.codeowners, parseTimestampSeconds(test.statusSince ?? undefined));
    addTestCost(tally.cost, test);
  },
  merge: (into, from) => {
    for (const [status, ofStatus] of from.byStatus) {
      const kept = into.byStatus.get(status);
      if (kept === undefined) into.byStatus.set(status, ofStatus);
      else mergeTests(kept, ofStatus);
    }
    into.unknown += from.unknown;
    mergeTestCost(into.cost, from.cost);
  },
  summarise: (tally, { readAt, metricsPeriod, unknownStatuses }) => {
    if (tally.unknown > 0) unknownStatuses(tally.unknown);
    const byStatus = new Map<string, number>();
    const byCodeowner = new Map<string, ReadonlyMap<string, number>>();
    const oldestSince = new Map<string, number>();
    const recently = new Map<string, ReadonlyMap<string, number>>();
    for (const [status, { count, byCodeowner: owners, times }] of tally.byStatus) {
      byStatus.set(status, count);
      if (count > 0) byCodeowner.set(status, owners);
      const oldest = earliest(times);
      if (oldest !== undefined) oldestSince.set(status, oldest);
      recently.set(
        status,
        new Map(
          UNHEALTHY_WINDOWS.map(([window, seconds]) => [
            window,
            // A timestamp ahead of the exporter's clock counts as recent.
            countWhere(times, (at) => readAt - at <= seconds),
          ]),
        ),
      );
    }
    const cost = metricsPeriod === undefined ? undefined : testCostOf(tally.cost, metricsPeriod);
    return { byStatus, byCodeowner, oldestSince, recently, cost };
  },
};
