import {
  UNKNOWN_PRIORITY,
  UNKNOWN_QUEUE_VALUE,
  UNKNOWN_STATE,
  type MergeQueueSnapshot,
  type PullRequestSnapshot,
} from '../../snapshot/types.js';
import { NO_ITEMS, orNoItems } from '../../snapshot/noEntries.js';
import type { EnqueuedPullRequest, RepoRef } from '../../trunk/schemas.js';
import { LOOKUPS_AT_A_TIME, mapAtMost } from '../lookupFanOut.js';
import { queueNumbers } from '../queueNumbers.js';
import { withOpenLabelsCapped } from '../openLabelValues.js';
import {
  needsLookup,
  type LookupPlan,
  type PullRequestDetail,
  type PullRequestLookupMemory,
} from './lookupPlan.js';
import { failingReadinessRules } from './readiness.js';
import { parseTimestampSeconds } from '../timestamps.js';
import type { ReadOptions } from '../readOptions.js';
import type { TrunkReader } from './trunkReader.js';

interface MergeQueuePollRequest {
  readonly reader: TrunkReader;
  readonly repo: RepoRef;
  /** `host/owner/name`. */
  readonly repoName: string;
  readonly branch: string;
  readonly pullRequestDetails: boolean;
  readonly options: ReadOptions;
  readonly now: () => number;
  /** Lookups in progress at once (lookupsAtATime()); LOOKUPS_AT_A_TIME when absent. */
  readonly lookupsAtATime?: number;
  /** Lets PRs unchanged since the last successful poll skip their lookup; without it, none skip. */
  readonly lookupMemory?: PullRequestLookupMemory;
  /** Called once the poll has sent its last PR lookup (or needs none): it asks for little more. */
  readonly lookupsSent?: () => void;
}

/**
 * One poll of one merge queue: getQueue, then getSubmittedPullRequest for each PR whose state is
 * not in the queue item or whose readiness matters (`not_ready`), unless the lookup memory still
 * holds its answer (lookupPlan.ts). Any failed call fails the whole poll, so a snapshot is never
 * half old and half new.
 */
export async function pollMergeQueue(request: MergeQueuePollRequest): Promise<MergeQueueSnapshot> {
  const { reader, repo, branch, options } = request;
  const startedAt = request.now();
  const queue = await reader.getQueue(repo, branch, options);

  const details = new Map<number, PullRequestDetail | undefined>();
  let plan: LookupPlan | undefined;
  if (request.pullRequestDetails) {
    plan = request.lookupMemory?.plan(queue.enqueuedPullRequests, startedAt) ?? {
      lookUp: queue.enqueuedPullRequests.filter(needsLookup),
      reuse: new Map(),
    };
    // The first failed lookup fails the poll, and no lookup starts after it (mapAtMost).
    await mapAtMost(
      plan.lookUp,
      request.lookupsAtATime ?? LOOKUPS_AT_A_TIME,
      async ({ prNumber }) => {
        details.set(
          prNumber,
          await reader.getSubmittedPullRequest(repo, branch, prNumber, options),
        );
      },
      request.lookupsSent,
    );
    request.lookupMemory?.commit(plan, details, startedAt);
    for (const [prNumber, detail] of plan.reuse) details.set(prNumber, detail);
  } else request.lookupsSent?.();

  const pullRequests: PullRequestSnapshot[] = [];
  for (const item of queue.enqueuedPullRequests) {
    const detail = details.get(item.prNumber);
    // A 404 means the PR left the queue between the two calls: it is gone, not an error.
    if (details.has(item.prNumber) && detail === undefined) continue;
    pullRequests.push(toPullRequestSnapshot(item, detail));
  }

  return {
    kind: 'merge_queue',
    repo: request.repoName,
    branch,
    takenAt: request.now(),
    // Empty (counted by checkQueue): an empty label value is to Prometheus no label at all.
    state: queue.state === '' ? UNKNOWN_QUEUE_VALUE : queue.state,
    mode: queue.mode ?? UNKNOWN_QUEUE_VALUE,
    mergeMethod: queue.mergeMethod ?? UNKNOWN_QUEUE_VALUE,
    directMergeMode: queue.directMergeMode ?? UNKNOWN_QUEUE_VALUE,
    optimizationMode: queue.optimizationMode ?? UNKNOWN_QUEUE_VALUE,
    ...queueNumbers(queue),
    settings: {
      batch: queue.batch,
      can_optimistically_merge: queue.canOptimisticallyMerge,
      create_prs_for_testing_branches: queue.createPrsForTestingBranches,
      comments: queue.commentsEnabled,
      commands: queue.commandsEnabled,
      status_check: queue.statusCheckEnabled,
    },
    pullRequests: withOpenLabelsCapped(pullRequests),
    readinessKnown: request.pullRequestDetails,
  };
}

function toPullRequestSnapshot(
  item: EnqueuedPullRequest,
  detail: PullRequestDetail | undefined,
): PullRequestSnapshot {
  const state = item.state ?? detail?.state ?? UNKNOWN_STATE;
  const blockedReasons =
    state === 'not_ready' && detail?.readiness
      ? orNoItems(failingReadinessRules(detail.readiness))
      : NO_ITEMS;
  return {
    number: item.prNumber,
    state,
    priorityName: item.priorityName ?? UNKNOWN_PRIORITY,
    stateChangedAt: parseTimestampSeconds(item.stateChangedAt),
    blockedReasons,
  };
}
