// The v2 view of the simulated world: the same queues, pull requests and tests v1 shows, found by
// stable ids and filtered and paged the v2 way. Ids are hashes of names, so they never change and
// are the same for every seed; facts v1 does not show come from their own random stream or are a
// pure function of an id, so adding the v2 view changes nothing v1 answers.
import { PULL_REQUEST_STATES, type SimulatedPullRequest } from './pullRequest.js';
import { deriveSeed, stableUuid, unitHash } from './random.js';
import { drawV2QueueFacts } from './v2QueueFacts.js';
import { repositoryKey, type SimulatedRepository } from './repositories.js';
import { isoTimestamp } from './responses.js';
import { notFound, validationFailed, type V2Answer } from './v2Errors.js';
import { takePage, type ListPage, type PageRequest, type Query, type SortKey } from './v2Paging.js';
import { isUuid, readInstant, readList, readText, readUuid } from './v2Query.js';
import {
  camelCase,
  renderMergeQueueV2,
  renderPullRequestV2,
  renderRepositoryV2,
  repositoryUrl,
  type MergeQueueV2Body,
  type PullRequestV2Body,
  type RepositoryV2Body,
  type V2QueueFacts,
  type V2RepositoryFacts,
} from './v2Responses.js';
import {
  listTestingResults,
  TESTING_RESULT_FILTERS,
  type TestingResultV2Body,
} from './v2TestingResults.js';
import type { TestCollectionV2Body, TestV2Body } from './v2TestResponses.js';
import {
  collectionTests,
  listTests,
  TEST_LIST_FILTERS,
  type CollectionEntry,
} from './v2TestsView.js';
import { createV2EntryReads, type V2EntryReads } from './v2EntryReads.js';
import type { ViewedQueue } from './v2VerificationRuns.js';
import type { SimulatorWorld } from './world.js';

/** Query filters each list takes (besides paging), as the published definition names them. */
export const V2_FILTERS = {
  mergeQueues: ['repositoryId', 'targetBranch'],
  pullRequests: ['state', 'author', 'concludedAfter', 'concludedBefore'],
  testingResults: TESTING_RESULT_FILTERS,
  tests: TEST_LIST_FILTERS,
  testCollections: ['q'],
  repositories: ['providerUrl'],
} as const;

/** Queue-entry states in v2's spelling. */
export const V2_ENTRY_STATES: readonly string[] = PULL_REQUEST_STATES.map(camelCase);

/** Share of repositories Trunk has not synced yet (no default branch, no visibility). */
const UNSYNCED_REPOSITORY_SHARE = 0.1;

export interface V2View extends V2EntryReads {
  listMergeQueues(query: Query, page: PageRequest): V2Answer<ListPage<MergeQueueV2Body>>;
  getMergeQueue(id: string): V2Answer<MergeQueueV2Body>;
  listPullRequests(
    mergeQueueId: string,
    query: Query,
    page: PageRequest,
  ): V2Answer<ListPage<PullRequestV2Body>>;
  listTestingResults(
    mergeQueueId: string,
    query: Query,
    page: PageRequest,
  ): V2Answer<ListPage<TestingResultV2Body>>;
  listTests(query: Query, page: PageRequest): V2Answer<ListPage<TestV2Body>>;
  listTestCollections(query: Query, page: PageRequest): V2Answer<ListPage<TestCollectionV2Body>>;
  getRepository(id: string): V2Answer<RepositoryV2Body>;
  /** `GET /v2/repositories?providerUrl=…`: the repositories a provider URL names. */
  findRepositories(query: Query, page: PageRequest): V2Answer<ListPage<RepositoryV2Body>>;
  /**
   * `host/owner/name` of a queue, repository or pull request id ('' when unknown), for matching
   * faults.
   */
  repositoryKeyOf(id: string): string;
}

interface QueueEntry extends ViewedQueue {
  readonly facts: V2QueueFacts;
}

interface RepositoryEntry extends CollectionEntry {
  readonly facts: V2RepositoryFacts;
}

/** A short id: `prefix` and a base-36 hash of `name`. */
function hashId(prefix: string, name: string): string {
  return `${prefix}_${deriveSeed(0, name).toString(36)}`;
}

