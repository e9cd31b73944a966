// The v2 reads of why entries move: verification runs (of a queue, of a pull request, one by id)
// and queue-entry histories (of one pull request, of up to 50), found among the view's queues.
import type { SimulatedPullRequest } from './pullRequest.js';
import { notFound, validationFailed, type V2Answer } from './v2Errors.js';
import type { ListPage, PageRequest, Query } from './v2Paging.js';
import { isUuid } from './v2Query.js';
import {
  ENTRY_HISTORY_BATCH_FILTERS,
  ENTRY_HISTORY_FILTERS,
  listEntryTimelines,
  listEntryTransitions,
  type FoundTimeline,
} from './v2QueueEntryHistory.js';
import {
  getVerificationRun,
  listPullRequestVerificationRuns,
  listQueueVerificationRuns,
  VERIFICATION_RUN_FILTERS,
  type VerificationRunV2Body,
  type ViewedQueue,
} from './v2VerificationRuns.js';

/** Query filters each of these lists takes (besides paging). */
export const V2_ENTRY_FILTERS = {
  verificationRuns: VERIFICATION_RUN_FILTERS,
  entryHistory: ENTRY_HISTORY_FILTERS,
  entryHistoryBatch: ENTRY_HISTORY_BATCH_FILTERS,
} as const;

export interface V2EntryReads {
  listVerificationRuns(
    mergeQueueId: string,
    query: Query,
    page: PageRequest,
  ): V2Answer<ListPage<VerificationRunV2Body>>;
  getVerificationRun(id: string): V2Answer<VerificationRunV2Body>;
  listPullRequestVerificationRuns(
    pullRequestId: string,
    query: Query,
    page: PageRequest,
  ): V2Answer<ListPage<VerificationRunV2Body>>;
  listPullRequestEntryHistory(
    pullRequestId: string,
    query: Query,
    page: PageRequest,
  ): V2Answer<ListPage<Record<string, unknown>>>;
  listEntryHistories(query: Query, page: PageRequest): V2Answer<ListPage<Record<string, unknown>>>;
  /** The queue a pull request's id belongs to, if one remembers it. */
  queueOfPullRequest(id: string): ViewedQueue | undefined;
}

/** These reads over `queues` (by id). */
export function createV2EntryReads(queues: ReadonlyMap<string, ViewedQueue>): V2EntryReads {
  const findTimeline = (id: string): FoundTimeline | undefined => {
    for (const queue of queues.values()) {
      const timeline = queue.model.entries.timeline(id);
      if (timeline !== undefined) return { queue, timeline };
    }
    return undefined;
  };

  /** The pull request `id` names (a uuid, or a 400), or a 404 when no queue remembers it. */
  const pullRequest = (
    id: string,
  ): V2Answer<FoundTimeline & { readonly pr: SimulatedPullRequest }> => {
    if (!isUuid(id)) {
      return validationFailed(`the pull request id must be a uuid, got ${JSON.stringify(id)}`);
    }
    const found = findTimeline(id.toLowerCase());
    if (found === undefined) return notFound('PR_NOT_FOUND', `pull request ${id} not found`);
    return { ok: true, body: { ...found, pr: found.timeline.pr } };
  };

  return {
    listVerificationRuns(mergeQueueId, query, page) {
      const queue = queues.get(mergeQueueId);
      if (queue === undefined) {
        return notFound('MERGE_QUEUE_NOT_FOUND', `merge queue ${mergeQueueId} not found`);
      }
      return listQueueVerificationRuns(queue, query, page);
    },
    getVerificationRun: (id) => getVerificationRun(queues.values(), id),
    listPullRequestVerificationRuns(pullRequestId, query, page) {
      const found = pullRequest(pullRequestId);
      if (!found.ok) return found;
      return listPullRequestVerificationRuns(found.body.queue, found.body.pr, query, page);
    },
    listPullRequestEntryHistory(pullRequestId, query, page) {
      const found = pullRequest(pullRequestId);
      if (!found.ok) return found;
      return listEntryTransitions(found.body, query, page);
    },
    listEntryHistories: (query, page) => listEntryTimelines(findTimeline, query, page),
    queueOfPullRequest: (id) => findTimeline(id.toLowerCase())?.queue,
  };
}
