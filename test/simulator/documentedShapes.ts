// The seed's field list: every field trunk-api-v1.md documents, with its type, exactly as the
// simulator's default output carries it, and the live flavour's extras. Stricter than the client's
// schemas, which require only what a metric or the paging reads: unknown keys fail.
import { z } from 'zod';
import { KNOWN_PULL_REQUEST_STATES, KNOWN_QUEUE_STATES } from '../../src/snapshot/types.js';

const iso = z.iso.datetime();

/** An enqueuedPullRequests item (trunk-api-v1.md 2.6). */
export const documentedQueueItem = z
  .object({
    stateChangedAt: iso,
    priorityValue: z.number(),
    priorityName: z.string(),
    skipTheLine: z.boolean(),
    noBatch: z.boolean(),
    prNumber: z.number().int(),
    prTitle: z.string(),
    prSha: z.string().regex(/^[0-9a-f]{40}$/),
    prBaseBranch: z.string(),
    prAuthor: z.string(),
    id: z.string(),
    usedDefaultPriorityName: z.string().optional(),
  })
  .strict();

/** A getQueue answer (trunk-api-v1.md 2.5) with its items of `item`'s shape. */
export function documentedQueue(item: z.ZodType) {
  return z
    .object({
      state: z.string(),
      branch: z.string(),
      concurrency: z.number(),
      testingTimeoutMinutes: z.number(),
      mode: z.string(),
      canOptimisticallyMerge: z.boolean(),
      pendingFailureDepth: z.number(),
      batch: z.boolean(),
      batchingMaxWaitTimeMinutes: z.number(),
      batchingMinSize: z.number(),
      createPrsForTestingBranches: z.boolean(),
      commentsEnabled: z.boolean(),
      commandsEnabled: z.boolean(),
      statusCheckEnabled: z.boolean(),
      bisectionConcurrency: z.number(),
      requiredStatuses: z.array(z.string()),
      directMergeMode: z.string(),
      optimizationMode: z.string(),
      mergeMethod: z.string(),
      enqueuedPullRequests: z.array(item),
    })
    .strict();
}

/** A getSubmittedPullRequest answer (trunk-api-v1.md 2.7) without its readiness. */
export const documentedSubmittedPullRequest = z
  .object({
    stateChangedAt: iso,
    priorityValue: z.number(),
    priorityName: z.string(),
    skipTheLine: z.boolean(),
    forceEnqueued: z.boolean(),
    isCurrentlySubmittedToQueue: z.boolean(),
    prNumber: z.number().int(),
    prTitle: z.string(),
    prSha: z.string(),
    prBaseBranch: z.string(),
    prAuthor: z.string(),
    id: z.string(),
    state: z.string(),
    usedDefaultPriorityName: z.string().optional(),
  })
  .strict();

/** A quarantine row (trunk-api-v1.md 2.3). */
export const documentedQuarantinedTest = z
  .object({
    name: z.string(),
    parent: z.string(),
    file: z.string(),
    classname: z.string(),
    codeowners: z.array(z.string().regex(/^@acme\//)),
    quarantined_at: iso,
    status_last_updated_at: iso,
    test_case_id: z.string().min(1),
    variant: z.string(),
  })
  .strict();

/** A quarantine page's `page` (trunk-api-v1.md 2.4). */
export const documentedPageInfo = z
  .object({
    total_rows: z.number().int().nonnegative(),
    total_pages: z.number().int().nonnegative(),
    next_page_token: z.string(),
    prev_page_token: z.string(),
    last_page_token: z.string(),
    page_index: z.number().int(),
  })
  .strict();

/** A list-quarantined-tests answer (trunk-api-v1.md 4.1). */
export const documentedQuarantinePage = z
  .object({ quarantined_tests: z.array(documentedQuarantinedTest), page: documentedPageInfo })
  .strict();

const liveQueueItem = documentedQueueItem
  .extend({ state: z.enum(KNOWN_PULL_REQUEST_STATES) })
  .strict();

function queueShape(item: typeof documentedQueueItem | typeof liveQueueItem) {
  return documentedQueue(item)
    .extend({
      state: z.enum(KNOWN_QUEUE_STATES),
      mode: z.enum(['single', 'parallel']),
      directMergeMode: z.enum(['off', 'always']),
      optimizationMode: z.enum(['off', 'bisection_skip_redundant_tests']),
      mergeMethod: z.enum(['merge_commit', 'squash', 'rebase']),
      enqueuedPullRequests: z.array(item),
    })
    .strict();
}

/** The simulator's getQueue answer, per flavour. */
export const QUEUE_SHAPES = {
  documented: queueShape(documentedQueueItem),
  live: queueShape(liveQueueItem),
};

const readinessSignals = {
  requiresImpactedTargets: z.boolean(),
  doesBaseBranchMatch: z.boolean(),
  hasImpactedTargets: z.boolean(),
};

/** The simulator's getSubmittedPullRequest answer, per flavour. */
export const SUBMITTED_SHAPES = {
  documented: documentedSubmittedPullRequest
    .extend({
      state: z.enum(KNOWN_PULL_REQUEST_STATES),
      readiness: z
        .object({ ...readinessSignals, hostMergeability: z.enum(['mergeable', 'not_mergeable']) })
        .strict(),
    })
    .strict(),
  live: documentedSubmittedPullRequest
    .extend({
      state: z.enum(KNOWN_PULL_REQUEST_STATES),
      readiness: z
        .object({
          ...readinessSignals,
          gitHubMergeability: z.enum(['unspecified', 'in_progress', 'mergeable', 'not_mergeable']),
        })
        .strict(),
    })
    .strict(),
};

/** The simulator's list-quarantined-tests answer, per flavour. */
export const PAGE_SHAPES = {
  documented: documentedQuarantinePage,
  live: z
    .object({
      quarantined_tests: z.array(
        documentedQuarantinedTest
          .extend({
            parent: z.string().nullable(),
            file: z.string().nullable(),
            classname: z.string().nullable(),
            status: z.enum(['HEALTHY', 'FLAKY', 'BROKEN']),
            quarantine_setting: z.enum(['ALWAYS_QUARANTINE', 'AUTO_QUARANTINE']),
          })
          .strict(),
      ),
      page: documentedPageInfo,
    })
    .strict(),
};
