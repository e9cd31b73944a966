// Testing attempts of a merge queue (API v2's testing results), rendered from what the snapshot
// store holds of each queue's. Counted like the flow families: from the exporter's start, kept
// while the queue is stale; absent for a queue read through API v1, which has no such read.
import { PERIODIC_EXIT_READ_POLLS } from '../poller/v2/v2ExitLookup.js';
import { durationSeriesKey, type TestingAttempts } from '../snapshot/testingAttemptTypes.js';
import type { TargetStatus } from '../snapshot/types.js';
import { V2_ENDPOINTS } from '../trunk/v2Schemas.js';
import { recentExemplarsSince } from './exemplarWindow.js';
import type { FamilySettings, PerTargetFamily, Sample } from './family.js';
import { formatInterval } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'merge_queue';

function readFrom(settings: FamilySettings): string {
  return (
    `API v2 only: no series for a queue read through API v1. Read from ${V2_ENDPOINTS.listTestingResults} ` +
    `when a poll sees a pull request leave testing or the queue or reach testsPassed, else every ` +
    `${formatInterval(PERIODIC_EXIT_READ_POLLS * settings.mergeQueueIntervalSeconds)}; each attempt ` +
    'counts once, and only those that ended after the exporter started'
  );
}

/**
 * The outcome × bisection combinations written at 0 before their first attempt (so that rate() sees
 * it), those the definition says an attempt can have: any outcome outside a bisection, and the two
 * it names for a bisection step, `passed` ("the run passed, including a passing bisection step")
 * and `failed` (startedBisection "can be true together with `isBisection`, when a bisection step
 * splits again"). The read keeps bisection series only where the queue batches, as only a batch is
 * bisected. Every other combination is written once it has an attempt.
 */
const ZERO_FILLED: ReadonlySet<string> = new Set([
  ...['passed', 'failed', 'interrupted', 'cancelled'].map((outcome) =>
    durationSeriesKey(outcome, false),
  ),
  ...['passed', 'failed'].map((outcome) => durationSeriesKey(outcome, true)),
]);

/** The samples of a queue's testing attempts, given its repo and branch; none without them. */
function ofTestingAttempts(
  samples: (attempts: TestingAttempts, repo: string, branch: string) => Iterable<Sample>,
): (status: TargetStatus) => Iterable<Sample> {
  return ({ target, testingAttempts }) =>
    testingAttempts === undefined ? [] : samples(testingAttempts, target.repo, target.branch);
}

/** The testing families, in page order: one per queue read through API v2. */
export const TESTING_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'testing_duration', 'seconds'),
    help: (settings) =>
      'Testing attempts of pull requests in the merge queue by how they ended, observed when they end, in ' +
      'seconds of testing: _count is attempts, _sum the testing time (a batched run counts once per ' +
      'pull request it tested). outcome is passed, failed, interrupted (cut short, retried), cancelled ' +
      '(the pull request left while testing), unknown (Trunk gave no outcome) or other (an outcome the ' +
      'exporter does not know; counted in trunk_exporter_api_anomalies_total); bisection says whether ' +
      'the attempt was a bisection step. Written at 0 from the start: each documented outcome of ' +
      'attempts outside a bisection and, where the queue batches, passed and failed bisection ' +
      'steps; any other combination from its first attempt. In OpenMetrics a bucket carries its ' +
      `latest recent attempt's pull request as an exemplar (pr). ${readFrom(settings)}.`,
    type: 'histogram',
    labelNames: ['repo', 'branch', 'outcome', 'bisection'],
    scope: 'target',
    samples: (status, settings) =>
      [...(status.testingAttempts?.counts.durations.values() ?? [])]
        .filter(
          ({ outcome, bisection, histogram }) =>
            histogram.count > 0 || ZERO_FILLED.has(durationSeriesKey(outcome, bisection)),
        )
        .map(({ outcome, bisection, histogram }) => ({
          labels: [status.target.repo, status.target.branch, outcome, String(bisection)],
          histogram,
          exemplarsSince: recentExemplarsSince(status, settings),
        })),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'bisections_started', 'total'),
    help: (settings) =>
      'Batches split to find the failing pull request: verification runs whose failure split their ' +
      'batch (startedBisection), each once however many pull requests it tested; a run Trunk gives ' +
      `no verificationRunId is told apart by when it ended. ${readFrom(settings)}.`,
    type: 'counter',
    labelNames: ['repo', 'branch'],
    scope: 'target',
    samples: ofTestingAttempts((attempts, repo, branch) => [
      { labels: [repo, branch], value: attempts.counts.bisectionsStarted },
    ]),
  },
];
