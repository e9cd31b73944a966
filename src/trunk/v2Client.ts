import type { CallOptions, TrunkClient } from './client.js';
import { checkTestingResultsPage, checkV2Page } from './responseAnomalies.js';
import type { CallTarget } from './transport.js';
import { walkV2Pages } from './v2Paging.js';
import {
  V2_ENDPOINTS,
  V2_MAX_LIMIT,
  v2MergeQueuePageSchema,
  v2MergeQueueSchema,
  v2PullRequestPageSchema,
  v2RepositorySchema,
  v2TestPageSchema,
  v2TestingResultPageSchema,
  type V2MergeQueue,
  type V2PullRequest,
  type V2Repository,
  type V2Test,
  type V2TestingResult,
} from './v2Schemas.js';

/** A merge queue as the poller knows it: its v2 id and the labels its calls are logged with. */
export interface V2QueueRef {
  readonly id: string;
  /** `host/owner/name`. */
  readonly repo: string;
  readonly branch: string;
}

/** Which of a queue's pull requests to list. */
export interface V2PullRequestFilter {
  /** Queue-entry states, in v2's spelling. */
  readonly states: readonly string[];
  /** ISO 8601: only entries that concluded at or after it (for final states). */
  readonly concludedAfter?: string;
}

/** The `repo` of calls about the whole organization, for logs and the request queue. */
const ORGANIZATION = '(organization)';

/**
 * The API v2 reads the exporter makes, every one a GET through the TrunkClient's single request
 * queue, limits and retries (TrunkClient.readV2); lists are walked to their end (v2Paging.ts).
 */
export class TrunkV2Client {
  constructor(private readonly client: Pick<TrunkClient, 'readV2'>) {}

  /** Every merge queue of the organization (`GET /v2/merge-queues`, all pages). */
  async listMergeQueues(options: CallOptions = {}): Promise<V2MergeQueue[]> {
    const target = {
      endpoint: V2_ENDPOINTS.listMergeQueues,
      repo: ORGANIZATION,
      branch: undefined,
    };
    return walkV2Pages(
      (cursor) =>
        this.client.readV2(
          target,
          `merge-queues?${pageQuery({}, cursor)}`,
          v2MergeQueuePageSchema,
          checkV2Page<V2MergeQueue>(),
          options,
        ),
      'the list of merge queues',
    );
  }

  /** One merge queue by id; undefined when Trunk answers 404 (the id is gone). */
  async getMergeQueue(
    queue: V2QueueRef,
    options: CallOptions = {},
  ): Promise<V2MergeQueue | undefined> {
    const target = queueTarget(V2_ENDPOINTS.getMergeQueue, queue);
    return this.client.readV2(
      target,
      `merge-queues/${encodeURIComponent(queue.id)}`,
      v2MergeQueueSchema,
      asParsed,
      options,
      () => undefined,
    );
  }

  /** The queue's pull requests in the given entry states, all pages at the largest limit. */
  async listQueuePullRequests(
    queue: V2QueueRef,
    filter: V2PullRequestFilter,
    options: CallOptions = {},
  ): Promise<V2PullRequest[]> {
    const target = queueTarget(V2_ENDPOINTS.listQueuePullRequests, queue);
    const query: Record<string, string> = { state: filter.states.join(',') };
    if (filter.concludedAfter !== undefined) query.concludedAfter = filter.concludedAfter;
    return walkV2Pages(
      (cursor) =>
        this.client.readV2(
          target,
          `merge-queues/${encodeURIComponent(queue.id)}/pull-requests?${pageQuery(query, cursor)}`,
          v2PullRequestPageSchema,
          checkV2Page<V2PullRequest>(({ queueEntry }) => [
            queueEntry.stateChangedAt,
            queueEntry.createdAt,
          ]),
          options,
        ),
      `the pull requests of ${queue.repo} ${queue.branch}`,
    );
  }

  /**
   * The queue's testing results that ended at or after `since` (ISO 8601), all pages at the
   * largest limit; `until` is left to Trunk, which fixes it at the first page.
   */
  async listTestingResults(
    queue: V2QueueRef,
    since: string,
    options: CallOptions = {},
  ): Promise<V2TestingResult[]> {
    const target = queueTarget(V2_ENDPOINTS.listTestingResults, queue);
    return walkV2Pages(
      (cursor) =>
        this.client.readV2(
          target,
          `merge-queues/${encodeURIComponent(queue.id)}/testing-results?${pageQuery({ since }, cursor)}`,
          v2TestingResultPageSchema,
          checkTestingResultsPage,
          options,
        ),
      `the testing results of ${queue.repo} ${queue.branch}`,
    );
  }

  /** Every quarantined test of the organization (`GET /v2/tests?quarantineState=quarantined`). */
  async listQuarantinedTests(options: CallOptions = {}): Promise<V2Test[]> {
    const target = { endpoint: V2_ENDPOINTS.listTests, repo: ORGANIZATION, branch: undefined };
    return walkV2Pages(
      (cursor) =>
        this.client.readV2(
          target,
          `tests?${pageQuery({ quarantineState: 'quarantined' }, cursor)}`,
          v2TestPageSchema,
          checkV2Page<V2Test>((test) => [test.quarantinedSince ?? test.statusSince]),
          options,
        ),
      'the list of quarantined tests',
    );
  }

  /** A repository by id; undefined when Trunk answers 404. */
  async getRepository(id: string, options: CallOptions = {}): Promise<V2Repository | undefined> {
    const target = { endpoint: V2_ENDPOINTS.getRepository, repo: ORGANIZATION, branch: undefined };
    return this.client.readV2(
      target,
      `repositories/${encodeURIComponent(id)}`,
      v2RepositorySchema,
      asParsed,
      options,
      () => undefined,
    );
  }
}

/** A single object's answer: nothing in it is counted as odd. */
function asParsed<T>(value: T): T {
  return value;
}

function queueTarget(endpoint: CallTarget['endpoint'], queue: V2QueueRef): CallTarget {
  return { endpoint, repo: queue.repo, branch: queue.branch };
}

function pageQuery(filters: Readonly<Record<string, string>>, cursor: string | undefined): string {
  const query = new URLSearchParams(filters);
  query.set('limit', String(V2_MAX_LIMIT));
  if (cursor !== undefined) query.set('cursor', cursor);
  return query.toString();
}
