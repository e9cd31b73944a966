// The simulated Trunk organization: every merge queue and quarantine list, moved forward in fixed
// steps by a seeded PRNG. State changes only through advance(), so a seed and a sequence of
// advance() times replay exactly.
import { createMergeQueueModel, type MergeQueueModel } from './mergeQueueModel.js';
import { createQuarantineListModel, type QuarantineListModel } from './quarantineModel.js';
import { quarantinedTestsPage } from './quarantinePage.js';
import { createTestCollectionModel, type TestCollectionModel } from './testCollectionModel.js';
import { createRandom, deriveSeed, type Random } from './random.js';
import {
  DEFAULT_SIMULATED_REPOSITORIES,
  repositoryKey,
  type SimulatedRepository,
} from './repositories.js';
import {
  renderMergeQueue,
  renderSubmittedPullRequest,
  type MergeQueueBody,
  type QuarantinedTestsPageBody,
  type SimulatorFlavour,
  type SubmittedPullRequestBody,
} from './responses.js';
import { copyStatistics, createStatistics, type SimulatorStatistics } from './statistics.js';
import { drawV2QueueFacts } from './v2QueueFacts.js';
import { testStyleFor } from './vocabulary.js';
import type { WorldEvent, WorldEventListener } from './worldEvents.js';

/** 2026-01-01T00:00:00Z: the default start, so tests do not depend on the wall clock. */
export const DEFAULT_SIMULATOR_START_TIME = Date.UTC(2026, 0, 1) / 1000;

/** Simulated seconds per model step. */
export const SIMULATOR_STEP_SECONDS = 5;

/** Simulated time run before startTime, so queues are already busy when the world is created. */
const DEFAULT_WARM_UP_SECONDS = 2 * 3600;

/** `heavy`: pull requests and quarantined tests constantly arrive and leave (soak runs). */
export type SimulatorChurn = 'normal' | 'heavy';

export interface SimulatorWorldOptions {
  readonly seed: number;
  /** Unix seconds; defaults to DEFAULT_SIMULATOR_START_TIME. */
  readonly startTime?: number;
  readonly flavour?: SimulatorFlavour;
  readonly repositories?: readonly SimulatedRepository[];
  /** Defaults to `normal`. */
  readonly churn?: SimulatorChurn;
  /** Simulated seconds run before startTime; defaults to two hours. Big worlds want less. */
  readonly warmUpSeconds?: number;
  /** Scripted changes on top of the random model after every step (the demo's incidents). */
  readonly script?: WorldScript;
  /**
   * Tests the random model would make broken are flaky instead, so only the script breaks one:
   * the demo, whose alerts are its incidents' (a broken test raises TrunkBrokenTestsPresent and
   * TrunkTestsTurnedBroken). The same random draws either way.
   */
  readonly brokenAsFlaky?: boolean;
}

/** The models a script may change, by repository key (`host/owner/name`) and branch. */
export interface ScriptableWorld {
  queue(repositoryKey: string, branch: string): MergeQueueModel | undefined;
  quarantine(repositoryKey: string): QuarantineListModel | undefined;
  /** The repository's tests that are not quarantined. */
  tests(repositoryKey: string): TestCollectionModel | undefined;
}

/** Runs after every model step of the world, warm-up included, with the step's end time. */
export interface WorldScript {
  afterStep(now: number, world: ScriptableWorld): void;
}

