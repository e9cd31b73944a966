// The seed's field list: every field trunk-api-v1.md documents, with its type, exactly as the
// simulator's default output carries it. Stricter than the client's schemas, which require only
// what a metric or the paging reads.
import { z } from 'zod';

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
