// Merge-queue snapshots written as one line per PR, and histograms as compact summaries, for the
// flow tests that work out every expected count by hand.
import { cumulativeBuckets, type HistogramCounts } from '../../src/snapshot/histogram.js';
import type { QueueFlow } from '../../src/snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../../src/snapshot/types.js';

/** A PR of a scripted poll: number, state, stateChangedAt. */
export type ScriptedPullRequest = readonly [number, string, number | undefined];

/** A snapshot of github.com/acme/web main taken at `takenAt`, listing `pullRequests`. */
export function poll(
  takenAt: number,
  state: string,
  pullRequests: readonly ScriptedPullRequest[],
): MergeQueueSnapshot {
  return {
    kind: 'merge_queue',
    repo: 'github.com/acme/web',
    branch: 'main',
    takenAt,
    state,
    mode: 'single',
    mergeMethod: 'squash',
    directMergeMode: 'off',
    optimizationMode: 'off',
    concurrency: 2,
    testingTimeoutSeconds: 3600,
    pendingFailureDepth: 0,
    bisectionConcurrency: 1,
    batchingMaxWaitSeconds: 0,
    batchingMinSize: 1,
    requiredStatuses: 1,
    settings: {
      batch: false,
      can_optimistically_merge: false,
      create_prs_for_testing_branches: false,
      comments: true,
      commands: true,
      status_check: true,
    },
    pullRequests: pullRequests.map(([number, prState, stateChangedAt]) => ({
      number,
      state: prState,
      priorityName: 'medium',
      priorityValue: 100,
      stateChangedAt,
      sha: `sha${number}`,
      skipTheLine: false,
      blockedReasons: [],
    })),
    readinessKnown: true,
  };
}

/** count, sum and the non-zero cumulative buckets, for compact exact comparisons. */
export function summary(histogram: HistogramCounts | undefined) {
  if (histogram === undefined) return undefined;
  return {
    count: histogram.count,
    sum: histogram.sum,
    buckets: cumulativeBuckets(histogram).map(({ le, count }) => `${le}:${count}`),
  };
}

/** The ledger's transition counts as `from->to`. */
export function transitions(flow: QueueFlow): Record<string, number> {
  return Object.fromEntries(
    [...flow.counts.transitions.values()].map(({ from, to, count }) => [`${from}->${to}`, count]),
  );
}
