import {
  UNKNOWN_QUEUE_VALUE,
  type MergeQueueSnapshot,
  type PullRequestSnapshot,
} from '../../snapshot/types.js';
import { NO_ITEMS, orNoItems } from '../../snapshot/noEntries.js';
import { TrunkApiError } from '../../trunk/errors.js';
import type { V2PullRequestFilter } from '../../trunk/v2QueueListPages.js';
import type { V2QueueRef } from '../../trunk/v2Requests.js';
import type { V2AnomalyReporter } from '../../trunk/v2Client.js';
import {
  V2_LIVE_ENTRY_STATES,
  type V2MergeQueue,
  type V2PullRequest,
} from '../../trunk/v2Schemas.js';
import { priorityNameOf, v1Mode, v1Value } from '../../trunk/v2Vocabulary.js';
import { withOpenLabelsCapped } from '../openLabelValues.js';
import { parseTimestampSeconds } from '../timestamps.js';
import { queueNumbers } from '../queueNumbers.js';
import type { ReadOptions } from '../readOptions.js';
import type { V2QueueDirectory } from './v2QueueDirectory.js';
import {
  V2_UNKNOWN_BLOCKED_REASONS,
  failingV2ReadinessRules,
  notMergeableReasonCounts,
} from './v2Readiness.js';

/** The v2 reads a merge-queue poll makes, and what it reports of them (implemented by TrunkV2Client). */
export interface V2PullRequestLister extends V2AnomalyReporter {
  listQueuePullRequests(
    queue: V2QueueRef,
    filter: V2PullRequestFilter,
    options?: ReadOptions,
  ): Promise<V2PullRequest[]>;
}

interface V2MergeQueuePollRequest {
  readonly reader: V2PullRequestLister;
  readonly directory: V2QueueDirectory;
  /** `host/owner/name`. */
  readonly repoName: string;
  readonly branch: string;
  readonly options: ReadOptions;
  readonly now: () => number;
  /**
   * Whether the rows are read with each pull request's id (default true): only the queue-entry
   * history reads them, and a field parsed and kept poll after poll costs CPU when nothing does.
   */
  readonly pullRequestIds?: boolean;
}

/** What a v2 poll read: the snapshot, and the queue it was read from (for the exit read). */
export interface V2MergeQueuePoll {
  readonly snapshot: MergeQueueSnapshot;
  readonly queue: V2QueueRef;
}

/**
 * One poll of one merge queue through API v2: its state and settings from the organization's list
 * of queues (V2QueueDirectory: a share of one walk per cycle), its live pull requests from one
 * paged `GET /v2/merge-queues/{id}/pull-requests`, readiness included, so no per-PR call is made.
 * A 404 on the queue's id reads the list again once (at most once per interval for all queues:
 * V2QueueDirectory.queueNotFound): the queue may have been re-created.
 */
export async function pollMergeQueueV2(
  request: V2MergeQueuePollRequest,
): Promise<V2MergeQueuePoll> {
  const { directory, repoName, branch, options } = request;
  const key = { repo: repoName, branch };
  const live = { states: V2_LIVE_ENTRY_STATES, pullRequestIds: request.pullRequestIds ?? true };
  let queue = await requireQueue(directory, key, options);
  let rows: V2PullRequest[];
  try {
    rows = await request.reader.listQueuePullRequests(refOf(queue, key), live, options);
  } catch (error) {
    if (!(error instanceof TrunkApiError) || error.status !== 404) throw error;
    if (!directory.queueNotFound()) throw error;
    queue = await requireQueue(directory, key, options);
    rows = await request.reader.listQueuePullRequests(refOf(queue, key), live, options);
  }
  // A row in a state the read did not ask for (a concluded entry) is no entry of the live queue;
  // told after each PR's rows are one, so that a PR whose later row has left is not counted.
  const asked = latestRows(rows).filter((row) => LIVE_STATES.has(row.queueEntry.state));
  return { snapshot: toSnapshot(queue, asked, key, request.now()), queue: refOf(queue, key) };
}

