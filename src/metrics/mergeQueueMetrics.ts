import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import {
  BLOCKED_REASONS,
  KNOWN_PRIORITY_NAMES,
  KNOWN_PULL_REQUEST_STATES,
  KNOWN_QUEUE_STATES,
  QUEUE_SETTINGS,
} from '../snapshot/types.js';
import type { BlockedReason, MergeQueueSnapshot } from '../snapshot/types.js';
import { ENDPOINTS } from '../trunk/schemas.js';
import { currentMergeQueueSnapshots } from './currentSnapshots.js';
import { refreshedBy } from './help.js';
import { NAMESPACE, fqName } from './naming.js';
import type { StatusSource } from './snapshotView.js';

const SUBSYSTEM = 'merge_queue';

const STATE = fqName(NAMESPACE, SUBSYSTEM, 'state');
const INFO = fqName(NAMESPACE, SUBSYSTEM, 'info');
const CONCURRENCY = fqName(NAMESPACE, SUBSYSTEM, 'concurrency');
const TESTING_TIMEOUT = fqName(NAMESPACE, SUBSYSTEM, 'testing_timeout', 'seconds');
const PENDING_FAILURE_DEPTH = fqName(NAMESPACE, SUBSYSTEM, 'pending_failure_depth');
const BISECTION_CONCURRENCY = fqName(NAMESPACE, SUBSYSTEM, 'bisection_concurrency');
const BATCHING_MAX_WAIT = fqName(NAMESPACE, SUBSYSTEM, 'batching_max_wait', 'seconds');
const BATCHING_MIN_SIZE = fqName(NAMESPACE, SUBSYSTEM, 'batching_min_size');
const REQUIRED_STATUSES = fqName(NAMESPACE, SUBSYSTEM, 'required_statuses');
const SETTING_ENABLED = fqName(NAMESPACE, SUBSYSTEM, 'setting_enabled');
const PULL_REQUESTS = fqName(NAMESPACE, SUBSYSTEM, 'pull_requests');
const OLDEST_STATE_CHANGE = fqName(
  NAMESPACE,
  SUBSYSTEM,
  'oldest_state_change_timestamp',
  'seconds',
);
const PULL_REQUESTS_BLOCKED = fqName(NAMESPACE, SUBSYSTEM, 'pull_requests_blocked');

const TARGET_LABELS = ['repo', 'branch'] as const;

/** One `{repo,branch}` gauge per numeric queue setting: name, HELP and where the value comes from. */
const QUEUE_NUMBERS: readonly {
  readonly name: string;
  readonly help: string;
  readonly value: (snapshot: MergeQueueSnapshot) => number;
}[] = [
  {
    name: CONCURRENCY,
    help: 'Number of pull requests the merge queue tests at the same time.',
    value: (snapshot) => snapshot.concurrency,
  },
  {
    name: TESTING_TIMEOUT,
    help: 'Time a pull request may spend testing in the merge queue before it fails, in seconds.',
    value: (snapshot) => snapshot.testingTimeoutSeconds,
  },
  {
    name: PENDING_FAILURE_DEPTH,
    help: 'Number of pull requests behind a failed one that may finish testing before it is removed.',
    value: (snapshot) => snapshot.pendingFailureDepth,
  },
  {
    name: BISECTION_CONCURRENCY,
    help: 'Number of tests the merge queue runs at the same time to bisect a failed batch.',
    value: (snapshot) => snapshot.bisectionConcurrency,
  },
  {
    name: BATCHING_MAX_WAIT,
    help: 'Longest time the merge queue waits to fill a batch, in seconds.',
    value: (snapshot) => snapshot.batchingMaxWaitSeconds,
  },
  {
    name: BATCHING_MIN_SIZE,
    help: 'Number of pull requests the merge queue waits for before it tests a batch.',
    value: (snapshot) => snapshot.batchingMinSize,
  },
  {
    name: REQUIRED_STATUSES,
    help: 'Number of status checks a pull request must pass in the merge queue.',
    value: (snapshot) => snapshot.requiredStatuses,
  },
];

interface MergeQueueMetricsOptions {
  readonly registry: Registry;
  /** The statuses of the targets whose series to render. */
  readonly source: StatusSource;
  readonly intervalSeconds: number;
}

