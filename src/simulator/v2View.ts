// The v2 view of the simulated world: the same queues, pull requests and quarantined tests v1
// shows, found by stable ids and filtered and paged the v2 way. Ids are hashes of names, so they
// never change and are the same for every seed; facts v1 does not show come from their own random
// stream, so adding the v2 view changes nothing v1 answers.
import type { MergeQueueModel } from './mergeQueueModel.js';
import { PULL_REQUEST_STATES, isFinalState, type SimulatedPullRequest } from './pullRequest.js';
import type { SimulatedQuarantinedTest } from './quarantineModel.js';
import { createRandom, deriveSeed } from './random.js';
import { repositoryKey, type SimulatedRepository } from './repositories.js';
import { notFound, validationFailed, type V2Answer } from './v2Errors.js';
import { takePage, type ListPage, type PageRequest, type Query, type SortKey } from './v2Paging.js';
import {
  camelCase,
  renderMergeQueueV2,
  renderPullRequestV2,
  renderRepositoryV2,
  renderTestV2,
  type MergeQueueV2Body,
  type PullRequestV2Body,
  type RepositoryV2Body,
  type TestCollectionV2Body,
  type TestV2Body,
  type V2QueueFacts,
} from './v2Responses.js';
import type { SimulatorWorld } from './world.js';

/** Query filters each list takes (besides paging). */
export const V2_FILTERS = {
  mergeQueues: ['repositoryId', 'targetBranch'],
  pullRequests: ['state', 'author', 'concludedAfter', 'concludedBefore'],
  tests: ['quarantineState', 'status', 'owner', 'testCollectionId'],
  testCollections: [],
} as const;

/** Queue-entry states in v2's spelling. */
export const V2_ENTRY_STATES: readonly string[] = PULL_REQUEST_STATES.map(camelCase);

const TEST_STATUSES = ['healthy', 'flaky', 'broken'];

export interface V2View {
  listMergeQueues(query: Query, page: PageRequest): V2Answer<ListPage<MergeQueueV2Body>>;
  getMergeQueue(id: string): V2Answer<MergeQueueV2Body>;
  listPullRequests(
    mergeQueueId: string,
    query: Query,
    page: PageRequest,
  ): V2Answer<ListPage<PullRequestV2Body>>;
  listTests(query: Query, page: PageRequest): V2Answer<ListPage<TestV2Body>>;
  listTestCollections(page: PageRequest): V2Answer<ListPage<TestCollectionV2Body>>;
  getRepository(id: string): V2Answer<RepositoryV2Body>;
  /** `host/owner/name` of a queue or repository id ('' when unknown), for matching faults. */
  repositoryKeyOf(id: string): string;
}

interface QueueEntry {
  readonly repository: SimulatedRepository;
  readonly model: MergeQueueModel;
  readonly facts: V2QueueFacts;
}

interface RepositoryEntry {
  readonly repository: SimulatedRepository;
  readonly id: string;
  readonly testCollectionId: string;
  readonly index: number;
  readonly tests: () => readonly SimulatedQuarantinedTest[];
}

/** A short id: `prefix` and a base-36 hash of `name`. */
function hashId(prefix: string, name: string): string {
  return `${prefix}_${deriveSeed(0, name).toString(36)}`;
}

