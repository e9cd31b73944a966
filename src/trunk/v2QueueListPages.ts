// A merge queue's paged lists (`GET /v2/merge-queues/{id}/…`: its pull requests, testing results
// and verification runs), walked the same way: the path and the message's noun taken from the
// endpoint, every page at the largest limit. Each list has its own filters, page schema and check,
// and its own bound of pages, set by how often it is read and how many rows a walk keeps.
import type { z } from 'zod';
import type { CallOptions } from './client.js';
import {
  checkTestingResultsPage,
  checkV2PullRequestsPage,
  type AnomalyReport,
} from './responseAnomalies.js';
import { allV2ListRows, type V2Reader } from './v2ListWalk.js';
import { V2_MAX_LIVE_ENTRY_PAGES, V2_MAX_WINDOW_PAGES } from './v2Paging.js';
import { pageQuery, queueTarget, type V2QueueRef } from './v2Requests.js';
import {
  V2_ENDPOINTS,
  v2PullRequestPageSchema,
  v2PullRequestWithoutIdPageSchema,
  v2TestingResultPageSchema,
  type V2Endpoint,
  type V2Page,
  type V2PullRequest,
  type V2TestingResult,
} from './v2Schemas.js';
import {
  V2_MAX_RUN_PAGES,
  checkVerificationRunsPage,
  v2VerificationRunPageSchema,
  type V2VerificationRun,
} from './v2VerificationRunSchemas.js';

/** Which of a queue's pull requests to list. */
export interface V2PullRequestFilter {
  /** Queue-entry states, in v2's spelling; every state when absent. */
  readonly states?: readonly string[];
  /**
   * ISO 8601: only entries that concluded at or after it, whatever their state now ("an entry that
   * failed in the window and was later resubmitted still matches").
   */
  readonly concludedAfter?: string;
  /** Whether the rows keep the pull request's id (what its queue-entry history is read by). */
  readonly pullRequestIds?: boolean;
}

/** How the pages of one v2 list are parsed, then checked (their rows' anomalies counted). */
interface PageReading<R, T> {
  readonly schema: z.ZodType<R>;
  readonly check: (response: R, report: AnomalyReport) => V2Page<T>;
}

/** The queue's pull requests in the given entry states, all pages at the largest limit. */
export function listQueuePullRequests(
  client: V2Reader,
  queue: V2QueueRef,
  filter: V2PullRequestFilter,
  options: CallOptions,
): Promise<V2PullRequest[]> {
  const query: Record<string, string> = {};
  if (filter.states !== undefined) query.state = filter.states.join(',');
  if (filter.concludedAfter !== undefined) query.concludedAfter = filter.concludedAfter;
  const schema =
    filter.pullRequestIds === true ? v2PullRequestPageSchema : v2PullRequestWithoutIdPageSchema;
  const page = { schema, check: checkV2PullRequestsPage };
  // The live entries (no window): a queue of thousands is none Trunk has, and an answer that
  // never ends would otherwise hold up to V2_MAX_PAGES pages of rows per poll in memory.
  const maxPages =
    filter.concludedAfter === undefined ? V2_MAX_LIVE_ENTRY_PAGES : V2_MAX_WINDOW_PAGES;
  return walkQueueList(
    client,
    V2_ENDPOINTS.listQueuePullRequests,
    queue,
    query,
    page,
    options,
    maxPages,
  );
}

/**
 * The queue's testing results that ended at or after `since` (ISO 8601), all pages at the
 * largest limit; `until` is left to Trunk, which fixes it at the first page.
 */
export function listTestingResults(
  client: V2Reader,
  queue: V2QueueRef,
  since: string,
  options: CallOptions,
): Promise<V2TestingResult[]> {
  const page = { schema: v2TestingResultPageSchema, check: checkTestingResultsPage };
  return walkQueueList(
    client,
    V2_ENDPOINTS.listTestingResults,
    queue,
    { since },
    page,
    options,
    V2_MAX_WINDOW_PAGES,
  );
}

/**
 * The queue's verification runs created strictly after `createdAfter` (ISO 8601), newest first,
 * all pages at the largest limit.
 */
export function listVerificationRuns(
  client: V2Reader,
  queue: V2QueueRef,
  createdAfter: string,
  options: CallOptions,
): Promise<V2VerificationRun[]> {
  const page = { schema: v2VerificationRunPageSchema, check: checkVerificationRunsPage };
  return walkQueueList(
    client,
    V2_ENDPOINTS.listVerificationRuns,
    queue,
    { createdAfter },
    page,
    options,
    V2_MAX_RUN_PAGES,
  );
}

/**
 * Every page of one of `queue`'s lists (`endpoint`, under `v2/merge-queues/{id}/`) with
 * `filters`, at the largest limit.
 */
function walkQueueList<R, T>(
  client: V2Reader,
  endpoint: V2Endpoint,
  queue: V2QueueRef,
  filters: Readonly<Record<string, string>>,
  page: PageReading<R, T>,
  options: CallOptions,
  maxPages?: number,
): Promise<T[]> {
  const target = queueTarget(endpoint, queue);
  const path = endpoint.slice('v2/'.length).replace('{id}', encodeURIComponent(queue.id));
  // `testing-results`: the testing results of github.com/acme/web main.
  const list = endpoint.slice(endpoint.lastIndexOf('/') + 1).replace('-', ' ');
  return allV2ListRows(
    client,
    (cursor) =>
      client.readV2(
        target,
        `${path}?${pageQuery(filters, cursor)}`,
        page.schema,
        page.check,
        options,
      ),
    { what: `the ${list} of ${queue.repo} ${queue.branch}`, endpoint },
    maxPages,
  );
}
