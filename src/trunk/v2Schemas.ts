import { z } from 'zod';
import { queueCheckNames, queueFlag, queueLabelValue, queueSetting } from './queueSettings.js';
import {
  optionalLabelText,
  optionalValue,
  pullRequestNumber,
  tolerantList,
  wholeNumberFromZero,
  type UNUSABLE_ITEM,
} from './tolerantSchemas.js';

// Response schemas of the API v2 reads (trunk-api-v2.md). Tolerant like the v1 ones: only what a
// metric or the paging needs is required, unknown fields are dropped, and enums are plain strings
// (Trunk adds members without a new version; v2Vocabulary.ts turns each into a label value).

/** The labels of API v2 reads in `trunk_exporter_api_requests_total{endpoint}` and in errors. */
export const V2_ENDPOINTS = {
  listMergeQueues: 'v2/merge-queues',
  getMergeQueue: 'v2/merge-queues/{id}',
  listQueuePullRequests: 'v2/merge-queues/{id}/pull-requests',
  listTests: 'v2/tests',
  /** The test list's path before 2026-10-06, which Trunk's published definition still names. */
  listTestCases: 'v2/test-cases',
  getRepository: 'v2/repositories/{id}',
  findRepositories: 'v2/repositories',
  listTestingResults: 'v2/merge-queues/{id}/testing-results',
  listTestCollections: 'v2/test-collections',
  listVerificationRuns: 'v2/merge-queues/{id}/verification-runs',
  getVerificationRun: 'v2/merge-queue-verification-runs/{id}',
  listQueueEntryHistory: 'v2/queue-entry-history',
} as const;
export type V2Endpoint = (typeof V2_ENDPOINTS)[keyof typeof V2_ENDPOINTS];

/** The largest `limit` a v2 list takes, and the most rows a page holds (`maxItems` of every list). */
export const V2_MAX_LIMIT = 100;

/** Every v2 list's envelope: `{ data, nextCursor, hasMore }`. */
function pageEnvelope<D extends z.ZodType>(data: D) {
  return z.object({ data, nextCursor: z.string().nullish(), hasMore: z.boolean().optional() });
}

/**
 * A page of a v2 list that is walked. Rows are read as v1's list items are: a row that does not
 * fit is UNUSABLE_ITEM, dropped and counted (responseAnomalies.ts). A page of more rows than any
 * page holds is no page of Trunk's, and a walk cannot tell which of them the next page repeats:
 * refused before a row is parsed.
 */
export function v2PageSchema<T extends z.ZodType>(row: T) {
  return pageEnvelope(
    z
      .array(z.unknown())
      .max(V2_MAX_LIMIT, `more than ${String(V2_MAX_LIMIT)} rows, the most a page holds`)
      .pipe(tolerantList(row)),
  );
}

/**
 * The one page of a list read as one page (the test collections): a page longer than asked for is
 * read as far as the limit by its reader, as if it had said there were more.
 */
export function v2OnePageSchema<T extends z.ZodType>(row: T) {
  return pageEnvelope(tolerantList(row));
}
/** A v2 page as parsed: unusable rows still in place (see checkV2Page). */
export interface V2PageResponse<T> extends Omit<V2Page<T>, 'data'> {
  readonly data: readonly (T | typeof UNUSABLE_ITEM)[];
}
/** A v2 page with only usable rows. */
export interface V2Page<T> {
  readonly data: readonly T[];
  readonly nextCursor?: string | null | undefined;
  readonly hasMore?: boolean | undefined;
}

/**
 * An id the exporter puts in a request's path (a queue's, a run's, a repository's). `.` and `..`
 * would name another path (URLs resolve dot segments, percent-encoded too), so a row with one
 * cannot be read by it and is left out, counted as `invalid_item`.
 */
export const v2PathIdSchema = z
  .string()
  .min(1)
  .refine((id) => id !== '.' && id !== '..', { error: 'a dot segment cannot name a path' });

/**
 * A timestamp field: absent or null reads as absent (v2 leaves them open), any other non-string as
 * '', which is no date-time, so responseAnomalies.ts counts it as v1's unusable timestamps are.
 */
const timestampValue = z.string().nullish().catch('');

/**
 * A queue's `config` (`MergeQueueConfig`): each setting read is read only for a gauge or a label
 * and required by the definition, yet one of another type (or a number that is a fraction or below its floor) reads as
 * absent and is counted, costing that setting alone (queueSettings.ts).
 */
