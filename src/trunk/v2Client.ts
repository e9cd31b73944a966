// The API v2 client that the poller and discovery hold: every v2 read the exporter makes, one
// method each, on one object made anew for each configuration (what the test list's path taught
// is handed on: TestListPaths). How the longer reads page lives in modules of their own beside it
// (v2QueueListPages.ts, v2TestList.ts, v2EntryHistoryPages.ts), so that this file says what is read.
import { CallSpacing } from './callSpacing.js';
import type { CallOptions } from './client.js';
import { TrunkApiError } from './errors.js';
import type { ApiAnomalyKind } from './observer.js';
import type { CallTarget } from './transport.js';
import {
  checkTestCollectionsPage,
  checkV2MergeQueue,
  checkV2MergeQueuesPage,
  checkV2Page,
} from './responseAnomalies.js';
import { V2_ENTRY_HISTORY_CALL_SPACING_MS, type V2EntryHistory } from './v2EntryHistorySchemas.js';
import { listQueueEntryHistory } from './v2EntryHistoryPages.js';
import { allV2ListRows, walkV2List, type V2Reader } from './v2ListWalk.js';
import { V2_MAX_EMPTY_PAGES_IN_A_ROW } from './v2Paging.js';
import {
  listQueuePullRequests,
  listTestingResults,
  listVerificationRuns,
  type V2PullRequestFilter,
} from './v2QueueListPages.js';
import { organizationTarget, pageQuery, queueTarget, type V2QueueRef } from './v2Requests.js';
import {
  V2_ENDPOINTS,
  V2_MAX_TEST_COLLECTIONS,
  v2MergeQueuePageSchema,
  v2MergeQueueSchema,
  v2RepositoryMatchPageSchema,
  v2RepositorySchema,
  v2TestCollectionPageSchema,
  type V2MergeQueue,
  type V2TestCollection,
  type V2PullRequest,
  type V2Repository,
  type V2Endpoint,
  type V2Page,
  type V2Test,
  type V2TestingResult,
} from './v2Schemas.js';
import { TestListPaths, listTests, type V2TestFilter } from './v2TestList.js';
import {
  checkVerificationRun,
  v2VerificationRunSchema,
  type V2VerificationRun,
} from './v2VerificationRunSchemas.js';

/** Where a poll reports anomalies it found across answers (implemented by TrunkV2Client). */
export interface V2AnomalyReporter {
  /**
   * `count` anomalies of `kind` found across reads of `endpoint` (trunk_exporter_api_anomalies_total),
   * logged with `about`, the target whose reads held them.
   */
  reportAnomaly(
    endpoint: V2Endpoint,
    kind: ApiAnomalyKind,
    count: number,
    about?: Omit<CallTarget, 'endpoint'>,
  ): void;
}

/**
 * The spacing of the queue-entry history calls when `keySharedBy` instances send one key (the shards
 * of a deployment): each keeps its share of Trunk's 5 a second per key. `kept` when it spaces them
 * so already: a new client (a reload) makes no new budget, so its calls follow the last ones.
 */
export function entryHistorySpacing(keySharedBy: number, kept?: CallSpacing): CallSpacing {
  const spacingMs = V2_ENTRY_HISTORY_CALL_SPACING_MS * keySharedBy;
  return kept?.spacingMs === spacingMs ? kept : new CallSpacing(spacingMs);
}

/** The organization's newest test collections, and whether Trunk has more. */
export interface V2TestCollectionsPage {
  readonly collections: readonly V2TestCollection[];
  readonly more: boolean;
}

/** The most pages a walk takes when a setting bounds it, and why, for the error past it. */
export interface V2PageBound {
  readonly pages: number;
  /** `with discovery on the list is read to 11000 queues at most: …`. */
  readonly why: string;
}

/**
 * The API v2 reads the exporter makes, every one a GET through the TrunkClient's single request
 * queue, limits and retries (TrunkClient.readV2); lists are walked to their end (v2ListWalk.ts).
 */