/** Unix seconds of an ISO 8601 date-time with a zone, or undefined. */
function parseInstant(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text)) {
    return undefined;
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/** A comma list whose every item is one of `known`, or the item that is not. */
function readList(text: string | undefined, known: readonly string[]) {
  if (text === undefined) return { ok: true as const, items: undefined };
  const items = text.split(',').map((item) => item.trim());
  const unknown = items.find((item) => !known.includes(item));
  return unknown === undefined
    ? { ok: true as const, items: new Set(items) }
    : { ok: false as const, unknown };
}

/** The v2 view of `world`, for the server's v2 routes. */
export function createV2View(world: SimulatorWorld): V2View {
  const createdBefore = world.now();
  const repositories = new Map<string, RepositoryEntry>();
  world.quarantineLists.forEach(({ repository, model }, index) => {
    const key = repositoryKey(repository);
    const id = hashId('repo', `repository:${key}`);
    repositories.set(id, {
      repository,
      id,
      testCollectionId: hashId('tc', `test-collection:${key}`),
      index,
      tests: () => model.tests,
    });
  });
  const repositoryIdOf = (repository: SimulatedRepository) =>
    hashId('repo', `repository:${repositoryKey(repository)}`);

  const queues = new Map<string, QueueEntry>();
  for (const { repository, model } of world.mergeQueues) {
    const name = `${repositoryKey(repository)}:${model.branch}`;
    let id = hashId('mq', `merge-queue:${name}`);
    // A hash clash among thousands of queues is unlikely, not impossible; ids must stay unique.
    for (let attempt = 1; queues.has(id); attempt++) {
      id = hashId('mq', `merge-queue:${name}:${attempt}`);
    }
    const random = createRandom(deriveSeed(world.seed, `v2:merge-queue:${name}`));
    const managedRoll = random.next();
    queues.set(id, {
      repository,
      model,
      facts: {
        id,
        repositoryId: repositoryIdOf(repository),
        createdAt: createdBefore - random.int(30, 400) * 86_400,
        managedState:
          managedRoll < 0.9 ? 'manual' : managedRoll < 0.97 ? 'terraform' : 'terraformWithDrift',
        notReadyTimeoutMinutes: random.pick([60, 240, 1440]),
        isExtensionEnabled: random.chance(0.5),
        areLabelCommandsEnabled: random.chance(0.3),
        areStateLabelsEnabled: random.chance(0.4),
        allowedBotSubmitters: random.chance(0.5) ? ['renovate[bot]', 'dependabot[bot]'] : [],
      },
    });
  }
  const queueKeys = new Map([...queues.keys()].map((id, index) => [id, index]));

  const renderQueue = (entry: QueueEntry) =>
    renderMergeQueueV2(entry.repository, entry.model, entry.facts);

  const entryId = (pr: SimulatedPullRequest) =>
    `qe_${deriveSeed(1, pr.id).toString(36)}${deriveSeed(2, pr.id).toString(36)}`;

  const pullRequestKey = (pr: SimulatedPullRequest): SortKey => [-pr.submittedAt, -pr.sequence];

  return {
    listMergeQueues(query, page) {
      const repositoryId = query.get('repositoryId');
      const targetBranch = query.get('targetBranch');
      if (targetBranch !== undefined && repositoryId === undefined) {
        return validationFailed('targetBranch may only be given together with repositoryId');
      }
      const rows = [...queues.values()].filter(
        (entry) =>
          (repositoryId === undefined || entry.facts.repositoryId === repositoryId) &&
          (targetBranch === undefined || entry.model.branch === targetBranch),
      );
      const keyOf = (entry: QueueEntry): SortKey => [queueKeys.get(entry.facts.id) ?? 0];
      return { ok: true, body: takePage(rows, keyOf, page, renderQueue) };
    },

    getMergeQueue(id) {
      const entry = queues.get(id);
      if (entry === undefined) {
        return notFound('MERGE_QUEUE_NOT_FOUND', `merge queue ${id} not found`);
      }
      return { ok: true, body: renderQueue(entry) };
    },

    listPullRequests(mergeQueueId, query, page) {
      const entry = queues.get(mergeQueueId);
      if (entry === undefined) {
        return notFound('MERGE_QUEUE_NOT_FOUND', `merge queue ${mergeQueueId} not found`);
      }
      const states = readList(query.get('state'), V2_ENTRY_STATES);
      if (!states.ok) {
        return validationFailed(
          `state: unknown queue-entry state ${JSON.stringify(states.unknown)}; expected a comma list of ${V2_ENTRY_STATES.join(', ')}`,
        );
      }
      const window: number[] = [];
      for (const name of ['concludedAfter', 'concludedBefore'] as const) {
        const text = query.get(name);
        const at = text === undefined ? undefined : parseInstant(text);
        if (text !== undefined && at === undefined) {
          return validationFailed(
            `${name} must be an ISO 8601 date-time, got ${JSON.stringify(text)}`,
          );
        }
        window.push(at ?? (name === 'concludedAfter' ? -Infinity : Infinity));
      }
      const [after = -Infinity, before = Infinity] = window;
      const concludedOnly = query.has('concludedAfter') || query.has('concludedBefore');
      const author = query.get('author');
      const rows = [...entry.model.active, ...entry.model.concluded]
        .filter(
          (pr) =>
            (states.items === undefined || states.items.has(camelCase(pr.state))) &&
            (author === undefined || pr.author === author) &&
            (!concludedOnly ||
              (isFinalState(pr.state) &&
                pr.stateChangedAt >= after &&
                pr.stateChangedAt <= before)),
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

    listTests(query, page) {
      const quarantineState = query.get('quarantineState');
      if (
        quarantineState !== undefined &&
        quarantineState !== 'quarantined' &&
        quarantineState !== 'notQuarantined'
      ) {
        return validationFailed(
          `quarantineState must be quarantined or notQuarantined, got ${JSON.stringify(quarantineState)}`,
        );
      }
      const statuses = readList(query.get('status'), TEST_STATUSES);
      if (!statuses.ok) {
        return validationFailed(
          `status: unknown test status ${JSON.stringify(statuses.unknown)}; expected ${TEST_STATUSES.join(', ')}`,
        );
      }
      const owner = query.get('owner');
      const collectionId = query.get('testCollectionId');
      // The simulator models quarantined tests only: a healthy, unquarantined test is not in it.
      const wanted = (test: SimulatedQuarantinedTest) =>
        (statuses.items === undefined || statuses.items.has(test.status.toLowerCase())) &&
        (owner === undefined || test.codeowners.includes(owner));
      const firstCollection = page.includeTotal ? 0 : Number(page.after?.[0] ?? 0);
      function* rows(): Generator<[RepositoryEntry, SimulatedQuarantinedTest]> {
        if (quarantineState === 'notQuarantined') return;
        for (const entry of repositories.values()) {
          if (entry.index < firstCollection) continue;
          if (collectionId !== undefined && entry.testCollectionId !== collectionId) continue;
          const tests = entry.tests().filter(wanted);
          tests.sort(
            (a, b) =>
              a.quarantinedAt - b.quarantinedAt ||
              (a.testCaseId < b.testCaseId ? -1 : a.testCaseId > b.testCaseId ? 1 : 0),
          );
          for (const test of tests) yield [entry, test];
        }
      }
      const keyOf = ([entry, test]: [RepositoryEntry, SimulatedQuarantinedTest]): SortKey => [
        entry.index,
        test.quarantinedAt,
        test.testCaseId,
      ];
      return {
        ok: true,
        body: takePage(rows(), keyOf, page, ([entry, test]) =>
          renderTestV2(test, { testCollectionId: entry.testCollectionId, repoId: entry.id }),
        ),
      };
    },

    listTestCollections(page) {
      const keyOf = (entry: RepositoryEntry): SortKey => [entry.index];
      return {
        ok: true,
        body: takePage(repositories.values(), keyOf, page, (entry) => ({
          id: entry.testCollectionId,
          name: `${entry.repository.owner}/${entry.repository.name}`,
          repoId: entry.id,
        })),
      };
    },

    getRepository(id) {
      const entry = repositories.get(id);
      if (entry === undefined)
        return notFound('REPOSITORY_NOT_FOUND', `repository ${id} not found`);
      return { ok: true, body: renderRepositoryV2(entry.repository, id) };
    },

    repositoryKeyOf(id) {
      const repository = queues.get(id)?.repository ?? repositories.get(id)?.repository;
      return repository === undefined ? '' : repositoryKey(repository);
    },
  };
}
