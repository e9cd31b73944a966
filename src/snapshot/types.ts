// Immutable, already-interpreted results of one poll of one target. The poller builds them from API
// responses; the metrics layer renders them. Nothing here refers to HTTP, zod or prom-client.
import type { QueueFlow } from './queueFlowTypes.js';
import type { TestCollections, TestCost } from './testCostTypes.js';
import type { TestingAttempts } from './testingAttemptTypes.js';
import type { VerificationRuns } from './verificationRunTypes.js';
import type { WebhookCounts } from './webhookCounts.js';

/** The two things polled per target, as used in the `kind` label. */
export type PollKind = 'merge_queue' | 'flaky_tests';

/** One polled thing: a merge queue (repo, branch) or a repo's quarantine list (branch ''). */
export interface Target {
  readonly kind: PollKind;
  /** `host/owner/name`. */
  readonly repo: string;
  /** Target branch; '' for `flaky_tests`, which is per repository. */
  readonly branch: string;
  /** Found through API v2 discovery rather than listed in the file (the landing page says so). */
  readonly discovered?: boolean;
}

/** Stable key of a target, for maps. */
export function targetKey(target: Target): string {
  return `${target.kind}\u0000${target.repo}\u0000${target.branch}`;
}

/** Queue states named by the interface document; others are passed through as-is. */
export const KNOWN_QUEUE_STATES = ['running', 'paused', 'draining', 'switching_modes'] as const;

/** Pull request states named by the interface document; others are passed through as-is. */
export const KNOWN_PULL_REQUEST_STATES = [
  'not_ready',
  'pending',
  'testing',
  'tests_passed',
  'merged',
  'failed',
  'cancelled',
  'pending_failure',
] as const;

/**
 * The priority a pull request submitted without one gets: of the names Trunk documents (urgent 0,
 * high 10, medium 100, low 200), `medium` = 100 is "the default".
 */
export const DEFAULT_PRIORITY_NAME = 'medium';

/** The PR state used when neither the queue item nor a lookup says what it is. */
export const UNKNOWN_STATE = 'unknown';

/** The priority name used when the queue item has none. */
export const UNKNOWN_PRIORITY = 'unknown';

/**
 * A queue's mode or method in `trunk_merge_queue_info` when Trunk sent it as another type than a
 * string, or an empty one (trunk/queueSettings.ts), and its state when Trunk sent an empty one: no
 * value Trunk documents for any of them.
 */
export const UNKNOWN_QUEUE_VALUE = 'unknown';

/** Readiness rules of trunk-api-v1.md 2.7 that can keep a `not_ready` PR from testing. */
export const BLOCKED_REASONS = [
  'base_branch_mismatch',
  'not_mergeable',
  'impacted_targets_missing',
] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

/**
 * The host's reasons a PR is not mergeable (API v2 `mergeabilityDetails.reasons[].code`, in v1's
 * snake_case), each always exported; other codes follow as they come, at most
 * MAX_UNKNOWN_NOT_MERGEABLE_REASONS per queue, the rest counted as `other`.
 */
export const NOT_MERGEABLE_REASONS = [
  'conflict',
  'behind',
  'draft',
  'closed',
  'pending',
  'awaiting_check',
  'failing_check',
  'review_required',
  'changes_requested',
  'stack_needs_rebase',
  'other',
] as const;
export const MAX_UNKNOWN_NOT_MERGEABLE_REASONS = 20;

/** Queue settings exported as `trunk_merge_queue_setting_enabled{setting}`. */
export const QUEUE_SETTINGS = [
  'batch',
  'can_optimistically_merge',
  'create_prs_for_testing_branches',
  'comments',
  'commands',
  'status_check',
] as const;
export type QueueSetting = (typeof QUEUE_SETTINGS)[number];

export interface PullRequestSnapshot {
  readonly number: number;
  /** API v2: the pull request's id (lowercase), by which its queue-entry history is read. */
  readonly pullRequestId?: string | undefined;
  /** From the queue item, else from getSubmittedPullRequest, else `unknown`. */
  readonly state: string;
  /** From the queue item, else `unknown`. */
  readonly priorityName: string;
  /** Unix seconds; undefined when the API sent no parseable timestamp. */
  readonly stateChangedAt: number | undefined;
  /** Failing readiness rules; empty unless the PR is `not_ready` and its readiness was looked up. */
  readonly blockedReasons: readonly BlockedReason[];
}