export class TrunkV2Client {
  constructor(
    private readonly client: V2Reader,
    private readonly testListPaths = new TestListPaths(),
    /** Kept by the caller from one client to the next (entryHistorySpacing). */
    private readonly historySpacing = entryHistorySpacing(1),
  ) {}

  /** `count` anomalies of `kind` a poll found in the answers of `endpoint`; logged with `about`. */
  reportAnomaly(
    endpoint: V2Endpoint,
    kind: ApiAnomalyKind,
    count: number,
    about?: Omit<CallTarget, 'endpoint'>,
  ): void {
    this.client.reportAnomaly(endpoint, kind, count, about);
  }

  /**
   * Every merge queue of the organization (`GET /v2/merge-queues`, all pages): at most
   * V2_MAX_PAGES, or the pages of `bound` (with why, said when the list is longer).
   */
  async listMergeQueues(options: CallOptions = {}, bound?: V2PageBound): Promise<V2MergeQueue[]> {
    const endpoint = V2_ENDPOINTS.listMergeQueues;
    const target = organizationTarget(endpoint);
    return allV2ListRows(
      this.client,
      (cursor) =>
        this.client.readV2(
          target,
          `merge-queues?${pageQuery({}, cursor)}`,
          v2MergeQueuePageSchema,
          checkV2MergeQueuesPage,
          options,
        ),
      {
        what: 'the list of merge queues',
        endpoint,
        ...(bound === undefined ? {} : { bound: bound.why }),
      },
      bound?.pages,
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
      checkV2MergeQueue,
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
    return listQueuePullRequests(this.client, queue, filter, options);
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
    return listTestingResults(this.client, queue, since, options);
  }

  /**
   * The queue's verification runs created strictly after `createdAfter` (ISO 8601), newest first,
   * all pages at the largest limit.
   */
  async listVerificationRuns(
    queue: V2QueueRef,
    createdAfter: string,
    options: CallOptions = {},
  ): Promise<V2VerificationRun[]> {
    return listVerificationRuns(this.client, queue, createdAfter, options);
  }

  /**
   * One verification run of `queue` by id (`GET /v2/merge-queue-verification-runs/{id}`);
   * undefined when Trunk answers 404 (`VERIFICATION_RUN_NOT_FOUND`: the run is gone).
   */
  async getVerificationRun(
    queue: V2QueueRef,
    id: string,
    options: CallOptions = {},
  ): Promise<V2VerificationRun | undefined> {
    return this.client.readV2(
      queueTarget(V2_ENDPOINTS.getVerificationRun, queue),
      `merge-queue-verification-runs/${encodeURIComponent(id)}`,
      v2VerificationRunSchema,
      checkVerificationRun,
      options,
      () => undefined,
    );
  }

  /**
   * The queue-entry timelines of up to 50 pull requests of any queue of the organization
   * (`GET /v2/queue-entry-history`), one group per pull request asked that Trunk knows: pages
   * until every id asked has its group, at most one page of groups per id (empty pages followed
   * as in every walk), groups of ids not asked left out, a group listed twice joined into one
   * timeline.
   */
  async listQueueEntryHistory(
    pullRequestIds: readonly string[],
    options: CallOptions = {},
  ): Promise<V2EntryHistory[]> {
    return listQueueEntryHistory(this.client, this.historySpacing, pullRequestIds, options);
  }

  /**
   * Every test of the organization the filter selects, all pages, each page's rows given to `take`
   * as they come; at `/v2/test-cases` when `/v2/tests` answers 404 (TestListPaths), the same
   * operation under its former path.
   */
  async listTests(
    filter: V2TestFilter,
    /** What is listed, for messages: `quarantined tests`. */
    what: string,
    take: (tests: readonly V2Test[]) => void,
    options: CallOptions = {},
  ): Promise<void> {
    return listTests(this.client, this.testListPaths, filter, what, take, options);
  }

  /**
   * The organization's newest test collections (`GET /v2/test-collections`, newest first): pages at
   * the largest limit until V2_MAX_TEST_COLLECTIONS collections or the last page, so one call when
   * Trunk fills its pages as asked; a shorter or empty page with a cursor is followed, as every walk
   * follows one (the rest are behind it); a collection listed on two pages is taken once, as the
   * later page gives it.
   */
  async listTestCollections(options: CallOptions = {}): Promise<V2TestCollectionsPage> {
    const endpoint = V2_ENDPOINTS.listTestCollections;
    const collections: V2TestCollection[] = [];
    /** Where each collection listed with an id is in `collections`. */
    const placeOf = new Map<string, number>();
    let last: V2Page<V2TestCollection> = { data: [] };
    await walkV2List(
      this.client,
      async (cursor) =>
        (last = await this.client.readV2(
          organizationTarget(endpoint),
          `test-collections?${pageQuery({}, cursor)}`,
          v2TestCollectionPageSchema,
          checkTestCollectionsPage,
          options,
        )),
      { what: 'the test collections', endpoint },
      (rows) => {
        // A loop, not a spread: a page longer than asked for may hold more rows than a call takes.
        for (const row of rows) {
          const id = row.id === '' ? undefined : row.id;
          const listed = id === undefined ? undefined : placeOf.get(id);
          // A collection listed again (a collection created since the last page moved it past the
          // cursor) is one collection: the later page is the newer read of its count and setting,
          // kept in the place of its first, so that it takes one of the V2_MAX_TEST_COLLECTIONS.
          if (listed !== undefined) {
            collections[listed] = row;
            continue;
          }
          if (id !== undefined) placeOf.set(id, collections.length);
          collections.push(row);
        }
        return collections.length >= V2_MAX_TEST_COLLECTIONS ? 'enough' : undefined;
      },
      // Each page with rows brings one at least: the empty pages in a row are bounded by the walk.
      V2_MAX_TEST_COLLECTIONS + V2_MAX_EMPTY_PAGES_IN_A_ROW,
    );
    const next = last.nextCursor ?? '';
    return { collections, more: last.hasMore === true || next !== '' };
  }

  /** A repository by id; undefined when Trunk answers 404. */
  async getRepository(id: string, options: CallOptions = {}): Promise<V2Repository | undefined> {
    return this.client.readV2(
      organizationTarget(V2_ENDPOINTS.getRepository),
      `repositories/${encodeURIComponent(id)}`,
      v2RepositorySchema,
      asParsed,
      options,
      () => undefined,
    );
  }

  /**
   * Whether the organization has a repository at a provider URL (`GET /v2/repositories?providerUrl=`,
   * one row asked for): false when Trunk answers 404 `PROVIDER_URL_NOT_FOUND`, its answer for a URL
   * it does not know ("a genuine empty result"); an empty page with a cursor is followed to the
   * row behind it, as every walk follows one.
   */
  async hasRepository(providerUrl: string, options: CallOptions = {}): Promise<boolean> {
    const endpoint = V2_ENDPOINTS.findRepositories;
    let found = false;
    try {
      await walkV2List(
        this.client,
        (cursor) => {
          const query = new URLSearchParams({ providerUrl, limit: '1' });
          if (cursor !== undefined) query.set('cursor', cursor);
          return this.client.readV2(
            organizationTarget(endpoint),
            `repositories?${query.toString()}`,
            v2RepositoryMatchPageSchema,
            checkV2Page<object>(),
            options,
          );
        },
        { what: 'the repositories at a provider URL', endpoint },
        (rows) => {
          found = rows.length > 0;
          return found ? 'enough' : undefined;
        },
      );
      return found;
    } catch (error) {
      // Another 404 (no such endpoint, an edge's page) says nothing of the repository.
      if (error instanceof TrunkApiError && error.code === 'PROVIDER_URL_NOT_FOUND') return false;
      throw error;
    }
  }
}

/** A single object's answer: nothing in it is counted as odd. */
function asParsed<T>(value: T): T {
  return value;
}
