// pollMergeQueue over real sockets with the real TrunkClient: against the simulator (both response
// flavours) the snapshot must equal what the world holds at that moment, computed here from the
// world's own answers; small node:http fakes pin the edge cases (a PR that leaves the queue between
// the two calls, enum values nobody has heard of, a lookup that fails for good).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { pollMergeQueue } from '../../../src/poller/v1/mergeQueuePoll.js';
import type {
  BlockedReason,
  MergeQueueSnapshot,
  PullRequestSnapshot,
} from '../../../src/snapshot/types.js';
import type {
  ReadinessBody,
  SimulatorFlavour,
  SubmittedPullRequestBody,
} from '../../../src/simulator/responses.js';
import type { SimulatorWorld } from '../../../src/simulator/world.js';
import { startTestSimulator } from '../../support/simulator.js';
import type { SimulatedRepository } from '../../../src/simulator/repositories.js';
import { TrunkApiError } from '../../../src/trunk/errors.js';
import type {
  EnqueuedPullRequest,
  MergeQueue,
  Readiness,
  RepoRef,
} from '../../../src/trunk/schemas.js';
import {
  REPO,
  TOKEN,
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  sendText,
  startApiServer,
} from '../../trunk/harness.js';
import type { ApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

const LOOKUP_PATH = '/v1/getSubmittedPullRequest';
const QUEUE_PATH = '/v1/getQueue';

async function simulatorAndClient(flavour: SimulatorFlavour, seed: number) {
  const { world, simulator } = await startTestSimulator({ seed, flavour, token: TOKEN });
  const { client } = makeClient(simulator.baseUrl);
  return { world, simulator, client };
}

function refOf(repository: SimulatedRepository): RepoRef {
  return { host: repository.host, owner: repository.owner, name: repository.name };
}

function nameOf(repo: RepoRef): string {
  return `${repo.host}/${repo.owner}/${repo.name}`;
}

/** trunk-api-v1.md 2.7, written out: each rule that does not hold is a reason the PR waits. */
function readinessFailures(readiness: ReadinessBody): BlockedReason[] {
  const reasons: BlockedReason[] = [];
  if (!readiness.doesBaseBranchMatch) reasons.push('base_branch_mismatch');
  const mergeability = readiness.hostMergeability ?? readiness.gitHubMergeability;
  if (mergeability !== 'mergeable') reasons.push('not_mergeable');
  if (readiness.requiresImpactedTargets && !readiness.hasImpactedTargets) {
    reasons.push('impacted_targets_missing');
  }
  return reasons;
}

interface Expectation {
  readonly snapshot: MergeQueueSnapshot;
  /** getSubmittedPullRequest calls a poll should make. */
  readonly lookups: number;
}

/** What a poll of (repo, branch) must return now, from the world's own getQueue/getSubmittedPullRequest. */
function expectedPoll(
  world: SimulatorWorld,
  repo: RepoRef,
  branch: string,
  pullRequestDetails: boolean,
  takenAt: number,
): Expectation {
  const answer = world.getQueue(repo, branch);
  if (!answer.ok) throw new Error(`simulator has no queue ${nameOf(repo)}@${branch}`);
  const queue = answer.body;
  let lookups = 0;
  const pullRequests: PullRequestSnapshot[] = [];
  for (const item of queue.enqueuedPullRequests) {
    let detail: SubmittedPullRequestBody | undefined;
    // The item's own state is used when the live service sends it; readiness matters for not_ready.
    if (pullRequestDetails && (item.state === undefined || item.state === 'not_ready')) {
      lookups += 1;
      const looked = world.getSubmittedPullRequest(repo, branch, item.prNumber);
      if (!looked.ok) continue;
      detail = looked.body;
    }
    const state = item.state ?? detail?.state ?? 'unknown';
    pullRequests.push({
      number: item.prNumber,
      state,
      priorityName: item.priorityName,
      stateChangedAt: Date.parse(item.stateChangedAt) / 1000,
      blockedReasons:
        state === 'not_ready' && detail !== undefined ? readinessFailures(detail.readiness) : [],
    });
  }
  return {
    lookups,
    snapshot: {
      kind: 'merge_queue',
      repo: nameOf(repo),
      branch,
      takenAt,
      state: queue.state,
      mode: queue.mode,
      mergeMethod: queue.mergeMethod,
      directMergeMode: queue.directMergeMode,
      optimizationMode: queue.optimizationMode,
      concurrency: queue.concurrency,
      testingTimeoutSeconds: queue.testingTimeoutMinutes * 60,
      pendingFailureDepth: queue.pendingFailureDepth,
      bisectionConcurrency: queue.bisectionConcurrency,
      batchingMaxWaitSeconds: queue.batchingMaxWaitTimeMinutes * 60,
      batchingMinSize: queue.batchingMinSize,
      requiredStatuses: queue.requiredStatuses.length,
      settings: {
        batch: queue.batch,
        can_optimistically_merge: queue.canOptimisticallyMerge,
        create_prs_for_testing_branches: queue.createPrsForTestingBranches,
        comments: queue.commentsEnabled,
        commands: queue.commandsEnabled,
        status_check: queue.statusCheckEnabled,
      },
      pullRequests,
      readinessKnown: pullRequestDetails,
    },
  };
}

interface Totals {
  pullRequests: number;
  lookups: number;
  notReady: number;
  reasons: Set<BlockedReason>;
}

/**
 * Polls every queue of two seeded worlds at several moments and checks each snapshot against the
 * world; returns totals so callers can check the worlds exercised what they meant to test.
 */
async function pollEveryQueue(
  flavour: SimulatorFlavour,
  pullRequestDetails: boolean,
): Promise<Totals> {
  const totals: Totals = { pullRequests: 0, lookups: 0, notReady: 0, reasons: new Set() };
  // Seeds 1 and 24 between them hold not_ready PRs failing each of the three readiness rules.
  for (const seed of [1, 24]) {
    const { world, simulator, client } = await simulatorAndClient(flavour, seed);
    for (let moment = 0; moment < 4; moment++) {
      world.advance(world.now() + 60);
      for (const repository of world.repositories) {
        const repo = refOf(repository);
        for (const branch of repository.branches) {
          simulator.resetRequestCounts();
          const snapshot = await pollMergeQueue({
            reader: client,
            repo,
            repoName: nameOf(repo),
            branch,
            pullRequestDetails,
            options: {},
            now: () => world.now(),
          });
          const expected = expectedPoll(world, repo, branch, pullRequestDetails, world.now());
          expect(snapshot).toEqual(expected.snapshot);
          const counts = simulator.requestCounts();
          expect(counts[QUEUE_PATH]).toBe(1);
          expect(counts[LOOKUP_PATH] ?? 0).toBe(expected.lookups);

          totals.pullRequests += snapshot.pullRequests.length;
          totals.lookups += counts[LOOKUP_PATH] ?? 0;
          for (const pr of snapshot.pullRequests) {
            if (pr.state === 'not_ready') totals.notReady += 1;
            for (const reason of pr.blockedReasons) totals.reasons.add(reason);
          }
        }
      }
    }
  }
  return totals;
}

describe('pollMergeQueue against the simulator', () => {
  it('documented flavour: looks up every PR and reports what the world holds', async () => {
    const totals = await pollEveryQueue('documented', true);
    // Queue items carry no state in the documented shape: every PR needs its lookup.
    expect(totals.lookups).toBe(totals.pullRequests);
    expect(totals.pullRequests).toBeGreaterThan(50);
    expect(totals.notReady).toBeGreaterThan(0);
    expect([...totals.reasons].sort()).toEqual([
      'base_branch_mismatch',
      'impacted_targets_missing',
      'not_mergeable',
    ]);
  });

  it('live flavour: looks up only the not_ready PRs and reports what the world holds', async () => {
    const totals = await pollEveryQueue('live', true);
    expect(totals.notReady).toBeGreaterThan(0);
    expect(totals.lookups).toBe(totals.notReady);
    expect(totals.lookups).toBeLessThan(totals.pullRequests);
    expect([...totals.reasons].sort()).toEqual([
      'base_branch_mismatch',
      'impacted_targets_missing',
      'not_mergeable',
    ]);
  });

  it('documented flavour without PR details: no lookups, every state unknown, readiness unknown', async () => {
    const totals = await pollEveryQueue('documented', false);
    expect(totals.lookups).toBe(0);
    expect(totals.pullRequests).toBeGreaterThan(50);
    // expectedPoll already pinned each PR to `unknown`; nothing can be not_ready or blocked.
    expect(totals.notReady).toBe(0);
    expect(totals.reasons.size).toBe(0);
  });

  it('live flavour without PR details: no lookups, states from the queue items, no blocked reasons', async () => {
    const totals = await pollEveryQueue('live', false);
    expect(totals.lookups).toBe(0);
    expect(totals.notReady).toBeGreaterThan(0);
    expect(totals.reasons.size).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Fixture-driven fakes

/** A getQueue body as the fixtures hold it: every item carries the documented fields. */
type QueueBody = Omit<MergeQueue, 'enqueuedPullRequests'> & {
  enqueuedPullRequests: (Required<EnqueuedPullRequest> & Record<string, unknown>)[];
};

function loadQueueFixture(name: string): QueueBody {
  const text = readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');
  return JSON.parse(text) as QueueBody;
}

/** How the fake answers getSubmittedPullRequest for one PR number. */
type LookupAnswer =
  | { readonly status: 200; readonly state: string | undefined; readonly readiness?: Readiness }
  | { readonly status: 404 | 500; readonly text: string };

/** A getSubmittedPullRequest body for a queue item, with the state and readiness given. */
function submittedBody(
  item: QueueBody['enqueuedPullRequests'][number],
  answer: Extract<LookupAnswer, { status: 200 }>,
): Record<string, unknown> {
  return {
    ...item,
    forceEnqueued: false,
    isCurrentlySubmittedToQueue: true,
    // The answer's own state, never the item's.
    state: undefined,
    ...(answer.state === undefined ? {} : { state: answer.state }),
    ...(answer.readiness === undefined ? {} : { readiness: answer.readiness }),
  };
}

/** Serves `queue` for getQueue and `answers` for getSubmittedPullRequest (400 for any other PR). */
async function startQueueFake(
  queue: QueueBody,
  answers: ReadonlyMap<number, LookupAnswer>,
): Promise<{ server: ApiServer; lookedUp: () => number[] }> {
  const server = await startApiServer((_req, res, _index, recorded) => {
    if (recorded.url === QUEUE_PATH) {
      sendJson(res, 200, queue);
      return;
    }
    if (recorded.url === LOOKUP_PATH) {
      const { pr } = JSON.parse(recorded.body) as { pr: { number: number } };
      const answer = answers.get(pr.number);
      const item = queue.enqueuedPullRequests.find((entry) => entry.prNumber === pr.number);
      if (answer === undefined || item === undefined) {
        sendText(res, 400, `unexpected lookup of PR ${pr.number}`);
      } else if (answer.status === 200) {
        sendJson(res, 200, submittedBody(item, answer));
      } else {
        sendText(res, answer.status, answer.text);
      }
      return;
    }
    sendText(res, 404, `no such endpoint: ${recorded.url}`);
  });
  const lookedUp = () =>
    server.requests
      .filter((request) => request.url === LOOKUP_PATH)
      .map((request) => (JSON.parse(request.body) as { pr: { number: number } }).pr.number)
      .sort((a, b) => a - b);
  return { server, lookedUp };
}

const TAKEN_AT = 1_767_261_600;

function pollFake(apiUrl: string, retry?: { maxAttempts: number }): Promise<MergeQueueSnapshot> {
  const { client } = makeClient(apiUrl, retry === undefined ? {} : { retry });
  return pollMergeQueue({
    reader: client,
    repo: REPO,
    repoName: 'github.com/acme/web',
    branch: 'main',
    pullRequestDetails: true,
    options: {},
    now: () => TAKEN_AT,
  });
}

describe('pollMergeQueue edge cases', () => {
  it('drops a PR whose lookup answers 404 (it left the queue between the calls)', async () => {
    const queue = loadQueueFixture('queue-pr-left-between-calls.json');
    const { server, lookedUp } = await startQueueFake(
      queue,
      new Map<number, LookupAnswer>([
        [4101, { status: 200, state: 'testing' }],
        [4102, { status: 404, text: 'pull request 4102 was not submitted to the main queue' }],
        [
          4103,
          {
            status: 200,
            state: 'not_ready',
            readiness: {
              requiresImpactedTargets: true,
              hasImpactedTargets: false,
              doesBaseBranchMatch: true,
              hostMergeability: 'mergeable',
            },
          },
        ],
      ]),
    );

    const snapshot = await pollFake(server.apiUrl);

    expect(snapshot.pullRequests).toEqual([
      {
        number: 4101,
        state: 'testing',
        priorityName: 'medium',
        stateChangedAt: Date.parse('2026-01-01T09:58:00Z') / 1000,
        blockedReasons: [],
      },
      {
        number: 4103,
        state: 'not_ready',
        priorityName: 'medium',
        stateChangedAt: Date.parse('2026-01-01T10:00:00Z') / 1000,
        blockedReasons: ['impacted_targets_missing'],
      },
    ]);
    expect(snapshot).toMatchObject({
      repo: 'github.com/acme/web',
      branch: 'main',
      takenAt: TAKEN_AT,
      state: 'running',
      readinessKnown: true,
      testingTimeoutSeconds: 45 * 60,
      requiredStatuses: 2,
    });
    // The 404 is an answer, not a failure: asked once, not retried.
    expect(lookedUp()).toEqual([4101, 4102, 4103]);
  });

  it('passes unknown queue state, mode, PR state and priority names through as label values', async () => {
    const queue = loadQueueFixture('queue-with-unknown-enum-values.json');
    const { server, lookedUp } = await startQueueFake(
      queue,
      new Map<number, LookupAnswer>([
        [
          5002,
          {
            status: 200,
            state: 'not_ready',
            readiness: {
              requiresImpactedTargets: false,
              hasImpactedTargets: false,
              doesBaseBranchMatch: true,
              gitHubMergeability: 'blocked_by_ruleset',
            },
          },
        ],
        [5003, { status: 200, state: 'merge_scheduled' }],
      ]),
    );

    const snapshot = await pollFake(server.apiUrl);

    expect(snapshot).toMatchObject({
      state: 'frozen_for_audit',
      mode: 'hyperparallel',
      mergeMethod: 'fast_forward',
      directMergeMode: 'when_green',
      optimizationMode: 'speculative_skip',
      batchingMaxWaitSeconds: 600,
      requiredStatuses: 0,
    });
    expect(
      snapshot.pullRequests.map(({ number, state, priorityName, blockedReasons }) => ({
        number,
        state,
        priorityName,
        blockedReasons,
      })),
    ).toEqual([
      {
        number: 5001,
        state: 'awaiting_approval',
        priorityName: 'critical',
        blockedReasons: [],
      },
      {
        number: 5002,
        state: 'not_ready',
        priorityName: 'someday',
        // Any mergeability other than `mergeable`, even one never seen before, fails the rule.
        blockedReasons: ['not_mergeable'],
      },
      {
        number: 5003,
        state: 'merge_scheduled',
        priorityName: 'medium',
        blockedReasons: [],
      },
    ]);
    // 5001 carries a (strange) state of its own: only the not_ready and the stateless PR are asked.
    expect(lookedUp()).toEqual([5002, 5003]);
  });

  it("keeps the queue item's own state when the later lookup already reports another", async () => {
    const queue = loadQueueFixture('queue-with-unknown-enum-values.json');
    const { server } = await startQueueFake(
      queue,
      new Map<number, LookupAnswer>([
        // The PR moved on between getQueue and the lookup; the queue's picture stays consistent.
        [
          5002,
          {
            status: 200,
            state: 'pending',
            readiness: {
              requiresImpactedTargets: true,
              hasImpactedTargets: false,
              doesBaseBranchMatch: false,
              gitHubMergeability: 'mergeable',
            },
          },
        ],
        [5003, { status: 200, state: 'testing' }],
      ]),
    );

    const snapshot = await pollFake(server.apiUrl);

    expect(
      snapshot.pullRequests.map(({ number, state, blockedReasons }) => ({
        number,
        state,
        blockedReasons,
      })),
    ).toEqual([
      { number: 5001, state: 'awaiting_approval', blockedReasons: [] },
      {
        number: 5002,
        state: 'not_ready',
        blockedReasons: ['base_branch_mismatch', 'impacted_targets_missing'],
      },
      { number: 5003, state: 'testing', blockedReasons: [] },
    ]);
  });

  it('fails the whole poll when a PR lookup fails for good', async () => {
    const queue = loadQueueFixture('queue-pr-left-between-calls.json');
    const { server, lookedUp } = await startQueueFake(
      queue,
      new Map<number, LookupAnswer>([
        [4101, { status: 200, state: 'testing' }],
        [4102, { status: 500, text: 'internal error' }],
        [4103, { status: 200, state: 'pending' }],
      ]),
    );

    const error = await rejectionOf(pollFake(server.apiUrl, { maxAttempts: 1 }));

    expect(error).toBeInstanceOf(TrunkApiError);
    expect(error).toMatchObject({
      endpoint: 'getSubmittedPullRequest',
      repo: 'github.com/acme/web',
      branch: 'main',
      status: 500,
      attempts: 1,
    });
    expect((error as Error).message).toContain('HTTP 500');
    expect(lookedUp().filter((number) => number === 4102)).toEqual([4102]);
  });
});
