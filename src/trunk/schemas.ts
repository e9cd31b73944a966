import { z } from 'zod';
import { queueCheckNames, queueFlag, queueLabelValue, queueSetting } from './queueSettings.js';
import {
  optionalLabelText,
  optionalValue,
  pullRequestNumber,
  tolerantList,
} from './tolerantSchemas.js';
import type { V2Endpoint } from './v2Schemas.js';

// Response schemas for the three read operations of trunk-api-v1.md, widened where the live
// service is documented to differ (trunk-api-notes.md). Each requires only what a metric or the
// paging reads; fields nobody reads are not declared (any value passes and is dropped), and a read
// field that is absent, null or of another type reads as absent (optionalValue). Enums are plain
// strings on purpose: Trunk says new values may appear at any time, and an unknown value must
// become its own label value rather than a failed poll. A list item that cannot be used at all
// becomes UNUSABLE_ITEM (tolerantSchemas.ts), which responseAnomalies.ts drops and counts, so one
// odd item never costs the page. Timestamps are any string here: responseAnomalies.ts counts
// those that are not RFC 3339 date-times (timestamps.ts), which are then never exported.

export const repoRefSchema = z.object({
  host: z.string().min(1),
  owner: z.string().min(1),
  name: z.string().min(1),
});
export type RepoRef = z.infer<typeof repoRefSchema>;

/**
 * A timestamp field: absent reads as absent, anything but a string (null included) as '', a string
 * that is no date-time, so responseAnomalies.ts counts every unusable timestamp the same way.
 */
const timestampValue = z.string().optional().catch('');

export const enqueuedPullRequestSchema = z.object({
  /** The PR's identity in the queue: an item without it is unusable. */
  prNumber: pullRequestNumber,
  stateChangedAt: timestampValue,
  priorityName: optionalLabelText,
  /** Read by the lookup plan: a new commit is worth a lookup. */
  prSha: optionalValue(z.string()),
  /** Live service only: the same enum as a submitted PR's state. */
  state: optionalLabelText,
});
export type EnqueuedPullRequest = z.infer<typeof enqueuedPullRequestSchema>;

/**
 * What getQueue says of the queue's settings, each read only for a gauge or a label
 * (mergeQueueMetrics.ts): required, yet one of another type (or a number that is a fraction or below its floor) reads
 * as absent and is counted, costing that setting alone (queueSettings.ts).
 */
const queueSettingsShape = {
  concurrency: queueSetting('concurrency'),
  testingTimeoutMinutes: queueSetting('testingTimeoutMinutes'),
  mode: queueLabelValue,
  canOptimisticallyMerge: queueFlag,
  pendingFailureDepth: queueSetting('pendingFailureDepth'),
  batch: queueFlag,
  batchingMaxWaitTimeMinutes: queueSetting('batchingMaxWaitTimeMinutes'),
  batchingMinSize: queueSetting('batchingMinSize'),
  createPrsForTestingBranches: queueFlag,
  commentsEnabled: queueFlag,
  commandsEnabled: queueFlag,
  statusCheckEnabled: queueFlag,
  bisectionConcurrency: queueSetting('bisectionConcurrency'),
  requiredStatuses: queueCheckNames,
  directMergeMode: queueLabelValue,
  optimizationMode: queueLabelValue,
  mergeMethod: queueLabelValue,
};
/** The getQueue fields read as absent when of another type: each counts once as `invalid_field`. */
export const QUEUE_SETTING_FIELDS = Object.keys(
  queueSettingsShape,
) as (keyof typeof queueSettingsShape)[];

/**
 * The most items a getQueue answer may list, far above any real queue. API v1 states no bound, but
 * a list of millions of empty items fits in trunk.maxResponseBytes, and reading it item by item at
 * every poll would hold the event loop, and the scrapes, for seconds: refused before an item is read.
 */
export const V1_MAX_QUEUE_ITEMS = 50_000;

/**
 * A getQueue answer: the queue's state and its PR list are what the queue is counted by, required
 * as they are (a queue without them is a schema mismatch); its settings each cost only themselves.
 */
export const mergeQueueSchema = z.object({
  state: z.string(),
  ...queueSettingsShape,
  enqueuedPullRequests: z
    .array(z.unknown())
    .max(
      V1_MAX_QUEUE_ITEMS,
      `more than ${String(V1_MAX_QUEUE_ITEMS)} items, far more than a merge queue holds`,
    )
    .pipe(tolerantList(enqueuedPullRequestSchema)),
});
/** A getQueue answer as parsed: unusable items still in place (see checkQueue). */
export type MergeQueueResponse = z.infer<typeof mergeQueueSchema>;
/** A getQueue answer with only usable items. */
export type MergeQueue = Omit<MergeQueueResponse, 'enqueuedPullRequests'> & {
  enqueuedPullRequests: EnqueuedPullRequest[];
};

export const readinessSchema = z.object({
  requiresImpactedTargets: optionalValue(z.boolean()),
  doesBaseBranchMatch: optionalValue(z.boolean()),
  hasImpactedTargets: optionalValue(z.boolean()),
  /** The interface document's name for the host mergeability signal. */
  hostMergeability: optionalValue(z.string()),
  /** The live schema's name for the same signal (unspecified | in_progress | mergeable | not_mergeable). */
  gitHubMergeability: optionalValue(z.string()),
});
export type Readiness = z.infer<typeof readinessSchema>;

/** Only its state, readiness and when the state changed are read: every field is optional. */
export const submittedPullRequestSchema = z.object({
  stateChangedAt: timestampValue,
  state: optionalLabelText,
  readiness: optionalValue(readinessSchema),
});
export type SubmittedPullRequest = z.infer<typeof submittedPullRequestSchema>;

/** Any object is a usable row: it counts for its code owners even with nothing else readable. */
export const quarantinedTestSchema = z.object({
  /** With variant, tells a row repeated by offset paging from a new one. */
  test_case_id: optionalValue(z.string()),
  variant: optionalValue(z.string()),
  codeowners: optionalValue(z.array(z.unknown())).transform((owners) =>
    (owners ?? []).filter((owner): owner is string => typeof owner === 'string'),
  ),
  // Added to the live service in late 2025; older deployments may omit it.
  quarantined_at: timestampValue,
});
export type QuarantinedTest = z.infer<typeof quarantinedTestSchema>;

/**
 * The paging reads only the total and the next token. The interface document does not say either
 * is required, and a JSON encoder that leaves out empty values sends neither on an empty list:
 * an absent or null token is the last page, an absent or null total is counted from the rows.
 */
export const pageInfoSchema = z.object({
  total_rows: z.number().int().nonnegative().nullish(),
  next_page_token: z.string().nullish(),
});
export type PageInfo = z.infer<typeof pageInfoSchema>;

export const quarantinedTestsPageSchema = z.object({
  quarantined_tests: tolerantList(quarantinedTestSchema),
  page: pageInfoSchema,
});
/** A quarantine page as parsed: unusable rows still in place (see checkQuarantinedTestsPage). */
export type QuarantinedTestsPageResponse = z.infer<typeof quarantinedTestsPageSchema>;
/** A quarantine page with only usable rows. */
export type QuarantinedTestsPage = Omit<QuarantinedTestsPageResponse, 'quarantined_tests'> & {
  quarantined_tests: QuarantinedTest[];
};

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
