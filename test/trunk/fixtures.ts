// Response bodies as the live API sends them (interface document plus trunk-api-notes.md extras).

/** A getQueue answer with three enqueued PRs. */
export function queueResponse(): Record<string, unknown> {
  const pr = (prNumber: number, state: string): Record<string, unknown> => ({
    stateChangedAt: '2025-11-20T10:00:00Z',
    priorityValue: 100,
    priorityName: 'medium',
    skipTheLine: false,
    noBatch: false,
    prNumber,
    prTitle: `Change ${prNumber}`,
    prSha: `sha${prNumber}`,
    prBaseBranch: 'main',
    prAuthor: 'alice',
    id: `id-${prNumber}`,
    usedDefaultPriorityName: 'medium',
    state,
  });
  return {
    state: 'running',
    branch: 'main',
    concurrency: 3,
    testingTimeoutMinutes: 60,
    mode: 'parallel',
    canOptimisticallyMerge: true,
    pendingFailureDepth: 1,
    batch: false,
    batchingMaxWaitTimeMinutes: 0,
    batchingMinSize: 1,
    createPrsForTestingBranches: true,
    commentsEnabled: true,
    commandsEnabled: true,
    statusCheckEnabled: true,
    bisectionConcurrency: 2,
    requiredStatuses: ['ci/build'],
    directMergeMode: 'off',
    optimizationMode: 'off',
    mergeMethod: 'squash',
    enqueuedPullRequests: [pr(11, 'testing'), pr(12, 'pending'), pr(13, 'not_ready')],
  };
}

/** A getSubmittedPullRequest answer. */
export function pullRequestResponse(): Record<string, unknown> {
  return {
    stateChangedAt: '2025-11-20T10:00:00Z',
    priorityValue: 0,
    priorityName: 'urgent',
    skipTheLine: true,
    forceEnqueued: false,
    isCurrentlySubmittedToQueue: true,
    prNumber: 2147483647,
    prTitle: 'Hotfix',
    prSha: 'abc123',
    prBaseBranch: 'main',
    prAuthor: 'bob',
    id: 'pr-1',
    state: 'testing',
    readiness: {
      requiresImpactedTargets: true,
      doesBaseBranchMatch: true,
      hasImpactedTargets: true,
      gitHubMergeability: 'mergeable',
    },
    usedDefaultPriorityName: 'medium',
  };
}

/** A list-quarantined-tests answer with one test. */
export function quarantinePageResponse(): Record<string, unknown> {
  return {
    quarantined_tests: [
      {
        name: 'renders the header',
        parent: 'Header',
        file: 'src/header.test.ts',
        classname: null,
        codeowners: ['@acme/frontend'],
        quarantined_at: '2025-11-01T00:00:00Z',
        status_last_updated_at: '2025-11-02T00:00:00Z',
        test_case_id: 'tc-1',
        variant: '',
        status: 'FLAKY',
        quarantine_setting: 'AUTO_QUARANTINE',
      },
    ],
    page: {
      total_rows: 1,
      total_pages: 1,
      next_page_token: '',
      prev_page_token: '',
      last_page_token: 'last',
      page_index: 0,
    },
  };
}
