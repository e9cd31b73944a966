import {
  BLOCKED_REASONS,
  DEFAULT_PRIORITY_NAME,
  KNOWN_PULL_REQUEST_STATES,
  KNOWN_QUEUE_STATES,
  QUEUE_SETTINGS,
} from '../snapshot/types.js';
import type { BlockedReason, MergeQueueSnapshot } from '../snapshot/types.js';
import { ofMergeQueue } from './currentSnapshots.js';
import {
  samplesByKey,
  type FamilySettings,
  type PerTargetFamily,
  type ValueSample,
} from './family.js';
import { REFRESHED_BY, refreshedBy } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'merge_queue';

const TARGET_LABELS = ['repo', 'branch'] as const;

function queueFreshness(settings: FamilySettings): string {
  return refreshedBy(REFRESHED_BY.queue, settings.mergeQueueIntervalSeconds);
}

function pullRequestFreshness(settings: FamilySettings): string {
  return refreshedBy(REFRESHED_BY.pullRequests, settings.mergeQueueIntervalSeconds);
}

/**
 * One `{repo,branch}` gauge per numeric queue setting, read from the snapshot; absent while the
 * setting is (Trunk sent another type, a fraction, or a value below its floor).
 */
function queueNumber(
  name: string,
  unit: string,
  help: string,
  value: (snapshot: MergeQueueSnapshot) => number | undefined,
): PerTargetFamily {
  return {
    name: fqName(NAMESPACE, SUBSYSTEM, name, unit),
    help: (settings) => `${help} ${queueFreshness(settings)}`,
    type: 'gauge',
    labelNames: TARGET_LABELS,
    scope: 'target',
    samples: ofMergeQueue((snapshot) => {
      const current = value(snapshot);
      return current === undefined
        ? []
        : [{ labels: [snapshot.repo, snapshot.branch], value: current }];
    }),
  };
}

/** The states of a pull request in the queue: the known ones but the final states, which leave it. */
const QUEUED_STATES = KNOWN_PULL_REQUEST_STATES.filter(
  (state) => state !== 'merged' && state !== 'failed' && state !== 'cancelled',
);