export interface MergeQueueSnapshot {
  readonly kind: 'merge_queue';
  readonly repo: string;
  readonly branch: string;
  /** Unix seconds when the poll that produced this snapshot finished. */
  readonly takenAt: number;
  readonly state: string;
  /** Each of the four `unknown` (UNKNOWN_QUEUE_VALUE) when Trunk sent it as another type or empty. */
  readonly mode: string;
  readonly mergeMethod: string;
  readonly directMergeMode: string;
  readonly optimizationMode: string;
  // Each setting undefined when Trunk sent it as another type, or a number that is a fraction or
  // below its floor (trunk/queueSettings.ts): its series is then absent.
  readonly concurrency: number | undefined;
  readonly testingTimeoutSeconds: number | undefined;
  readonly pendingFailureDepth: number | undefined;
  readonly bisectionConcurrency: number | undefined;
  readonly batchingMaxWaitSeconds: number | undefined;
  readonly batchingMinSize: number | undefined;
  readonly requiredStatuses: number | undefined;
  readonly settings: Readonly<Record<QueueSetting, boolean | undefined>>;
  readonly pullRequests: readonly PullRequestSnapshot[];
  /** False when readiness was not looked up (pullRequestDetails off): blocked counts are unknown. */
  readonly readinessKnown: boolean;
  /**
   * Readiness rules the API cannot tell of this queue's PRs, whose counts are unknown: API v2's
   * list rows leave `hasImpactedTargets` out, so `impacted_targets_missing` through v2.
   */
  readonly unknownBlockedReasons?: readonly BlockedReason[] | undefined;
  /** PRs per host reason for not being mergeable (API v2 only; undefined from API v1). */
  readonly notMergeableReasons?: ReadonlyMap<string, number> | undefined;
  /**
   * API v2 with `reads.verificationRuns` on: the queue's verification runs since the exporter
   * started, carried from each poll's snapshot to the next.
   */
  readonly verificationRuns?: VerificationRuns | undefined;
}

/**
 * The byCodeowner key of tests that have no code owner: the empty string, which no real owner is
 * (an empty owner name counts as none), so an owner literally named `none` stays apart.
 */
export const NO_CODEOWNER = '';

/** `window` label values of trunk_flaky_tests_quarantined_recently, with their length in seconds. */
export const QUARANTINE_WINDOWS = [
  ['1d', 86_400],
  ['7d', 7 * 86_400],
] as const;

/** `age` label values of trunk_flaky_tests_quarantined_older_than, with their length in seconds. */
export const QUARANTINE_AGES = [
  ['7d', 7 * 86_400],
  ['30d', 30 * 86_400],
  ['90d', 90 * 86_400],
] as const;

/** Statuses of trunk_flaky_tests_unhealthy (API v2, Trunk's spelling); another one Trunk adds is `other`. */
export const UNHEALTHY_STATUSES = ['flaky', 'broken'] as const;

/** The `status` label of an unhealthy test whose status is none of UNHEALTHY_STATUSES. */
export const OTHER_STATUS = 'other';

/** `window` label values of trunk_flaky_tests_unhealthy_recently, with their length in seconds. */
export const UNHEALTHY_WINDOWS = [
  ['1d', 86_400],
  ['7d', 7 * 86_400],
] as const;

/** A repository's flaky and broken tests (API v2 `GET /v2/tests?status=flaky,broken`), by status. */
export interface UnhealthyTests {
  /** Tests per status: every UNHEALTHY_STATUSES entry, `other` when Trunk sent another. */
  readonly byStatus: ReadonlyMap<string, number>;
  /** Per status: tests per code owner (NO_CODEOWNER for none); a test with several owners counts for each. */
  readonly byCodeowner: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Per status: the earliest `statusSince` (unix seconds); absent when no test carries one. */
  readonly oldestSince: ReadonlyMap<string, number>;
  /** Per status: per UNHEALTHY_WINDOWS label, tests whose status began within it. */
  readonly recently: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** What they cost over Trunk's metrics window; undefined when read without metrics. */
  readonly cost?: TestCost | undefined;
}