/** A repository reference as sent in request bodies. */
export interface RepositoryReference {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

/** A response body, or why there is none (as an HTTP status and a plain-text message). */
export type WorldAnswer<T> =
  | { readonly ok: true; readonly body: T }
  | { readonly ok: false; readonly status: 400 | 404; readonly message: string };

/** One merge queue of the world as the v2 view reads it (live: it changes as the world moves). */
export interface WorldMergeQueue {
  readonly repository: SimulatedRepository;
  readonly model: MergeQueueModel;
}

/** One repository's quarantine list as the v2 view reads it (live). */
export interface WorldQuarantineList {
  readonly repository: SimulatedRepository;
  readonly model: QuarantineListModel;
}

/** One repository's test collection as the v2 view reads it (live): quarantined or not. */
export interface WorldTestCollection {
  readonly repository: SimulatedRepository;
  readonly quarantine: QuarantineListModel;
  readonly unquarantined: TestCollectionModel;
}

export interface SimulatorWorld {
  readonly seed: number;
  readonly flavour: SimulatorFlavour;
  readonly repositories: readonly SimulatedRepository[];
  /** Every merge queue, repositories in order and each repository's branches in order. */
  readonly mergeQueues: readonly WorldMergeQueue[];
  /** Every repository's quarantine list, in repository order. */
  readonly quarantineLists: readonly WorldQuarantineList[];
  /** Every repository's test collection, in repository order. */
  readonly testCollections: readonly WorldTestCollection[];
  /** Current simulated time, unix seconds. */
  now(): number;
  /** Steps the model forward to `nowSeconds` (no-op for times not ahead by a whole step). */
  advance(nowSeconds: number): void;
  getQueue(repo: RepositoryReference, targetBranch: string): WorldAnswer<MergeQueueBody>;
  getSubmittedPullRequest(
    repo: RepositoryReference,
    targetBranch: string,
    prNumber: number,
  ): WorldAnswer<SubmittedPullRequestBody>;
  listQuarantinedTests(
    repo: RepositoryReference,
    pageSize: number,
    pageToken: string,
  ): WorldAnswer<QuarantinedTestsPageBody>;
  /** Cumulative event counts (a copy). */
  statistics(): SimulatorStatistics;
  /**
   * Tells `listener` of every change Trunk would send a webhook for, from the next advance() on
   * (the warm-up is long past); returns the call that stops it.
   */
  subscribe(listener: WorldEventListener): () => void;
}

interface RepositoryState {
  readonly repository: SimulatedRepository;
  readonly key: string;
  readonly queues: ReadonlyMap<string, MergeQueueModel>;
  readonly quarantine: QuarantineListModel;
  readonly unquarantined: TestCollectionModel;
}

const notFound = (message: string) => ({ ok: false, status: 404, message }) as const;

/** Creates a world whose state depends only on the seed, the options and later advance() calls. */
export function createSimulatorWorld(options: SimulatorWorldOptions): SimulatorWorld {
  const { seed } = options;
  const flavour = options.flavour ?? 'documented';
  const repositories = options.repositories ?? DEFAULT_SIMULATED_REPOSITORIES;
  const startTime = Math.floor(options.startTime ?? DEFAULT_SIMULATOR_START_TIME);
  const statistics = createStatistics();
  const heavyChurn = options.churn === 'heavy';
  let time = startTime - (options.warmUpSeconds ?? DEFAULT_WARM_UP_SECONDS);
  const listeners = new Set<WorldEventListener>();
  const emit = (event: () => WorldEvent): void => {
    if (listeners.size === 0) return;
    const told = event();
    for (const listener of listeners) listener(told);
  };

  const states = new Map<string, RepositoryState>();
  repositories.forEach((repository, index) => {
    const key = repositoryKey(repository);
    const repoRandom = createRandom(deriveSeed(seed, `repo:${key}`));
    // Pull request numbers are per repository, shared by its queues, with gaps for PRs that
    // never reach a queue.
    let lastNumber = repoRandom.int(1000, 9000);
    const nextNumber = (random: Random): number => {
      lastNumber += random.int(1, 3);
      return lastNumber;
    };
    const queues = new Map<string, MergeQueueModel>();
    for (const branch of repository.branches) {
      queues.set(
        branch,
        createMergeQueueModel({
          random: createRandom(deriveSeed(seed, `queue:${key}:${branch}`)),
          recordsRandom: createRandom(deriveSeed(seed, `records:${key}:${branch}`)),
          branch,
          nextPullRequestNumber: nextNumber,
          statistics,
          shape: { pullRequests: repository.pullRequestsPerQueue, heavyChurn },
          notReadyTimeoutMinutes: drawV2QueueFacts(seed, `${key}:${branch}`).notReadyTimeoutMinutes,
          onChange: (pr, from, at) => {
            emit(() => {
              const queue = queues.get(branch);
              const batched = queue?.settings.batch ?? false;
              // The change was recorded before it was told: its transition is the latest.
              const reason = queue?.entries.timeline(pr.id)?.transitions.at(-1)?.reason ?? null;
              return { kind: 'pull_request', repository, branch, batched, pr, from, reason, at };
            });
          },
        }),
      );
    }
    const unquarantined = createTestCollectionModel(
      createRandom(deriveSeed(seed, `tests:${key}`)),
      testStyleFor(index),
      repository.owner,
      time,
      {
        tests:
          repository.unquarantinedTests ??
          (repository.quarantinedTests === undefined ? undefined : 0),
        brokenAsFlaky: options.brokenAsFlaky,
      },
      statistics,
      (change) => {
        emit(() => ({ kind: 'test', repository, change }));
      },
    );
    const quarantine = createQuarantineListModel(
      createRandom(deriveSeed(seed, `quarantine:${key}`)),
      testStyleFor(index),
      repository.owner,
      time,
      statistics,
      { tests: repository.quarantinedTests, heavyChurn, brokenAsFlaky: options.brokenAsFlaky },
      {
        onChange: (change) => {
          emit(() => ({ kind: 'quarantine', repository, change }));
        },
        onRelease: (released) => {
          unquarantined.adopt(released);
        },
      },
    );
    states.set(key, { repository, key, queues, quarantine, unquarantined });
  });

  const scriptable: ScriptableWorld = {
    queue: (key, branch) => states.get(key)?.queues.get(branch),
    quarantine: (key) => states.get(key)?.quarantine,
    tests: (key) => states.get(key)?.unquarantined,
  };
  const advance = (nowSeconds: number): void => {
    while (time + SIMULATOR_STEP_SECONDS <= nowSeconds) {
      time += SIMULATOR_STEP_SECONDS;
      for (const state of states.values()) {
        for (const queue of state.queues.values()) queue.step(time, SIMULATOR_STEP_SECONDS);
        state.quarantine.step(time);
        state.unquarantined.step(time);
      }
      options.script?.afterStep(time, scriptable);
    }
  };
  advance(startTime);

  const findQueue = (
    repo: RepositoryReference,
    branch: string,
  ): MergeQueueModel | ReturnType<typeof notFound> => {
    const state = states.get(repositoryKey(repo));
    if (state === undefined) return notFound(`repository ${repositoryKey(repo)} not found`);
    const queue = state.queues.get(branch);
    if (queue === undefined) {
      return notFound(`no merge queue for branch ${branch} in ${repositoryKey(repo)}`);
    }
    return queue;
  };

  const mergeQueues = [...states.values()].flatMap((state) =>
    [...state.queues.values()].map((model) => ({ repository: state.repository, model })),
  );
  const quarantineLists = [...states.values()].map((state) => ({
    repository: state.repository,
    model: state.quarantine,
  }));
  const testCollections = [...states.values()].map((state) => ({
    repository: state.repository,
    quarantine: state.quarantine,
    unquarantined: state.unquarantined,
  }));

  return {
    seed,
    flavour,
    repositories,
    mergeQueues,
    quarantineLists,
    testCollections,
    now: () => time,
    advance,
    getQueue(repo, targetBranch) {
      const queue = findQueue(repo, targetBranch);
      if ('ok' in queue) return queue;
      return { ok: true, body: renderMergeQueue(queue, flavour) };
    },
    getSubmittedPullRequest(repo, targetBranch, prNumber) {
      const queue = findQueue(repo, targetBranch);
      if ('ok' in queue) return queue;
      const pr = queue.find(prNumber);
      if (pr === undefined) {
        return notFound(`pull request ${prNumber} was not submitted to the ${targetBranch} queue`);
      }
      return { ok: true, body: renderSubmittedPullRequest(pr, flavour) };
    },
    listQuarantinedTests(repo, pageSize, pageToken) {
      const key = repositoryKey(repo);
      const state = states.get(key);
      if (state === undefined) return notFound(`repository ${key} not found`);
      return quarantinedTestsPage(key, state.quarantine, { pageSize, pageToken }, flavour);
    },
    statistics: () => copyStatistics(statistics),
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