const v2QueueConfigShape = {
  concurrency: queueSetting('concurrency'),
  bisectionConcurrency: queueSetting('bisectionConcurrency'),
  pendingFailureDepth: queueSetting('pendingFailureDepth'),
  canOptimisticallyMerge: queueFlag,
  allowBatching: queueFlag,
  batchingMaxWaitTimeMinutes: queueSetting('batchingMaxWaitTimeMinutes'),
  batchingMinSize: queueSetting('batchingMinSize'),
  testingTimeoutMinutes: queueSetting('testingTimeoutMinutes'),
  createsPrsForTestingBranches: queueFlag,
  areCommentsEnabled: queueFlag,
  areCommandsEnabled: queueFlag,
  isStatusCheckEnabled: queueFlag,
  requiredStatuses: queueCheckNames,
  directMergeMode: queueLabelValue,
  optimizationMode: queueLabelValue,
  mergeMethod: queueLabelValue,
};
/** The `config` fields read as absent when of another type: each counts once as `invalid_field`. */
export const V2_QUEUE_CONFIG_FIELDS = Object.keys(
  v2QueueConfigShape,
) as (keyof typeof v2QueueConfigShape)[];
export const v2QueueConfigSchema = z.object(v2QueueConfigShape);

/**
 * A merge queue: its id, repository, branch and state are what it is found and counted by,
 * required as they are (a row without them is left out); its `mode` and `config` cost only
 * themselves, but a row without its `config` is not the queue's.
 */
export const v2MergeQueueSchema = z.object({
  id: v2PathIdSchema,
  repositoryId: z.string().optional(),
  /** `https://github.com/acme/web`: with targetBranch, the queue's (repo, branch) key. */
  repositoryUrl: z.string().min(1),
  targetBranch: z.string().min(1),
  state: z.string(),
  mode: queueLabelValue,
  config: v2QueueConfigSchema,
});
export type V2MergeQueue = z.infer<typeof v2MergeQueueSchema>;
export const v2MergeQueuePageSchema = v2PageSchema(v2MergeQueueSchema);

export const v2MergeabilityReasonSchema = z.object({ code: z.string() });

// Only the signals a blocked reason is told from: `hasImpactedTargets` is absent on list reads, so
// impacted targets are not told through v2 (V2_UNKNOWN_BLOCKED_REASONS) and neither field is read.
export const v2ReadinessSchema = z.object({
  doesBaseBranchMatch: optionalValue(z.boolean()),
  mergeability: optionalValue(z.string()),
  mergeabilityDetails: optionalValue(
    z.object({ reasons: optionalValue(z.array(v2MergeabilityReasonSchema)) }),
  ),
});
export type V2Readiness = z.infer<typeof v2ReadinessSchema>;

export const v2QueueEntrySchema = z.object({
  // An exit read tells entries apart by id and counts time in queue from createdAt; without them
  // it falls back to the PR number and to the polls' estimate.
  id: optionalValue(z.string()),
  createdAt: timestampValue,
  state: z.string(),
  // A timestamp that is not an RFC 3339 string is counted and not exported, never a failed poll.
  stateChangedAt: timestampValue,
  // The label's only source: `priorityValue` is not read, as the definition says not to infer a
  // name from it.
  priorityName: optionalLabelText,
  readiness: optionalValue(v2ReadinessSchema),
});

const v2PullRequestFields = { number: pullRequestNumber, queueEntry: v2QueueEntrySchema };
export const v2PullRequestSchema = z.object({
  // The pull request's id, what its queue-entry history is read by; a row without one (or with an
  // empty one: v2MergeQueuePoll.ts) is not read. No length check here: zod's checks allocate per row.
  id: optionalValue(z.string()),
  ...v2PullRequestFields,
});
export type V2PullRequest = z.infer<typeof v2PullRequestSchema>;
export const v2PullRequestPageSchema = v2PageSchema(v2PullRequestSchema);
/** The rows without their id, for the reads that do not ask for histories: a field parsed per row costs. */
export const v2PullRequestWithoutIdPageSchema = v2PageSchema(z.object(v2PullRequestFields));

/** The windows of Trunk's per-test metrics (`period` with `include=metrics`). */
export const V2_TEST_METRICS_PERIODS = ['1d', '7d', '14d', '30d'] as const;
export type V2TestMetricsPeriod = (typeof V2_TEST_METRICS_PERIODS)[number];

/**
 * A test's metrics in the asked period (`TestCaseMetrics`): the counts the cost families sum. The
 * definition requires them; one missing or not a count reads as absent and adds nothing.
 */