/**
 * A repository's quarantined tests: API v1's `list-quarantined-tests`, or API v2's
 * `GET /v2/tests?quarantineState=quarantined` grouped by repository.
 */
export interface QuarantinedTests {
  /** How many: `page.total_rows` of the v1 list, the rows of the v2 list. */
  readonly count: number;
  /** Tests per code owner over every page; a test with several owners counts for each, `none` for no owner. */
  readonly byCodeowner: ReadonlyMap<string, number>;
  /** Unix seconds of the earliest quarantine; undefined when no test carries one. */
  readonly oldestQuarantinedAt: number | undefined;
  /** Per QUARANTINE_WINDOWS label: tests quarantined at most that long before the read, over every row walked. */
  readonly quarantinedRecently: ReadonlyMap<string, number>;
  /** Per QUARANTINE_AGES label: tests quarantined more than that long before the read, over every row walked. */
  readonly quarantinedOlderThan: ReadonlyMap<string, number>;
}

export interface FlakyTestsSnapshot {
  readonly kind: 'flaky_tests';
  readonly repo: string;
  readonly takenAt: number;
  /** The quarantined tests; undefined when their list has not been read for staleAfterSeconds. */
  readonly quarantine: QuarantinedTests | undefined;
  /** API v2 only: the repository's flaky and broken tests; undefined from API v1 alone. */
  readonly unhealthy?: UnhealthyTests | undefined;
  /**
   * API v2 only: the organization's test collections (the same on every flaky-tests target, as
   * read once for all); undefined when not read or older than staleAfterSeconds.
   */
  readonly collections?: TestCollections | undefined;
}

export type Snapshot = MergeQueueSnapshot | FlakyTestsSnapshot;

/**
 * The parts of a target's status, each filled by its own reads (the read declarations name it) and
 * hidden alone once stale (staleParts.ts).
 */
export const SNAPSHOT_PARTS = [
  'queue',
  'flow',
  'testing',
  'quarantine',
  'unhealthy',
  'collections',
] as const;
export type SnapshotPart = (typeof SNAPSHOT_PARTS)[number];

/** What the latest poll that made a part's read recorded of it. */
export interface PartRead {
  /** Unix seconds when the part was last read whole; absent: as old as the last successful poll. */
  readonly readAt?: number | undefined;
  /** Why its latest read failed, while no read has succeeded since. */
  readonly failure?: string | undefined;
}

/** The parts a target's polls recorded a read of. */
export type PartReads = Readonly<Partial<Record<SnapshotPart, PartRead>>>;

/** What is known about one target: its last poll's outcome and its last good snapshot, if fresh. */
export interface TargetStatus {
  readonly target: Target;
  /**
   * Undefined until the first poll finishes or runs past its interval; false after a failed poll,
   * or while one runs late.
   */
  readonly up: boolean | undefined;
  /** When the last poll ended, successfully or not; undefined until one has. */
  readonly lastAttemptAt: number | undefined;
  readonly lastSuccessAt: number | undefined;
  readonly lastDurationSeconds: number | undefined;
  /** Short description of the last failure (never contains the token). */
  readonly lastError: string | undefined;
  /** The last good snapshot; dropped once the target has failed for longer than staleAfterSeconds. */
  readonly snapshot: Snapshot | undefined;
  /**
   * Flow counters of a merge queue since the exporter started watching it. Kept while the target
   * is stale (they only count what was seen); gone with the target when it leaves the config.
   */
  readonly queueFlow?: QueueFlow | undefined;
  /** What Trunk's webhooks said about this target since the exporter started; kept like queueFlow. */
  readonly webhookCounts?: WebhookCounts | undefined;
  /** A merge queue's testing attempts (API v2 only), kept like queueFlow; gone after a v1 poll. */
  readonly testingAttempts?: TestingAttempts | undefined;
  /**
   * What the polls recorded of the reads of each part (staleParts.ts): when it was last read
   * whole, where that may be before the poll (an organization-wide list), and why its latest read
   * failed. A part without an entry is as old as the last successful poll.
   */
  readonly partReads?: PartReads | undefined;
}
