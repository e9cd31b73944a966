// A merge queue's verification runs (API v2), rendered from the ledger its snapshot carries: the
// runs concluded since the exporter started, the slots in use, CI time per run, batch sizes and the
// required checks that failed runs. Absent for a queue read through API v1, which has no such read.
import type { HistogramCounts } from '../snapshot/histogram.js';
import type { TargetStatus } from '../snapshot/types.js';
import { OTHER_LABEL } from '../snapshot/topLabelTypes.js';
import {
  CHECK_LABEL_LIMITS,
  UNKNOWN_RUN_STATUS,
  type VerificationRuns,
} from '../snapshot/verificationRunTypes.js';
import { V2_ENDPOINTS } from '../trunk/v2Schemas.js';
import { recentExemplarsSince } from './exemplarWindow.js';
import { samplesByKey, type FamilySettings, type PerTargetFamily, type Sample } from './family.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'merge_queue';

const READ_FROM =
  `API v2 only: no series for a queue read through API v1. Read from ${V2_ENDPOINTS.listVerificationRuns} ` +
  'when a poll sees a pull request enter or leave testing, reach testsPassed or leave the queue, or a run in progress ' +
  'has no pull request testing left; hidden while that read has failed for longer than polling.staleAfterSeconds';

const COUNTED =
  'each run counted once, when it concluded after the exporter started (or was seen in progress)';

const STATUS =
  `status is succeeded, failed (a required check failed, or the run exceeded the testing timeout), ` +
  `cancelled (abandoned: the entry left, or one ahead failed) or ${UNKNOWN_RUN_STATUS} (a status the ` +
  'exporter does not know; counted in trunk_exporter_api_anomalies_total); bisection says whether ' +
  'the run existed to find the failing pull request of a batch';

/**
 * The samples of a queue's verification runs, given its repo, branch and from when its exemplars
 * are written; none without runs or while they are hidden.
 */
function ofRuns(
  samples: (
    runs: VerificationRuns,
    repo: string,
    branch: string,
    exemplarsSince: number,
  ) => Iterable<Sample>,
): (status: TargetStatus, settings: FamilySettings) => Iterable<Sample> {
  return (status, settings) => {
    const { target, snapshot } = status;
    const runs = snapshot?.kind === 'merge_queue' ? snapshot.verificationRuns : undefined;
    return runs === undefined || runs.reads.hidden
      ? []
      : samples(runs, target.repo, target.branch, recentExemplarsSince(status, settings));
  };
}

/** The run families, in page order: one per queue read through API v2 with the read on. */
export const VERIFICATION_RUN_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'verification_runs', 'total'),
    help: () =>
      `Verification runs (CI runs testing a batch of one or more pull requests) that concluded, ${COUNTED}; ` +
      `${STATUS}. The documented statuses are present from the queue's first poll at 0, with ` +
      `bisection="true" too where the queue batches. ${READ_FROM}.`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'status', 'bisection'],
    scope: 'target',
    samples: ofRuns((runs, repo, branch) =>
      Array.from(runs.counts.concluded.values(), ({ status, bisection, durations }) => ({
        labels: [repo, branch, status, String(bisection)],
        value: durations.count,
      })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'verification_runs_in_progress'),
    help: () =>
      'Verification runs in progress as of the last read: the testing slots in use, to set beside ' +
      'trunk_merge_queue_concurrency (bisection="false") and trunk_merge_queue_bisection_concurrency ' +
      `(bisection="true"). A run in progress for over a day is read by id (at most 20 a queue). ${READ_FROM}.`,
    type: 'gauge',
    labelNames: ['repo', 'branch', 'bisection'],
    scope: 'target',
    samples: ofRuns((runs, repo, branch) => {
      const counts = new Map<boolean, number>([
        [false, 0],
        [true, 0],
      ]);
      for (const { bisection } of runs.reads.inProgress.values()) {
        counts.set(bisection, (counts.get(bisection) ?? 0) + 1);
      }
      return Array.from(counts, ([bisection, value]) => ({
        labels: [repo, branch, String(bisection)],
        value,
      }));
    }),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'verification_run_duration', 'seconds'),
    help: () =>
      'Concluded verification runs by how long they ran (updatedAt − createdAt: Trunk has no ' +
      'finishedAt, and a finished run\'s updatedAt "approximates when it concluded"), in seconds: CI ' +
      `time per run, where trunk_merge_queue_testing_duration_seconds counts it per pull request; ${STATUS}. ` +
      'A series appears with its first run. In OpenMetrics a bucket carries the first tested pull ' +
      `request of its latest recent run as an exemplar (pr). ${READ_FROM}.`,
    type: 'histogram',
    labelNames: ['repo', 'branch', 'status', 'bisection'],
    scope: 'target',
    samples: ofRuns((runs, repo, branch, exemplarsSince) =>
      [...runs.counts.concluded.values()]
        .filter(({ durations }) => durations.count > 0)
        .map(({ status, bisection, durations }) => ({
          labels: [repo, branch, status, String(bisection)],
          histogram: durations,
          exemplarsSince,
        })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'batch_size'),
    help: () =>
      'Concluded verification runs by how many pull requests they tested (testedPullRequests; more ' +
      `than one means the entries were batched); bisection as for the runs. A series appears with its first run. ${READ_FROM}.`,
    type: 'histogram',
    labelNames: ['repo', 'branch', 'bisection'],
    scope: 'target',
    samples: ofRuns((runs, repo, branch) =>
      Array.from(runs.counts.batchSizes, ([bisection, histogram]: [boolean, HistogramCounts]) => ({
        labels: [repo, branch, String(bisection)],
        histogram,
      })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'check_failures', 'total'),
    help: () =>
      'Failed verification runs per required check that failed them: each check named in the ' +
      "run's requiredStatuses that concluded failure or timeout, once per run. The " +
      `${String(CHECK_LABEL_LIMITS.named)} check names that failed a queue's runs most often keep ` +
      `their own series, the rest count under check="${OTHER_LABEL}": a name takes the place of the ` +
      'least frequent only once it failed strictly more often, and counts from then on; one that ' +
      `loses its place (or fails no run for ${String(CHECK_LABEL_LIMITS.forgetAfterSeconds / 86_400)} ` +
      `days) stops its series, so no series goes down. A series appears with its first failure. ${READ_FROM}.`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'check'],
    scope: 'target',
    samples: ofRuns((runs, repo, branch) =>
      samplesByKey([repo, branch], runs.counts.checkFailures.series),
    ),
  },
];
