import { describe, expect, it } from 'vitest';
import { blockedCounts, earliestStateChanges } from '../../src/metrics/mergeQueueMetrics.js';
import type { MergeQueueSnapshot, PullRequestSnapshot } from '../../src/snapshot/types.js';

function pullRequest(overrides: Partial<PullRequestSnapshot>): PullRequestSnapshot {
  return {
    number: 1,
    state: 'not_ready',
    priorityName: 'medium',
    stateChangedAt: undefined,
    blockedReasons: [],
    ...overrides,
  };
}

function queue(pullRequests: PullRequestSnapshot[]): MergeQueueSnapshot {
  return {
    kind: 'merge_queue',
    repo: 'github.com/acme/widgets',
    branch: 'main',
    takenAt: 0,
    state: 'running',
    mode: 'single',
    mergeMethod: 'squash',
    directMergeMode: 'off',
    optimizationMode: 'off',
    concurrency: 1,
    testingTimeoutSeconds: 60,
    pendingFailureDepth: 0,
    bisectionConcurrency: 1,
    batchingMaxWaitSeconds: 0,
    batchingMinSize: 1,
    requiredStatuses: 0,
    settings: {
      batch: false,
      can_optimistically_merge: false,
      create_prs_for_testing_branches: false,
      comments: false,
      commands: false,
      status_check: false,
    },
    pullRequests,
    readinessKnown: true,
  };
}

describe('blockedCounts', () => {
  it('counts each PR once per failing rule, under every rule it fails', () => {
    const counts = blockedCounts(
      queue([
        pullRequest({ blockedReasons: ['not_mergeable', 'not_mergeable'] }),
        pullRequest({ blockedReasons: ['not_mergeable', 'base_branch_mismatch'] }),
      ]),
    );
    expect([...counts]).toEqual([
      ['base_branch_mismatch', 1],
      ['not_mergeable', 2],
      ['impacted_targets_missing', 0],
    ]);
  });
});

describe('earliestStateChanges', () => {
  it('takes the earliest timestamp per state and skips PRs without one', () => {
    const earliest = earliestStateChanges(
      queue([
        pullRequest({ state: 'testing', stateChangedAt: 300 }),
        pullRequest({ state: 'testing', stateChangedAt: 100 }),
        pullRequest({ state: 'testing', stateChangedAt: undefined }),
        pullRequest({ state: 'pending', stateChangedAt: undefined }),
      ]),
    );
    expect([...earliest]).toEqual([['testing', 100]]);
  });
});
