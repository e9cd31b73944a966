import { describe, expect, it } from 'vitest';
import { blockedCounts, oldestPullRequests } from '../../src/metrics/mergeQueueMetrics.js';
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

describe('oldestPullRequests', () => {
  it('takes the PR with the earliest timestamp per state and skips PRs without one', () => {
    const oldest = oldestPullRequests(
      queue([
        pullRequest({ number: 7, state: 'testing', stateChangedAt: 300 }),
        pullRequest({ number: 8, state: 'testing', stateChangedAt: 100 }),
        pullRequest({ number: 6, state: 'testing', stateChangedAt: undefined }),
        pullRequest({ number: 5, state: 'pending', stateChangedAt: undefined }),
      ]),
    );
    expect([...oldest]).toEqual([['testing', { number: 8, stateChangedAt: 100 }]]);
  });

  it('takes the lowest number of equal timestamps, whatever order the PRs come in', () => {
    const prs = [
      pullRequest({ number: 42, state: 'not_ready', stateChangedAt: 100 }),
      pullRequest({ number: 17, state: 'not_ready', stateChangedAt: 100 }),
      pullRequest({ number: 30, state: 'not_ready', stateChangedAt: 100 }),
    ];
    for (const order of [prs, [...prs].reverse()]) {
      expect(oldestPullRequests(queue(order)).get('not_ready')).toEqual({
        number: 17,
        stateChangedAt: 100,
      });
    }
  });
});