/** The merge-queue families, in page order: one per target, from its fresh snapshot. */
export const MERGE_QUEUE_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'state'),
    help: (settings) =>
      `Merge queue state: 1 for the current state, 0 for the other known states. ${queueFreshness(settings)}`,
    type: 'stateset',
    labelNames: ['repo', 'branch', 'state'],
    scope: 'target',
    samples: ofMergeQueue(({ repo, branch, state: current }) => {
      // Known states always get a series so that `== 1` and `== 0` both work in alerts; an
      // unknown state is shown as-is rather than dropped.
      const samples: ValueSample[] = KNOWN_QUEUE_STATES.map((state) => ({
        labels: [repo, branch, state],
        value: state === current ? 1 : 0,
      }));
      if (!(KNOWN_QUEUE_STATES as readonly string[]).includes(current)) {
        samples.push({ labels: [repo, branch, current], value: 1 });
      }
      return samples;
    }),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'info'),
    help: (settings) =>
      `Merge queue mode and methods as labels; always 1. ${queueFreshness(settings)}`,
    type: 'info',
    labelNames: [
      'repo',
      'branch',
      'mode',
      'merge_method',
      'direct_merge_mode',
      'optimization_mode',
    ],
    scope: 'target',
    samples: ofMergeQueue((snapshot) => [
      {
        labels: [
          snapshot.repo,
          snapshot.branch,
          snapshot.mode,
          snapshot.mergeMethod,
          snapshot.directMergeMode,
          snapshot.optimizationMode,
        ],
        value: 1,
      },
    ]),
  },
  queueNumber(
    'concurrency',
    '',
    'Number of pull requests the merge queue tests at the same time.',
    (snapshot) => snapshot.concurrency,
  ),
  queueNumber(
    'testing_timeout',
    'seconds',
    'Time a pull request may spend testing in the merge queue before it fails, in seconds; 0 means no timeout.',
    (snapshot) => snapshot.testingTimeoutSeconds,
  ),
  queueNumber(
    'pending_failure_depth',
    '',
    'Number of pull requests behind a failed one that may finish testing before it is removed.',
    (snapshot) => snapshot.pendingFailureDepth,
  ),
  queueNumber(
    'bisection_concurrency',
    '',
    'Number of tests the merge queue runs at the same time to bisect a failed batch.',
    (snapshot) => snapshot.bisectionConcurrency,
  ),
  queueNumber(
    'batching_max_wait',
    'seconds',
    'Longest time the merge queue waits to fill a batch, in seconds.',
    (snapshot) => snapshot.batchingMaxWaitSeconds,
  ),
  queueNumber(
    'batching_min_size',
    '',
    'Number of pull requests the merge queue waits for before it tests a batch.',
    (snapshot) => snapshot.batchingMinSize,
  ),
  queueNumber(
    'required_statuses',
    '',
    'Number of status checks a pull request must pass in the merge queue.',
    (snapshot) => snapshot.requiredStatuses,
  ),
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'setting_enabled'),
    help: (settings) =>
      `Whether a merge queue setting is enabled (1) or not (0). ${queueFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'branch', 'setting'],
    scope: 'target',
    // A setting Trunk sent as another type than a boolean is unknown: its series is left out.
    samples: ofMergeQueue((snapshot) =>
      QUEUE_SETTINGS.flatMap((setting) => {
        const enabled = snapshot.settings[setting];
        return enabled === undefined
          ? []
          : [{ labels: [snapshot.repo, snapshot.branch, setting], value: enabled ? 1 : 0 }];
      }),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'pull_requests'),
    help: (settings) =>
      `Pull requests in the merge queue by state and priority name. ${pullRequestFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'branch', 'state', 'priority'],
    scope: 'target',
    samples: ofMergeQueue(({ repo, branch, pullRequests }) => {
      // A zero for every state a queued PR has at the default priority, so an emptied state reads
      // 0 instead of disappearing; other combinations (another priority, a final state, which a
      // PR leaving the queue may still show on API v1) while a PR has them, in the order their
      // first PR comes: a zero for every priority would be four per state, nearly all of them 0.
      const counts = new Map<string, { state: string; priority: string; count: number }>();
      const count = (state: string, priority: string, add: number): void => {
        const key = `${state}\u0000${priority}`;
        const entry = counts.get(key);
        if (entry === undefined) counts.set(key, { state, priority, count: add });
        else entry.count += add;
      };
      for (const state of QUEUED_STATES) count(state, DEFAULT_PRIORITY_NAME, 0);
      for (const pr of pullRequests) count(pr.state, pr.priorityName, 1);
      return Array.from(counts.values(), ({ state, priority, count: value }) => ({
        labels: [repo, branch, state, priority],
        value,
      }));
    }),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'oldest_state_change_timestamp', 'seconds'),
    help: (settings) =>
      `Unix time of the earliest state change among the merge queue's pull requests in that state. ${pullRequestFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'branch', 'state'],
    scope: 'target',
    samples: ofMergeQueue((snapshot) =>
      Array.from(oldestPullRequests(snapshot), ([state, { stateChangedAt }]) => ({
        labels: [snapshot.repo, snapshot.branch, state],
        value: stateChangedAt,
      })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'oldest_pull_request_number'),
    help: (settings) =>
      `Number of the pull request that has been in that state longest in the merge queue: the one whose stateChangedAt trunk_merge_queue_oldest_state_change_timestamp_seconds shows (the lowest number of equal timestamps; pull requests without a timestamp are never it). ${pullRequestFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'branch', 'state'],
    scope: 'target',
    samples: ofMergeQueue((snapshot) =>
      Array.from(oldestPullRequests(snapshot), ([state, { number }]) => ({
        labels: [snapshot.repo, snapshot.branch, state],
        value: number,
      })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'pull_requests_blocked'),
    help: (settings) =>
      `Not-ready pull requests in the merge queue by failing readiness rule; a pull request failing several rules counts under each. impacted_targets_missing is API v1 only (API v2's lists do not tell it). ${refreshedBy(REFRESHED_BY.readiness, settings.mergeQueueIntervalSeconds)}`,
    type: 'gauge',
    labelNames: ['repo', 'branch', 'reason'],
    scope: 'target',
    samples: ofMergeQueue((snapshot) =>
      // Without readiness lookups a 0 would claim "nothing blocked"; no series says "unknown".
      snapshot.readinessKnown
        ? samplesByKey([snapshot.repo, snapshot.branch], blockedCounts(snapshot))
        : [],
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'pull_requests_not_mergeable'),
    help: (settings) =>
      `Pull requests in the merge queue by the host's reason they are not mergeable (conflict, behind, draft, awaiting_check, failing_check, review_required, …); a pull request with several reasons counts under each. API v2 only: no series for a queue read through API v1. ${refreshedBy({ v2: REFRESHED_BY.pullRequests.v2 }, settings.mergeQueueIntervalSeconds)}`,
    type: 'gauge',
    labelNames: ['repo', 'branch', 'reason'],
    scope: 'target',
    samples: ofMergeQueue(({ repo, branch, notMergeableReasons }) =>
      samplesByKey([repo, branch], notMergeableReasons ?? []),
    ),
  },
];

/** The pull request that has been in a state longest, and since when (unix seconds). */
export interface OldestPullRequest {
  readonly number: number;
  readonly stateChangedAt: number;
}

/**
 * Per PR state with at least one timestamped PR, the PR with the earliest `stateChangedAt`; of
 * equal timestamps the lowest number (usually the one opened first), so the answer does not
 * depend on the order the API listed them in.
 */
export function oldestPullRequests(snapshot: MergeQueueSnapshot): Map<string, OldestPullRequest> {
  const oldest = new Map<string, OldestPullRequest>();
  for (const { number, state, stateChangedAt } of snapshot.pullRequests) {
    if (stateChangedAt === undefined) continue;
    const current = oldest.get(state);
    if (
      current === undefined ||
      stateChangedAt < current.stateChangedAt ||
      (stateChangedAt === current.stateChangedAt && number < current.number)
    ) {
      oldest.set(state, { number, stateChangedAt });
    }
  }
  return oldest;
}

/**
 * Not-ready PRs per failing readiness rule, every rule the API can tell present (0 when none); a
 * rule it cannot tell (unknownBlockedReasons) has no entry, never a 0.
 */
export function blockedCounts(snapshot: MergeQueueSnapshot): Map<BlockedReason, number> {
  const unknown = new Set(snapshot.unknownBlockedReasons ?? []);
  const counts = new Map<BlockedReason, number>(
    BLOCKED_REASONS.filter((reason) => !unknown.has(reason)).map((reason) => [reason, 0]),
  );
  for (const pr of snapshot.pullRequests) {
    // A Set, so a reason listed twice for one PR still counts that PR once.
    for (const reason of new Set(pr.blockedReasons)) {
      const count = counts.get(reason);
      if (count !== undefined) counts.set(reason, count + 1);
    }
  }
  return counts;
}