const LIVE_STATES: ReadonlySet<string> = new Set(V2_LIVE_ENTRY_STATES);

async function requireQueue(
  directory: V2QueueDirectory,
  key: { readonly repo: string; readonly branch: string },
  options: ReadOptions,
): Promise<V2MergeQueue> {
  const queue = await directory.find(key, options);
  if (queue === undefined) {
    throw new Error(
      `Trunk API v2 lists no merge queue for ${key.repo} branch ${key.branch}: check that the repository and branch are right and that the API key belongs to their organization`,
    );
  }
  return queue;
}

function refOf(queue: V2MergeQueue, key: { repo: string; branch: string }): V2QueueRef {
  return { id: queue.id, repo: key.repo, branch: key.branch };
}

function toSnapshot(
  queue: V2MergeQueue,
  rows: readonly V2PullRequest[],
  key: { readonly repo: string; readonly branch: string },
  takenAt: number,
): MergeQueueSnapshot {
  const { config } = queue;
  return {
    kind: 'merge_queue',
    repo: key.repo,
    branch: key.branch,
    takenAt,
    // Empty (counted by the queue's check): an empty label value is to Prometheus no label at all.
    state: queue.state === '' ? UNKNOWN_QUEUE_VALUE : v1Value(queue.state),
    mode: queue.mode === undefined ? UNKNOWN_QUEUE_VALUE : v1Mode(queue.mode),
    mergeMethod: v1LabelValue(config.mergeMethod),
    directMergeMode: v1LabelValue(config.directMergeMode),
    optimizationMode: v1LabelValue(config.optimizationMode),
    ...queueNumbers(config),
    settings: {
      batch: config.allowBatching,
      can_optimistically_merge: config.canOptimisticallyMerge,
      create_prs_for_testing_branches: config.createsPrsForTestingBranches,
      comments: config.areCommentsEnabled,
      commands: config.areCommandsEnabled,
      status_check: config.isStatusCheckEnabled,
    },
    pullRequests: withOpenLabelsCapped(rows.map(toPullRequestSnapshot)),
    readinessKnown: true,
    unknownBlockedReasons: V2_UNKNOWN_BLOCKED_REASONS,
    notMergeableReasons: notMergeableReasonCounts(rows),
  };
}

/** A queue's method in v1's vocabulary; `unknown` when Trunk sent it as another type. */
function v1LabelValue(value: string | undefined): string {
  return value === undefined ? UNKNOWN_QUEUE_VALUE : v1Value(value);
}

/**
 * Each PR once, as v1's getQueue is read: a PR listed twice (paging over a moving list) keeps the
 * row with the latest stateChangedAt (a row without one is the oldest), in the place of its first.
 * Of two rows with one stateChangedAt the later page's: it is the newer read, and a write that
 * records no transition (a priority, readiness) leaves stateChangedAt as it was.
 */
function latestRows(rows: readonly V2PullRequest[]): V2PullRequest[] {
  const byNumber = new Map<number, { readonly row: V2PullRequest; readonly at: number }>();
  for (const row of rows) {
    const at = parseTimestampSeconds(row.queueEntry.stateChangedAt) ?? Number.NEGATIVE_INFINITY;
    const kept = byNumber.get(row.number);
    if (kept === undefined || at >= kept.at) byNumber.set(row.number, { row, at });
  }
  return [...byNumber.values()].map(({ row }) => row);
}

function toPullRequestSnapshot(row: V2PullRequest): PullRequestSnapshot {
  const entry = row.queueEntry;
  const state = v1Value(entry.state);
  return {
    number: row.number,
    pullRequestId: row.id !== undefined && row.id !== '' ? row.id.toLowerCase() : undefined,
    state,
    priorityName: priorityNameOf(entry.priorityName),
    stateChangedAt: parseTimestampSeconds(entry.stateChangedAt),
    blockedReasons:
      state === 'not_ready' && entry.readiness
        ? orNoItems(failingV2ReadinessRules(entry.readiness))
        : NO_ITEMS,
  };
}