const v2TestMetricsSchema = z.object({
  failureCount: optionalValue(wholeNumberFromZero),
  runCount: optionalValue(wholeNumberFromZero),
  prsImpacted: optionalValue(wholeNumberFromZero),
});

export const v2TestSchema = z.object({
  /** The test's id (empty reads as none): a walk over a list that moves may list a test twice. */
  id: optionalValue(z.string()),
  repoId: v2PathIdSchema,
  /** `healthy`, `flaky` or `broken` (Trunk may add more): read by the unhealthy-tests walk. */
  status: optionalValue(z.string()),
  /** `quarantined` or `notQuarantined`: a row of the quarantine walk must be the first. */
  quarantineState: optionalValue(z.string()),
  codeowners: optionalValue(z.array(z.string())).transform((owners) => owners ?? []),
  // Since 2026-10-26; older answers lack it, and then statusSince says since when.
  quarantinedSince: timestampValue,
  statusSince: timestampValue,
  // "Returned only when `include=metrics` is set. Null when the test had no runs in `period`."
  // Absent (undefined) and null (no runs) differ; anything else reads as absent.
  metrics: z.union([v2TestMetricsSchema, z.null()]).optional().catch(undefined),
});
export type V2Test = z.infer<typeof v2TestSchema>;
export const v2TestPageSchema = v2PageSchema(v2TestSchema);

/**
 * `GET /v2/repositories/{id}`: what names the repository (v2RepositoryName.ts). `host` is null for
 * a repository on its provider's default host (most of them); `url` names the host otherwise.
 */
export const v2RepositorySchema = z.object({
  provider: optionalValue(z.string()),
  host: optionalValue(z.string()),
  /** `owner/name` (GitLab subgroups make it longer: such a repository has no `host/owner/name`). */
  path: z.string(),
  url: optionalValue(z.string()),
});
export type V2Repository = z.infer<typeof v2RepositorySchema>;
/** `GET /v2/repositories?providerUrl=…`: any row says a repository is there; none of its fields is read. */
export const v2RepositoryMatchPageSchema = v2PageSchema(z.object({}));

/** Live queue-entry states: the PRs a merge-queue poll reads. */
export const V2_LIVE_ENTRY_STATES = [
  'notReady',
  'pending',
  'testing',
  'testsPassed',
  'pendingFailure',
] as const;

/** Final queue-entry states: how a PR left the queue. */
export const V2_FINAL_ENTRY_STATES = ['merged', 'failed', 'cancelled'] as const;

/** How a stretch of testing ended (`TestingOutcome`); another value counts as `other`. */
export const V2_TESTING_OUTCOMES = ['passed', 'failed', 'interrupted', 'cancelled'] as const;

/**
 * One pull request's stretch of testing (`TestingResult`). What the testing families need and a
 * row's identity rest on is required; outcome and entryConclusion may be absent (no
 * classification), and the run id is absent on results older than runs. entryConclusion tells how
 * an entry ended that concluded and was submitted again between two polls (v2Resubmissions.ts).
 */
export const v2TestingResultSchema = z.object({
  pullRequestNumber,
  // Not optional: the incremental read places each row by it (an unparseable one is counted).
  endedAt: z.string(),
  // "type": "integer", "minimum": 0: a fraction leaves the row out, as a negative duration does;
  // 10^308 ms is observed as the histogram's largest value (snapshot/histogram.ts, MAX_OBSERVATION).
  testingDurationMs: wholeNumberFromZero,
  outcome: optionalValue(z.string()),
  entryConclusion: optionalValue(z.string()),
  isBisection: z.boolean(),
  startedBisection: z.boolean(),
  verificationRunId: optionalValue(z.string()),
});
export type V2TestingResult = z.infer<typeof v2TestingResultSchema>;
export const v2TestingResultPageSchema = v2PageSchema(v2TestingResultSchema);

/** The most test collections read, one page at the largest limit: the rest are left out. */
export const V2_MAX_TEST_COLLECTIONS = V2_MAX_LIMIT;

/** A test collection (`TestCollection`): what its two families show. */
export const v2TestCollectionSchema = z.object({
  /** The collection's id (empty reads as none): a walk over a list that moves may list it twice. */
  id: optionalValue(z.string()),
  name: z.string(),
  testCaseCount: wholeNumberFromZero,
  quarantineEnabled: z.boolean(),
});
export type V2TestCollection = z.infer<typeof v2TestCollectionSchema>;
export const v2TestCollectionPageSchema = v2OnePageSchema(v2TestCollectionSchema);
