// pollMergeQueueV2 over real sockets against the simulator: for the same world, a v1 poll and a v2
// poll must give the same snapshot (v2 spelled in v1's vocabulary), v2 must only ever GET, and one
// cycle of many queues must read the organization's list of queues once, not once per queue. And,
// against a local server answering a fixture, a PR that paging lists twice counts once.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pollMergeQueue } from '../../../src/poller/v1/mergeQueuePoll.js';
import { pollMergeQueueV2 } from '../../../src/poller/v2/v2MergeQueuePoll.js';
import { V2QueueDirectory } from '../../../src/poller/v2/v2QueueDirectory.js';
import { Secret } from '../../../src/secrets/secret.js';
import { NO_ITEMS } from '../../../src/snapshot/noEntries.js';
import { FaultPlan } from '../../../src/simulator/faults.js';
import type { MergeQueueSnapshot } from '../../../src/snapshot/types.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { startTestSimulator } from '../../support/simulator.js';
import {
  TOKEN,
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  startApiServer,
} from '../../trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_poll-test-key';
const TAKEN_AT = 1_767_261_600;

async function simulatorWithKey(options: { faults?: FaultPlan } = {}) {
  const { world, simulator } = await startTestSimulator({
    seed: 7,
    token: TOKEN,
    apiKey: API_KEY,
    ...options,
  });
  const v1 = makeClient(simulator.origin, { token: new Secret(TOKEN) }).client;
  const { client } = makeClient(simulator.origin, {
    token: undefined,
    apiKey: new Secret(API_KEY),
    retry: { maxAttempts: 1 },
  });
  const v2 = new TrunkV2Client(client);
  const directory = new V2QueueDirectory(v2, 30, () => TAKEN_AT);
  return { world, simulator, v1, v2, directory };
}

/**
 * pollMergeQueueV2 against a local server answering merge-queue-unknown-enums.json for the queue
 * list and `pullRequests(url)` for each pull-request page.
 */
async function pollAnswering(
  pullRequests: (url: string) => unknown,
  pullRequestIds?: boolean,
): Promise<MergeQueueSnapshot> {
  const queue: unknown = JSON.parse(
    readFileSync(
      new URL('../../trunk/fixtures/v2/merge-queue-unknown-enums.json', import.meta.url),
      'utf8',
    ),
  );
  const server = await startApiServer((req, res) => {
    const url = req.url ?? '';
    sendJson(
      res,
      200,
      url.startsWith('/v2/merge-queues?')
        ? { data: [queue], nextCursor: null, hasMore: false }
        : pullRequests(url),
    );
  }, '');
  const { client } = makeClient(server.origin, { token: undefined, apiKey: new Secret(API_KEY) });
  const v2 = new TrunkV2Client(client);
  const { snapshot } = await pollMergeQueueV2({
    reader: v2,
    directory: new V2QueueDirectory(v2, 30, () => TAKEN_AT),
    repoName: 'github.com/acme/web',
    branch: 'main',
    options: {},
    now: () => TAKEN_AT,
    ...(pullRequestIds === undefined ? {} : { pullRequestIds }),
  });
  return snapshot;
}

/** The two pages of pull-request-listed-twice-across-pages.json. */
function listedTwicePages() {
  return z
    .array(z.object({ data: z.array(z.record(z.string(), z.unknown())) }))
    .parse(
      JSON.parse(
        readFileSync(
          new URL(
            '../../trunk/fixtures/v2/pull-request-listed-twice-across-pages.json',
            import.meta.url,
          ),
          'utf8',
        ),
      ),
    );
}

/** The snapshot without what only one API can say. */
/**
 * What v1 and v2 both tell of a queue: v2 alone tells the host's not-mergeable reasons, v1 alone
 * whether impacted targets are missing (v2's list rows leave hasImpactedTargets out).
 */
function comparable(snapshot: MergeQueueSnapshot) {
  return {
    ...snapshot,
    notMergeableReasons: undefined,
    unknownBlockedReasons: undefined,
    pullRequests: [...snapshot.pullRequests]
      .sort((a, b) => a.number - b.number)
      // v1 has no pull request ids (v2 reads queue-entry histories by them).
      .map(({ pullRequestId: _v2Only, ...pr }) => ({
        ...pr,
        blockedReasons: pr.blockedReasons.filter((reason) => reason !== 'impacted_targets_missing'),
      })),
  };
}

