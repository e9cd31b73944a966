// A poll's lookups, a few at a time: the bound that keeps one target from flooding the request
// queue every target shares.
import { afterEach, describe, expect, it } from 'vitest';
import { LOOKUPS_AT_A_TIME, lookupsAtATime, mapAtMost } from '../../src/poller/lookupFanOut.js';
import { pollMergeQueue } from '../../src/poller/v1/mergeQueuePoll.js';
import { pullRequestResponse, queueResponse } from '../trunk/fixtures.js';
import { REPO, cleanUp, makeClient, sendJson, startApiServer } from '../trunk/harness.js';

afterEach(cleanUp);

describe('mapAtMost', () => {
  it('keeps at most the given number of calls in progress and answers in the items’ order', async () => {
    let inProgress = 0;
    let most = 0;
    const answers = await mapAtMost([5, 1, 4, 2, 3, 0], 2, async (delay) => {
      inProgress += 1;
      most = Math.max(most, inProgress);
      await new Promise((resolve) => setTimeout(resolve, delay * 3));
      inProgress -= 1;
      return delay * 10;
    });
    expect(most).toBe(2);
    expect(answers).toEqual([50, 10, 40, 20, 30, 0]);
  });

  it('rejects with the first failure and starts no further call', async () => {
    const started: number[] = [];
    const result = mapAtMost([1, 2, 3, 4, 5, 6], 2, async (item) => {
      started.push(item);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (item === 2) throw new Error(`lookup ${item} failed`);
      return item;
    });
    await expect(result).rejects.toThrow('lookup 2 failed');
    await new Promise((resolve) => setTimeout(resolve, 30));
    // 1 and 2 started together; 3 took 1's place before 2 failed; nothing after.
    expect(started).toEqual([1, 2, 3]);
  });

  it('says once when the last call has started, before its answer, and at once for no items', async () => {
    const events: string[] = [];
    const answers = await mapAtMost(
      [1, 2, 3],
      2,
      async (item) => {
        events.push(`start ${item}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`answer ${item}`);
        return item;
      },
      () => events.push('all started'),
    );
    expect(answers).toEqual([1, 2, 3]);
    expect(events).toEqual([
      'start 1',
      'start 2',
      'answer 1',
      'start 3',
      'all started',
      'answer 2',
      'answer 3',
    ]);

    let none = 0;
    await mapAtMost(
      [],
      2,
      () => Promise.resolve(0),
      () => (none += 1),
    );
    expect(none).toBe(1);
  });
});

describe('lookupsAtATime', () => {
  it('is a few, and never every slot of the client', () => {
    expect(lookupsAtATime(128)).toBe(LOOKUPS_AT_A_TIME);
    expect(lookupsAtATime(4)).toBe(3);
    expect(lookupsAtATime(2)).toBe(1);
    expect(lookupsAtATime(1)).toBe(1);
  });
});

describe('a merge-queue poll of a long queue', () => {
  it('keeps at most LOOKUPS_AT_A_TIME lookups open at the API, however many slots the client has', async () => {
    const template = queueResponse();
    const item = (template.enqueuedPullRequests as Record<string, unknown>[])[0];
    const queue = {
      ...template,
      enqueuedPullRequests: Array.from({ length: 40 }, (_, index) => ({
        ...item,
        state: undefined,
        prNumber: 100 + index,
      })),
    };
    const server = await startApiServer((_req, res, _index, recorded) => {
      if (recorded.url.endsWith('/getQueue')) {
        sendJson(res, 200, queue);
        return;
      }
      const { pr } = JSON.parse(recorded.body) as { pr: { number: number } };
      // Held a little, so that lookups sent together are open together.
      setTimeout(() => {
        sendJson(res, 200, { ...pullRequestResponse(), prNumber: pr.number, state: 'pending' });
      }, 10);
    });
    const { client } = makeClient(server.apiUrl, { maxConcurrentRequests: 16 });

    const snapshot = await pollMergeQueue({
      reader: client,
      repo: REPO,
      repoName: 'github.com/acme/web',
      branch: 'main',
      pullRequestDetails: true,
      options: {},
      now: () => 1_767_261_600,
    });

    expect(snapshot.pullRequests).toHaveLength(40);
    expect(server.requests).toHaveLength(41);
    expect(server.maxInFlight()).toBe(LOOKUPS_AT_A_TIME);
  });
});