/** Registers the merge-queue gauges; each rebuilds itself from the store's fresh snapshots on scrape. */
export function registerMergeQueueMetrics(options: MergeQueueMetricsOptions): void {
  const { registry, source } = options;
  const queueFreshness = refreshedBy(ENDPOINTS.getQueue, options.intervalSeconds);
  const readinessFreshness = refreshedBy(
    ENDPOINTS.getSubmittedPullRequest,
    options.intervalSeconds,
  );

  new Gauge({
    name: STATE,
    help: `Merge queue state: 1 for the current state, 0 for the other known states. ${queueFreshness}`,
    labelNames: ['repo', 'branch', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentMergeQueueSnapshots(source)) {
        const { repo, branch } = snapshot;
        // Known states always get a series so that `== 1` and `== 0` both work in alerts; an
        // unknown state is shown as-is rather than dropped.
        for (const state of KNOWN_QUEUE_STATES) this.set({ repo, branch, state }, 0);
        this.set({ repo, branch, state: snapshot.state }, 1);
      }
    },
  });

  new Gauge({
    name: INFO,
    help: `Merge queue mode and methods as labels; always 1. ${queueFreshness}`,
    labelNames: [
      'repo',
      'branch',
      'mode',
      'merge_method',
      'direct_merge_mode',
      'optimization_mode',
    ] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentMergeQueueSnapshots(source)) {
        this.set(
          {
            repo: snapshot.repo,
            branch: snapshot.branch,
            mode: snapshot.mode,
            merge_method: snapshot.mergeMethod,
            direct_merge_mode: snapshot.directMergeMode,
            optimization_mode: snapshot.optimizationMode,
          },
          1,
        );
      }
    },
  });

  for (const number of QUEUE_NUMBERS) {
    new Gauge({
      name: number.name,
      help: `${number.help} ${queueFreshness}`,
      labelNames: TARGET_LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const snapshot of currentMergeQueueSnapshots(source)) {
          this.set({ repo: snapshot.repo, branch: snapshot.branch }, number.value(snapshot));
        }
      },
    });
  }

  new Gauge({
    name: SETTING_ENABLED,
    help: `Whether a merge queue setting is enabled (1) or not (0). ${queueFreshness}`,
    labelNames: ['repo', 'branch', 'setting'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentMergeQueueSnapshots(source)) {
        for (const setting of QUEUE_SETTINGS) {
          this.set(
            { repo: snapshot.repo, branch: snapshot.branch, setting },
            snapshot.settings[setting] ? 1 : 0,
          );
        }
      }
    },
  });

  new Gauge({
    name: PULL_REQUESTS,
    help: `Pull requests in the merge queue by state and priority name. ${queueFreshness}`,
    labelNames: ['repo', 'branch', 'state', 'priority'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentMergeQueueSnapshots(source)) {
        const { repo, branch } = snapshot;
        // Zeros for every known combination, so an emptied state reads 0 instead of disappearing.
        for (const state of KNOWN_PULL_REQUEST_STATES) {
          for (const priority of KNOWN_PRIORITY_NAMES)
            this.set({ repo, branch, state, priority }, 0);
        }
        for (const pr of snapshot.pullRequests) {
          this.inc({ repo, branch, state: pr.state, priority: pr.priorityName });
        }
      }
    },
  });

  new Gauge({
    name: OLDEST_STATE_CHANGE,
    help: `Unix time of the earliest state change among the merge queue's pull requests in that state. ${queueFreshness}`,
    labelNames: ['repo', 'branch', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentMergeQueueSnapshots(source)) {
        for (const [state, at] of earliestStateChanges(snapshot)) {
          this.set({ repo: snapshot.repo, branch: snapshot.branch, state }, at);
        }
      }
    },
  });

  new Gauge({
    name: PULL_REQUESTS_BLOCKED,
    help: `Not-ready pull requests in the merge queue by failing readiness rule; a pull request failing several rules counts under each. ${readinessFreshness}`,
    labelNames: ['repo', 'branch', 'reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentMergeQueueSnapshots(source)) {
        // Without readiness lookups a 0 would claim "nothing blocked"; no series says "unknown".
        if (!snapshot.readinessKnown) continue;
        for (const [reason, count] of blockedCounts(snapshot)) {
          this.set({ repo: snapshot.repo, branch: snapshot.branch, reason }, count);
        }
      }
    },
  });
}

/** Earliest `stateChangedAt` per PR state, for states with at least one timestamped PR. */
export function earliestStateChanges(snapshot: MergeQueueSnapshot): Map<string, number> {
  const earliest = new Map<string, number>();
  for (const pr of snapshot.pullRequests) {
    if (pr.stateChangedAt === undefined) continue;
    const current = earliest.get(pr.state);
    if (current === undefined || pr.stateChangedAt < current) {
      earliest.set(pr.state, pr.stateChangedAt);
    }
  }
  return earliest;
}

/** Not-ready PRs per failing readiness rule, every rule present (0 when none). */
export function blockedCounts(snapshot: MergeQueueSnapshot): Map<BlockedReason, number> {
  const counts = new Map<BlockedReason, number>(BLOCKED_REASONS.map((reason) => [reason, 0]));
  for (const pr of snapshot.pullRequests) {
    // A Set, so a reason listed twice for one PR still counts that PR once.
    for (const reason of new Set(pr.blockedReasons)) {
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
  }
  return counts;
}
