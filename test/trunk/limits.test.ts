import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { pullRequestResponse, queueResponse } from './fixtures.js';
import {
  REPO,
  cleanUp,
  makeClient,
  recordingObserver,
  rejectionOf,
  sendJson,
  sendText,
  startApiServer,
} from './harness.js';

afterEach(cleanUp);

describe('TrunkClient global limits', () => {
  it('keeps at most maxConcurrentRequests in flight across calls', async () => {
    const server = await startApiServer((_req, res) => {
      setTimeout(() => {
        sendJson(res, 200, queueResponse());
      }, 80);
    });
    const { client } = makeClient(server.apiUrl, { maxConcurrentRequests: 2 });

    const calls = Array.from({ length: 8 }, (_, index) => client.getQueue(REPO, `b${index}`));
    await Promise.all(calls);

    expect(server.requests).toHaveLength(8);
    expect(server.maxInFlight()).toBe(2);
  });

  it('starts at most maxRequestsPerSecond requests in any second', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, queueResponse());
    });
    // When each attempt started, on the client's clock: its end less its duration, which the
    // client measures from the limiter's grant. The server's arrival times would add however late
    // a busy machine hands each request over.
    const starts: number[] = [];
    const { client } = makeClient(server.apiUrl, {
      maxConcurrentRequests: 8,
      maxRequestsPerSecond: 10,
      observer: {
        ...recordingObserver(),
        requestFinished: (_endpoint, _code, seconds) => {
          starts.push(performance.now() - seconds * 1000);
        },
      },
    });

    await Promise.all(Array.from({ length: 14 }, () => client.getQueue(REPO, 'main')));

    expect(server.requests).toHaveLength(14);
    starts.sort((a, b) => a - b);
    // The limiter reserves the 11th start after any start a second later; each is seen when its
    // timer has fired, which a busy machine may delay, so half a second is held: a client without
    // the limit starts all 14 within milliseconds.
    for (let index = 0; index + 10 < starts.length; index += 1) {
      expect((starts[index + 10] ?? 0) - (starts[index] ?? 0)).toBeGreaterThanOrEqual(500);
    }
  });

  it('holds back every call of the client after a 429 with Retry-After', async () => {
    const server = await startApiServer((req, res, index) => {
      if (index === 0) sendText(res, 429, 'rate limited', { 'retry-after': '1' });
      else if (req.url === '/v1/getQueue') sendJson(res, 200, queueResponse());
      else sendJson(res, 200, pullRequestResponse());
    });
    const { client, observer } = makeClient(server.apiUrl);

    const queue = client.getQueue(REPO, 'main');
    // The 429 has been answered and seen by the client (however busy the machine is).
    while (!observer.codes().includes('429')) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const pr = await client.getSubmittedPullRequest(REPO, 'main', 1);
    await queue;

    expect(pr?.state).toBe('testing');
    const limitedAt = server.requests[0]?.receivedAt ?? 0;
    const prRequest = server.requests.find((request) => request.url.endsWith('PullRequest'));
    expect((prRequest?.receivedAt ?? 0) - limitedAt).toBeGreaterThanOrEqual(1000 - 5);
  });

  it('holds back every call from the moment a 429 arrives, not once its body has been read', async () => {
    // A 429 whose body comes a byte at a time: its Retry-After speaks from its headers, and every
    // request sent while the body is read is one more to an organization over its limit.
    let limited = false;
    const server = await startApiServer((_req, res, _index, recorded) => {
      if (!recorded.body.includes('"targetBranch":"first"')) {
        sendJson(res, 200, queueResponse());
        return;
      }
      res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '30' });
      res.flushHeaders();
      limited = true;
      const dribble = setInterval(() => res.write('.'), 50);
      res.on('close', () => {
        clearInterval(dribble);
      });
    });
    const { client, observer } = makeClient(server.apiUrl, {
      timeoutSeconds: 1,
      retry: { maxAttempts: 1 },
    });

    const first = rejectionOf(client.getQueue(REPO, 'first', { deadlineMs: Date.now() + 2000 }));
    await expect.poll(() => limited).toBe(true);
    // The headers are on their way: a moment for the client to read them, well within the body.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await rejectionOf(
      client.getQueue(REPO, 'second', { deadlineMs: Date.now() + 2000 }),
    );

    expect(second).toMatchObject({ reason: 'rate_limited', attempts: 0 });
    expect(await first).toMatchObject({ status: 429 });
    expect(server.requests).toHaveLength(1);
    expect(observer.codes()).toEqual(['429']);
  });

  it('holds back only the queue-entry history after its 429, the one read Trunk limits apart', async () => {
    // trunk-api-v2.md: "GET /v2/pull-requests… (single-PR reads, history, estimate): 5 per second
    // per key, separately". A 429 there says that budget is spent, not the organization's.
    const server = await startApiServer((req, res) => {
      if (req.url?.startsWith('/v2/queue-entry-history')) {
        sendText(res, 429, 'Too Many Requests', { 'retry-after': '30' });
      } else sendJson(res, 200, { data: [], hasMore: false, nextCursor: null });
    }, '');
    const { client, observer } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_limits-test-key'),
    });
    const v2 = new TrunkV2Client(client);
    const soon = (): { deadlineMs: number } => ({ deadlineMs: Date.now() + 2000 });
    const history = (): Promise<unknown> =>
      v2.listQueueEntryHistory(['0b6f3c1e-7d42-4a51-9f0e-2c8d5b7a1e93'], soon());

    // Its 30 s wait would pass the deadline: the 429 is the read's answer, after one attempt.
    expect(await rejectionOf(history())).toMatchObject({ status: 429, attempts: 1 });
    // Every other read is sent at once.
    expect(await v2.listMergeQueues(soon())).toEqual([]);
    // The history is not asked again before Retry-After has passed, and the failure says why.
    const held = await rejectionOf(history());
    expect(held).toMatchObject({ reason: 'rate_limited', attempts: 0 });
    expect((held as Error).message).toContain(
      "not sent: Trunk's Retry-After holds every request of v2/queue-entry-history until",
    );
    expect(server.requests.map((request) => request.url.split('?')[0])).toEqual([
      '/v2/queue-entry-history',
      '/v2/merge-queues',
    ]);
    expect(observer.codes()).toEqual(['429', '200']);
  });

  it('keeps targets whose error answers hang mid-body out of the last slot, as targets that never answer', async () => {
    // The status and headers come at once, the body never ends: each attempt holds its slot for
    // the whole timeout, as one never answered does, so its target must not take every slot.
    const server = await startApiServer((_req, res, _index, recorded) => {
      if (recorded.body.includes('"targetBranch":"healthy"')) sendJson(res, 200, queueResponse());
      else {
        res.writeHead(503, { 'content-type': 'text/html' });
        res.write('<html><title>Service Unavailable</title>');
      }
    });
    const { client, observer } = makeClient(server.apiUrl, {
      maxConcurrentRequests: 2,
      timeoutSeconds: 0.5,
      retry: { maxAttempts: 1 },
    });
    const hanging = ['slow1', 'slow2'];
    await client.getQueue(REPO, 'healthy');
    // One at a time (the last slot is kept), each to its timeout: the 503 is what they answered.
    for (const branch of hanging) {
      expect(await rejectionOf(client.getQueue(REPO, branch))).toMatchObject({ status: 503 });
    }

    const held = hanging.map((branch) => rejectionOf(client.getQueue(REPO, branch)));
    // On the wire: the first of them at least (the other may wait for the slot kept back).
    await expect.poll(() => server.requests.length).toBeGreaterThanOrEqual(4);
    const started = Date.now();
    await client.getQueue(REPO, 'healthy');

    // The healthy queue's answer comes at once, not after a hanging target's 0.5 s timeout.
    expect(Date.now() - started).toBeLessThan(250);
    await Promise.all(held);
    expect(observer.codes()).toEqual(['200', '503', '503', '200', '503', '503']);
  });
});