/** The id of a repository: a uuid, as Trunk's, stable per `host/owner/name`. */
export function v2RepositoryId(repository: SimulatedRepository): string {
  return stableUuid(`repository:${repositoryKey(repository)}`);
}

/** The v2 view of `world`, for the server's v2 routes. */
export function createV2View(world: SimulatorWorld): V2View {
  const createdBefore = world.now();
  const repositories = new Map<string, RepositoryEntry>();
  world.testCollections.forEach(({ repository, quarantine, unquarantined }, index) => {
    const key = repositoryKey(repository);
    const id = v2RepositoryId(repository);
    const createdAt = createdBefore - Math.floor(100 + unitHash(`created:${key}`) * 900) * 86_400;
    repositories.set(id, {
      repository,
      id: hashId('tc', `test-collection:${key}`),
      repositoryId: id,
      index,
      quarantine,
      unquarantined,
      facts: {
        id,
        createdAt,
        updatedAt: createdAt + Math.floor(unitHash(`updated:${key}`) * (createdBefore - createdAt)),
        synced: unitHash(`synced:${key}`) >= UNSYNCED_REPOSITORY_SHARE,
        isPrivate: unitHash(`private:${key}`) < 0.8,
      },
    });
  });
  const collections = [...repositories.values()];

  const queues = new Map<string, QueueEntry>();
  for (const { repository, model } of world.mergeQueues) {
    const name = `${repositoryKey(repository)}:${model.branch}`;
    let id = hashId('mq', `merge-queue:${name}`);
    // A hash clash among thousands of queues is unlikely, not impossible; ids must stay unique.
    for (let attempt = 1; queues.has(id); attempt++) {
      id = hashId('mq', `merge-queue:${name}:${attempt}`);
    }
    const { createdDaysAgo, ...drawn } = drawV2QueueFacts(world.seed, name);
    queues.set(id, {
      id,
      repository,
      model,
      facts: {
        id,
        repositoryId: v2RepositoryId(repository),
        createdAt: createdBefore - createdDaysAgo * 86_400,
        ...drawn,
      },
    });
  }
  const entryReads = createV2EntryReads(queues);
  const queueKeys = new Map([...queues.keys()].map((id, index) => [id, index]));

  const renderQueue = (entry: QueueEntry) =>
    renderMergeQueueV2(entry.repository, entry.model, entry.facts);

  const entryId = (pr: SimulatedPullRequest) => stableUuid(`queue-entry:${pr.id}`);

  const pullRequestKey = (pr: SimulatedPullRequest): SortKey => [-pr.submittedAt, -pr.sequence];

  const queueNotFound = (id: string) =>
    notFound('MERGE_QUEUE_NOT_FOUND', `merge queue ${id} not found`);

  return {
    ...entryReads,
    listMergeQueues(query, page) {
      const repositoryId = readUuid(query, 'repositoryId');
      if (!repositoryId.ok) return repositoryId;
      const targetBranch = readText(query, 'targetBranch');
      if (!targetBranch.ok) return targetBranch;
      if (targetBranch.body !== undefined && repositoryId.body === undefined) {
        return validationFailed('targetBranch may only be given together with repositoryId');
      }
      const rows = [...queues.values()].filter(
        (entry) =>
          (repositoryId.body === undefined || entry.facts.repositoryId === repositoryId.body) &&
          (targetBranch.body === undefined || entry.model.branch === targetBranch.body),
      );
      const keyOf = (entry: QueueEntry): SortKey => [queueKeys.get(entry.facts.id) ?? 0];
      return { ok: true, body: takePage(rows, keyOf, page, renderQueue) };
    },

    getMergeQueue(id) {
      const entry = queues.get(id);
      if (entry === undefined) return queueNotFound(id);
      return { ok: true, body: renderQueue(entry) };
    },

    listPullRequests(mergeQueueId, query, page) {
      const entry = queues.get(mergeQueueId);
      if (entry === undefined) return queueNotFound(mergeQueueId);
      const states = readList(query, 'state', V2_ENTRY_STATES, 'queue-entry state');
      if (!states.ok) return states;
      const author = readText(query, 'author');
      if (!author.ok) return author;
      const after = readInstant(query, 'concludedAfter');
      if (!after.ok) return after;
      const before = readInstant(query, 'concludedBefore');
      if (!before.ok) return before;
      const concludedOnly = after.body !== undefined || before.body !== undefined;
      const from = after.body ?? -Infinity;
      const to = before.body ?? Infinity;
      // A pull request that concluded in the window and was resubmitted since still matches.
      const rows = [...entry.model.active, ...entry.model.concluded]
        .filter(
          (pr) =>
            (states.body === undefined || states.body.has(camelCase(pr.state))) &&
            (author.body === undefined || pr.author === author.body) &&
            (!concludedOnly ||
              pr.conclusions.some((conclusion) => conclusion.at >= from && conclusion.at <= to)),
        )
        .sort((a, b) => b.submittedAt - a.submittedAt || b.sequence - a.sequence);
      const ids = { mergeQueueId, repositoryId: entry.facts.repositoryId };
      return {
        ok: true,
        body: takePage(rows, pullRequestKey, page, (pr) =>
          renderPullRequestV2(entry.repository, pr, { ...ids, entryId: entryId(pr) }),
        ),
      };
    },

    listTestingResults(mergeQueueId, query, page) {
      const entry = queues.get(mergeQueueId);
      if (entry === undefined) return queueNotFound(mergeQueueId);
      return listTestingResults(
        mergeQueueId,
        entry.model.testing.attempts,
        query,
        page,
        world.now(),
      );
    },

    listTests(query, page) {
      return listTests(collections, query, page, world.now(), createdBefore);
    },

    listTestCollections(query, page) {
      const q = readText(query, 'q');
      if (!q.ok) return q;
      const needle = q.body?.toLowerCase();
      const rows = collections.filter(
        (entry) => needle === undefined || collectionName(entry).toLowerCase().includes(needle),
      );
      const keyOf = (entry: RepositoryEntry): SortKey => [entry.index];
      return {
        ok: true,
        body: takePage(rows, keyOf, page, (entry) => {
          const key = repositoryKey(entry.repository);
          return {
            id: entry.id,
            name: collectionName(entry),
            description: unitHash(`described:${key}`) < 0.5 ? null : `Tests of ${key}`,
            testCaseCount: collectionTests(entry).length,
            quarantineEnabled: true,
            autoQuarantineEnabled: unitHash(`auto-quarantine:${key}`) < 0.7,
            createdAt: isoTimestamp(entry.facts.createdAt),
            updatedAt: isoTimestamp(entry.facts.updatedAt),
          };
        }),
      };
    },

    getRepository(id) {
      if (!isUuid(id)) {
        return validationFailed(`the repository id must be a uuid, got ${JSON.stringify(id)}`);
      }
      const entry = repositories.get(id);
      if (entry === undefined) {
        return notFound('REPOSITORY_NOT_FOUND', `repository ${id} not found`);
      }
      return { ok: true, body: renderRepositoryV2(entry.repository, entry.facts) };
    },

    findRepositories(query, page) {
      const providerUrl = readText(query, 'providerUrl');
      if (!providerUrl.ok) return providerUrl;
      if (providerUrl.body === undefined) return validationFailed('providerUrl is required');
      // "A `.git` suffix and trailing slashes are normalized away"; the providers' own names
      // ignore letter case.
      const wanted = normalizedProviderUrl(providerUrl.body);
      const rows = collections.filter(
        (entry) => normalizedProviderUrl(repositoryUrl(entry.repository)) === wanted,
      );
      if (rows.length === 0) {
        return notFound('PROVIDER_URL_NOT_FOUND', `no repository at ${providerUrl.body}`);
      }
      const keyOf = (entry: RepositoryEntry): SortKey => [entry.index];
      return {
        ok: true,
        body: takePage(rows, keyOf, page, (entry) =>
          renderRepositoryV2(entry.repository, entry.facts),
        ),
      };
    },

    repositoryKeyOf(id) {
      const repository =
        queues.get(id)?.repository ??
        repositories.get(id)?.repository ??
        (isUuid(id) ? entryReads.queueOfPullRequest(id)?.repository : undefined);
      return repository === undefined ? '' : repositoryKey(repository);
    },
  };
}

function normalizedProviderUrl(url: string): string {
  return url
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .toLowerCase();
}

function collectionName(entry: CollectionEntry): string {
  return `${entry.repository.owner}/${entry.repository.name}`;
}
