import { z } from 'zod';
import { rfc3339DateTimeSchema } from './timestamps.js';
import type { V2Endpoint } from './v2Schemas.js';

// Response schemas for the three read operations of trunk-api-v1.md, widened where the live
// service is documented to differ (trunk-api-notes.md). Enums are plain strings on purpose: Trunk
// says new values may appear at any time, and an unknown value must become its own label value
// rather than a failed poll. Unknown fields are accepted and dropped. Exported timestamps must be
// RFC 3339 date-times (timestamps.ts); status_last_updated_at is not exported, so not checked.

export const repoRefSchema = z.object({
  host: z.string().min(1),
  owner: z.string().min(1),
  name: z.string().min(1),
});
export type RepoRef = z.infer<typeof repoRefSchema>;

export const enqueuedPullRequestSchema = z.object({
  stateChangedAt: rfc3339DateTimeSchema,
  priorityValue: z.number(),
  priorityName: z.string(),
  skipTheLine: z.boolean(),
  noBatch: z.boolean(),
  prNumber: z.number().int(),
  prTitle: z.string(),
  prSha: z.string(),
  prBaseBranch: z.string(),
  prAuthor: z.string(),
  id: z.string(),
  usedDefaultPriorityName: z.string().optional(),
  /** Live service only: the same enum as a submitted PR's state. */
  state: z.string().optional(),
});
export type EnqueuedPullRequest = z.infer<typeof enqueuedPullRequestSchema>;

export const mergeQueueSchema = z.object({
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
  enqueuedPullRequests: z.array(enqueuedPullRequestSchema),
});
export type MergeQueue = z.infer<typeof mergeQueueSchema>;

export const readinessSchema = z.object({
  requiresImpactedTargets: z.boolean().optional(),
  doesBaseBranchMatch: z.boolean().optional(),
  hasImpactedTargets: z.boolean().optional(),
  /** The interface document's name for the host mergeability signal. */
  hostMergeability: z.string().optional(),
  /** The live schema's name for the same signal (unspecified | in_progress | mergeable | not_mergeable). */
  gitHubMergeability: z.string().optional(),
});
export type Readiness = z.infer<typeof readinessSchema>;

export const submittedPullRequestSchema = z.object({
  stateChangedAt: rfc3339DateTimeSchema,
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
  id: z.string().optional(),
  state: z.string().optional(),
  readiness: readinessSchema.optional(),
  usedDefaultPriorityName: z.string().optional(),
});
export type SubmittedPullRequest = z.infer<typeof submittedPullRequestSchema>;

export const quarantinedTestSchema = z.object({
  name: z.string(),
  // The live service sends null for these three on some test frameworks.
  parent: z.string().nullish(),
  file: z.string().nullish(),
  classname: z.string().nullish(),
  codeowners: z
    .array(z.string())
    .nullish()
    .transform((owners) => owners ?? []),
  // Added to the live service in late 2025; older deployments may omit it.
  quarantined_at: rfc3339DateTimeSchema.optional(),
  status_last_updated_at: z.string().optional(),
  test_case_id: z.string(),
  variant: z.string().nullish(),
  status: z.string().optional(),
  quarantine_setting: z.string().optional(),
});
export type QuarantinedTest = z.infer<typeof quarantinedTestSchema>;

export const pageInfoSchema = z.object({
  total_rows: z.number().int().nonnegative(),
  total_pages: z.number().int().nonnegative(),
  next_page_token: z.string(),
  prev_page_token: z.string(),
  last_page_token: z.string(),
  page_index: z.number().int(),
});
export type PageInfo = z.infer<typeof pageInfoSchema>;

export const quarantinedTestsPageSchema = z.object({
  quarantined_tests: z.array(quarantinedTestSchema),
  page: pageInfoSchema,
});
export type QuarantinedTestsPage = z.infer<typeof quarantinedTestsPageSchema>;

/** The operations of the API, as used in metric labels and error messages. */
export const ENDPOINTS = {
  getQueue: 'getQueue',
  getSubmittedPullRequest: 'getSubmittedPullRequest',
  listQuarantinedTests: 'flaky-tests/list-quarantined-tests',
} as const;
/** An API v1 operation or an API v2 read (v2Schemas.ts). */
export type Endpoint = (typeof ENDPOINTS)[keyof typeof ENDPOINTS] | V2Endpoint;

/** The largest page size the live API accepts for the quarantine list (it takes 1..100). */
export const MAX_PAGE_SIZE = 100;

/** The smallest page size the live API accepts: enough to read `page.total_rows`. */
export const MIN_PAGE_SIZE = 1;