describe('pollMergeQueueV2', () => {
  it('gives the snapshot a v1 poll gives for the same world, with GETs only', async () => {
    const { world, simulator, v1, v2, directory } = await simulatorWithKey();
    world.advance(600);
    let pullRequests = 0;
    for (const repository of world.repositories.slice(0, 2)) {
      const repoName = `${repository.host}/${repository.owner}/${repository.name}`;
      for (const branch of repository.branches) {
        const fromV1 = await pollMergeQueue({
          reader: v1,
          repo: repository,
          repoName,
          branch,
          pullRequestDetails: true,
          options: {},
          now: () => TAKEN_AT,
        });
        const fromV2 = await pollMergeQueueV2({
          reader: v2,
          directory,
          repoName,
          branch,
          options: {},
          now: () => TAKEN_AT,
        });
        expect(comparable(fromV2.snapshot)).toEqual(comparable(fromV1));
        expect(fromV2.snapshot.unknownBlockedReasons).toEqual(['impacted_targets_missing']);
        expect(fromV2.snapshot.pullRequests.flatMap((pr) => pr.blockedReasons)).not.toContain(
          'impacted_targets_missing',
        );
        pullRequests += fromV1.pullRequests.length;
        expect(fromV2.snapshot.notMergeableReasons?.get('conflict')).toBeGreaterThanOrEqual(0);
        // A pull request that nothing blocks holds the one shared empty list, not one of its own.
        for (const pr of [...fromV1.pullRequests, ...fromV2.snapshot.pullRequests]) {
          if (pr.blockedReasons.length === 0) expect(pr.blockedReasons).toBe(NO_ITEMS);
        }
      }
    }
    expect(pullRequests).toBeGreaterThan(5);
    const v2Calls = Object.entries(simulator.requestCountsByMethod()).filter(([call]) =>
      call.includes('/v2/'),
    );
    expect(v2Calls.length).toBeGreaterThan(0);
    expect(v2Calls.filter(([call]) => !call.startsWith('GET '))).toEqual([]);
  });

  it('reads the list of queues once for every queue polled in one interval', async () => {
    const { world, simulator, v2, directory } = await simulatorWithKey();
    const queues = world.repositories.flatMap((repository) =>
      repository.branches.map((branch) => ({
        repoName: `${repository.host}/${repository.owner}/${repository.name}`,
        branch,
      })),
    );
    expect(queues.length).toBeGreaterThan(2);
    simulator.resetRequestCounts();
    // Half at once (they share the read in progress), half one after the other (the list read is kept).
    const half = Math.ceil(queues.length / 2);
    await Promise.all(
      queues
        .slice(0, half)
        .map((queue) =>
          pollMergeQueueV2({ reader: v2, directory, ...queue, options: {}, now: () => TAKEN_AT }),
        ),
    );
    for (const queue of queues.slice(half)) {
      await pollMergeQueueV2({ reader: v2, directory, ...queue, options: {}, now: () => TAKEN_AT });
    }
    const counts = simulator.requestCounts();
    expect(counts['/v2/merge-queues']).toBe(1);
    expect(counts['/v2/merge-queues/{id}/pull-requests']).toBe(queues.length);
  });

  it('reads the list again once when the queue id answers 404, then polls the queue', async () => {
    const faults = new FaultPlan();
    const { world, simulator, v2, directory } = await simulatorWithKey({ faults });
    const repository = world.repositories[0];
    if (repository === undefined) throw new Error('no repository');
    const repoName = `${repository.host}/${repository.owner}/${repository.name}`;
    const branch = repository.branches[0] ?? 'main';
    faults.inject(
      'v2/merge-queues/{id}/pull-requests',
      {
        kind: 'status',
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({
          error: { code: 'MERGE_QUEUE_NOT_FOUND', message: 'no such queue' },
        }),
      },
      { times: 1 },
    );
    const poll = await pollMergeQueueV2({
      reader: v2,
      directory,
      repoName,
      branch,
      options: {},
      now: () => TAKEN_AT,
    });
    expect(poll.snapshot.repo).toBe(repoName);
    const counts = simulator.requestCounts();
    expect(counts['/v2/merge-queues']).toBe(2);
    expect(counts['/v2/merge-queues/{id}/pull-requests']).toBe(2);
  });

  it('names the repository and branch when Trunk lists no queue for them', async () => {
    const { v2, directory } = await simulatorWithKey();
    const error = await rejectionOf(
      pollMergeQueueV2({
        reader: v2,
        directory,
        repoName: 'github.com/acme/nowhere',
        branch: 'main',
        options: {},
        now: () => TAKEN_AT,
      }),
    );
    expect(String(error)).toContain(
      'Trunk API v2 lists no merge queue for github.com/acme/nowhere branch main',
    );
  });

  it.each([
    ['the later row second', [0, 1]],
    ['the later row first', [1, 0]],
  ])(
    'pull-request-listed-twice-across-pages.json: a PR listed on two pages counts once, as its row with the latest stateChangedAt (%s)',
    async (_name, order) => {
      const pages = listedTwicePages();
      const [first, second] = order.map((index) => pages[index]?.data ?? []);
      const snapshot = await pollAnswering((url) =>
        url.includes('cursor=')
          ? { data: second, nextCursor: null, hasMore: false }
          : { data: first, nextCursor: 'page-2', hasMore: true },
      );

      expect(snapshot.pullRequests.map(({ number, state }) => [number, state])).toEqual(
        order[0] === 0
          ? [
              [7, 'testing'],
              [8, 'testing'],
              [9, 'pending'],
            ]
          : [
              [7, 'testing'],
              [9, 'pending'],
              [8, 'testing'],
            ],
      );
    },
  );

  it('leaves out a row in a state the live read did not ask for (a concluded entry, from a list that ignores its filter)', async () => {
    // The live read asks `state=notReady,pending,testing,testsPassed,pendingFailure`: a `merged`
    // row is none of the queue's live entries.
    const page = listedTwicePages()[0]?.data ?? [];
    const [first] = page;
    const concluded = {
      ...first,
      number: 10,
      queueEntry: { ...(first?.queueEntry as object), state: 'merged' },
    };
    const snapshot = await pollAnswering(() => ({
      data: [...page, concluded],
      nextCursor: null,
      hasMore: false,
    }));
    expect(snapshot.pullRequests.map(({ number }) => number)).not.toContain(10);
    expect(snapshot.pullRequests.length).toBe(page.length);
  });

  it('leaves out a PR whose later row, on the next page of the same walk, has left the queue', async () => {
    // Page 1 lists PR 7 `testing` (stateChangedAt 10:00); before page 2 is asked it merges, and a
    // list that ignores its filter for the row it moved lists it again on page 2, `merged` at 10:05:
    // the later read says it is no live entry, so the queue holds PRs 8 and 9 only.
    const [first] = listedTwicePages();
    const seven = (state: string, at: string) => ({
      number: 7,
      queueEntry: { state, stateChangedAt: at },
    });
    const snapshot = await pollAnswering((url) =>
      url.includes('cursor=')
        ? {
            data: [seven('merged', '2026-11-24T10:05:00Z'), ...(first?.data.slice(1) ?? [])],
            nextCursor: null,
            hasMore: false,
          }
        : {
            data: [
              seven('testing', '2026-11-24T10:00:00Z'),
              {
                number: 9,
                queueEntry: { state: 'pending', stateChangedAt: '2026-11-24T09:45:00Z' },
              },
            ],
            nextCursor: 'page-2',
            hasMore: true,
          },
    );
    expect(snapshot.pullRequests.map(({ number, state }) => [number, state])).toEqual([
      [9, 'pending'],
      [8, 'testing'],
    ]);
  });

  it.each([
    ['read (the history on)', true, ['6f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b', undefined, undefined]],
    ['not kept (the history off)', false, [undefined, undefined, undefined]],
  ])(
    "a pull request's id is %s: lowercase, and neither an empty nor an absent one is kept",
    async (_name, pullRequestIds, expected) => {
      // QueuedPullRequest.id: "The pull request's id in this API — pass it to
      // `GET /v2/pull-requests/{id}`." (required there; absent or empty here is a row to tolerate).
      const rows = [
        { id: '6F1D2C3B-4A59-4E6F-8A7B-9C0D1E2F3A4B', number: 7 },
        { id: '', number: 8 },
        { number: 9 },
      ].map((row) => ({
        ...row,
        queueEntry: { state: 'pending', stateChangedAt: '2026-11-24T09:00:00Z' },
      }));
      const snapshot = await pollAnswering(
        () => ({ data: rows, nextCursor: null, hasMore: false }),
        pullRequestIds,
      );

      expect(snapshot.pullRequests.map(({ pullRequestId }) => pullRequestId)).toEqual(expected);
    },
  );
});
